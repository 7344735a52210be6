import { beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { exampleSnapshot } from '../snapshot/testing-example.js';
import { memberIdHex } from '../util/member-id.js';
import { buildPlan } from './build.js';
import { parsePlan, readPlan } from './load.js';
import { allSteps, PLAN_FORMAT_VERSION, type Plan, type PlanContent, type Step, stepId } from './model.js';
import { renderPlanJson } from './render-json.js';
import { examplePlan, inputsFor, sealed, setLeader } from './testing-example.js';

let plan: Plan;
let text: string;
beforeAll(async () => {
  plan = await examplePlan();
  text = renderPlanJson(plan);
});

/** plan.json parsed, edited by hand, written back. */
function edited(edit: (doc: Plan) => void): string {
  const doc = JSON.parse(text) as Plan;
  edit(doc);
  return JSON.stringify(doc, null, 2);
}

/** The same edit, then sealed again: a digest that matches, as a buggy ferry would write it. */
function resealed(edit: (doc: Plan) => void): string {
  const doc = JSON.parse(text) as Plan;
  edit(doc);
  return renderPlanJson(sealed(doc));
}

function refusal(t: string): FerryError {
  try {
    parsePlan(t, 'plan.json');
  } catch (err) {
    expect(err).toBeInstanceOf(FerryError);
    const fe = err as FerryError;
    expect(fe.exitCode).toBe(2);
    expect(fe.location?.file).toBe('plan.json');
    expect(fe.remediation).toMatch(/ferry plan .*-o plan\.json/);
    expect(fe.remediation).toContain('never edit plan.json by hand');
    return fe;
  }
  throw new Error('the plan loaded');
}

/** Where a step is: its index in phase 2, its id. */
function inPhase2(doc: Pick<Plan, 'phases'>, pick: (s: Step) => boolean): { j: number; id: string } {
  const j = doc.phases[2]!.steps.findIndex(pick);
  expect(j).toBeGreaterThanOrEqual(0);
  return { j, id: doc.phases[2]!.steps[j]!.id };
}

const removeCp1 = (s: Step) => s.kind === 'etcd-remove-member' && s.subject === 'cp-1';

/** Numbers a phase's steps again after a move, as buildPlan would (index, id). */
function renumber(doc: Plan, phase: number): void {
  const steps = doc.phases[phase]!.steps;
  const width = Math.max(2, String(steps.length).length);
  steps.forEach((s, i) => {
    s.index = i + 1;
    s.id = stepId(s.phase, s.index, width, s.kind, s.subject);
  });
}

describe('plan.json carries its digest', () => {
  it('an untouched plan loads as it was built, with its digest and per-step fingerprints', () => {
    const loaded = parsePlan(text, 'plan.json');
    expect(loaded).toEqual(plan);
    expect(loaded.integrity.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(loaded.integrity.steps.map((s) => s.id)).toEqual(allSteps(plan).map((s) => s.id));
    // Formatting is not content: the same plan written another way still loads.
    expect(parsePlan(JSON.stringify(JSON.parse(text)), 'plan.json')).toEqual(plan);
  });

  it('a plan cut short names the line where its JSON breaks', () => {
    const lines = text.split('\n');
    const e = (() => {
      try {
        parsePlan(lines.slice(0, 40).join('\n'), 'plan.json');
      } catch (err) {
        return err as FerryError;
      }
      throw new Error('the plan loaded');
    })();
    expect(e.exitCode).toBe(2);
    expect(e.location?.file).toBe('plan.json');
    expect(e.message).toMatch(/^malformed JSON/);
    expect(e.location?.line).toBe(40);
  });

  it('the digest covers the whole plan, createdAt too', () => {
    const e = refusal(
      edited((d) => {
        d.createdAt = '2027-01-01T00:00:00.000Z';
      }),
    );
    expect(e.message).toContain('createdAt changed (now "2027-01-01T00:00:00.000Z")');
    expect(e.location?.field).toBe('createdAt');
  });

  it('refuses a plan without a digest: an older ferry wrote it, or it was edited', () => {
    const e = refusal(
      edited((d) => {
        delete (d as Partial<Plan>).integrity;
      }),
    );
    expect(e.message).toContain('no integrity record');
    expect(e.message).toContain('older ferry');
  });

  it('refuses a plan whose integrity record was edited, even when the content is untouched', () => {
    let e = refusal(
      edited((d) => {
        d.integrity.steps[0]!.fields['title'] = '000000000000';
      }),
    );
    expect(e.message).toContain('integrity record was edited');
    e = refusal(
      edited((d) => {
        d.integrity.digest = `sha256:${'0'.repeat(64)}`;
      }),
    );
    expect(e.message).toContain('integrity.digest was changed');
  });
});

describe('a hand edit is refused, naming what differs', () => {
  it('steps reordered', () => {
    const a = plan.phases[2]!.steps[5]!.id;
    const b = plan.phases[2]!.steps[6]!.id;
    const e = refusal(
      edited((d) => {
        const s = d.phases[2]!.steps;
        [s[5], s[6]] = [s[6]!, s[5]!];
      }),
    );
    expect(e.message).toContain('the plan was changed after ferry plan wrote it');
    expect(e.message).toContain(
      `step ${b} moved: now phases[2].steps[5], after ${plan.phases[2]!.steps[4]!.id}`,
    );
    expect(e.message).toContain(`it was phases[2].steps[6], after ${a}`);
  });

  it('a step removed', () => {
    const { j, id } = inPhase2(plan, (s) => s.kind === 'drain' && s.subject === 'cp-1');
    const e = refusal(
      edited((d) => {
        d.phases[2]!.steps.splice(j, 1);
      }),
    );
    expect(e.message).toContain(`step ${id} removed (it was phases[2].steps[${j}])`);
  });

  it('a step added', () => {
    const e = refusal(
      edited((d) => {
        d.phases[5]!.steps.push({ ...d.phases[5]!.steps[0]!, id: '5.99.manual.cluster' });
      }),
    );
    expect(e.message).toContain('step 5.99.manual.cluster added at phases[5].steps[');
  });

  it('a gate step deleted', () => {
    const e = refusal(
      edited((d) => {
        d.phases[2]!.steps.shift();
      }),
    );
    expect(plan.phases[2]!.steps[0]!.kind).toBe('gate');
    expect(e.message).toContain(`step ${plan.phases[2]!.steps[0]!.id} removed`);
  });

  it('destructive flipped', () => {
    const { j, id } = inPhase2(plan, removeCp1);
    const e = refusal(
      edited((d) => {
        d.phases[2]!.steps[j]!.destructive = false;
      }),
    );
    expect(e.message).toContain(`step ${id} (phases[2].steps[${j}]) changed: destructive (true → false)`);
    expect(e.location?.field).toBe(`phases[2].steps[${j}].destructive`);
  });

  it('a negative timeout', () => {
    const { j, id } = inPhase2(plan, (s) => s.kind === 'drain');
    const e = refusal(
      edited((d) => {
        d.phases[2]!.steps[j]!.timeoutSeconds = -5;
      }),
    );
    expect(e.message).toContain(`step ${id} (phases[2].steps[${j}]) changed: timeoutSeconds (now -5)`);
    // ... and what is wrong with it.
    expect(e.message).toContain(
      `phases[2].steps[${j}].timeoutSeconds (${id}): must be a number of seconds greater than 0; got -5`,
    );
  });

  it('a timeout as a string', () => {
    const { j, id } = inPhase2(plan, (s) => s.kind === 'drain');
    const e = refusal(
      edited((d) => {
        (d.phases[2]!.steps[j] as { timeoutSeconds: unknown }).timeoutSeconds = '900';
      }),
    );
    expect(e.message).toContain(`step ${id} (phases[2].steps[${j}]) changed: timeoutSeconds (900 → "900")`);
  });

  it('an unknown provisioner', () => {
    const e = refusal(
      edited((d) => {
        (d as { provisioner: string }).provisioner = 'magic';
      }),
    );
    expect(e.message).toContain('provisioner changed (now "magic")');
    expect(e.message).toContain('provisioner: must be one of manual, exec, capi; got "magic"');
  });

  it('an etcd member id as a JSON number', () => {
    const { j, id } = inPhase2(plan, removeCp1);
    const step = plan.phases[2]!.steps[j]!;
    const memberId =
      step.kind === 'etcd-remove-member' && step.params.member.kind === 'kubeadm'
        ? step.params.member.id
        : '';
    expect(memberId).toMatch(/^\d{20}$/);
    // The number as the file would hold it (JSON.stringify of a JS number has already lost digits).
    const t = edited((d) => {
      const s = d.phases[2]!.steps[j]!;
      if (s.kind === 'etcd-remove-member' && s.params.member.kind === 'kubeadm')
        s.params.member.id = 'MEMBER-ID';
    }).replace('"MEMBER-ID"', memberId);
    const e = refusal(t);
    expect(e.message).toContain(`step ${id} (phases[2].steps[${j}]) changed: params`);
    expect(e.message).toContain(
      `phases[2].steps[${j}].params.member.id (${id}): an etcd member id must be a string of decimal digits, not a JSON number`,
    );
    // Everywhere at once (a jq tonumber): said once, with the places.
    const everywhere = refusal(text.replaceAll(`"id": "${memberId}"`, `"id": ${memberId}`));
    expect(everywhere.message).toMatch(
      /an etcd member id must be a string of decimal digits, not a JSON number.*: at controlPlanes\[0\]\.member\.id, .*, and \d+ more places/,
    );
  });
});

describe('a plan with a fresh digest is still checked: shape', () => {
  it('a formatVersion other than the one this ferry writes, even re-sealed', () => {
    expect(plan.formatVersion).toBe(PLAN_FORMAT_VERSION);
    for (const v of [PLAN_FORMAT_VERSION - 1, PLAN_FORMAT_VERSION + 1, String(PLAN_FORMAT_VERSION)]) {
      const t = resealed((d) => {
        (d as { formatVersion: unknown }).formatVersion = v;
      });
      try {
        parsePlan(t, 'plan.json');
        expect.unreachable(`formatVersion ${JSON.stringify(v)} loaded`);
      } catch (err) {
        expect((err as FerryError).exitCode).toBe(2);
        expect((err as FerryError).location).toEqual({ file: 'plan.json', field: 'formatVersion' });
      }
    }
  });

  it('a negative timeout, naming the field and the step', () => {
    const { j, id } = inPhase2(plan, (s) => s.kind === 'drain');
    const e = refusal(
      resealed((d) => {
        d.phases[2]!.steps[j]!.timeoutSeconds = -5;
      }),
    );
    expect(e.message).toContain('the plan breaks a rule ferry run relies on');
    expect(e.message).toContain(`phases[2].steps[${j}].timeoutSeconds (${id}): must be a number of seconds`);
    expect(e.location?.field).toBe(`phases[2].steps[${j}].timeoutSeconds`);
    expect(e.remediation).toContain('ferry bug');
  });

  it('a timeout as a string', () => {
    const { j } = inPhase2(plan, (s) => s.kind === 'drain');
    const e = refusal(
      resealed((d) => {
        (d.phases[2]!.steps[j] as { timeoutSeconds: unknown }).timeoutSeconds = '900';
      }),
    );
    expect(e.message).toContain('got "900"');
    expect(e.location?.field).toBe(`phases[2].steps[${j}].timeoutSeconds`);
  });

  it('an unknown provisioner (never mistaken for manual)', () => {
    const e = refusal(
      resealed((d) => {
        (d as { provisioner: string }).provisioner = 'magic';
      }),
    );
    expect(e.location?.field).toBe('provisioner');
    expect(e.message).toContain('must be one of manual, exec, capi; got "magic"');
  });

  it('an etcd member id as a JSON number, naming the step and the field', () => {
    const { j, id } = inPhase2(plan, removeCp1);
    const e = refusal(
      resealed((d) => {
        const s = d.phases[2]!.steps[j]!;
        if (s.kind === 'etcd-remove-member' && s.params.member.kind === 'kubeadm')
          (s.params.member as { id: unknown }).id = Number(s.params.member.id);
      }),
    );
    expect(e.location?.field).toBe(`phases[2].steps[${j}].params.member.id`);
    expect(e.message).toContain(`(${id}): an etcd member id must be a string of decimal digits`);
    // The number no longer names the member: 13872586097927091956 reads as 13872586097927092000.
    expect(e.message).toContain('reads as 13872586097927092000');
  });

  it('a step without its action, and an idempotency check of the wrong type', () => {
    const { j, id } = inPhase2(plan, (s) => s.kind === 'cordon');
    const e = refusal(
      resealed((d) => {
        const s = d.phases[2]!.steps[j] as unknown as Record<string, unknown>;
        delete s['action'];
        s['idempotencyCheck'] = 'redo';
      }),
    );
    expect(e.message).toContain(`phases[2].steps[${j}].action (${id}): missing`);
    expect(e.message).toContain(`phases[2].steps[${j}].idempotencyCheck (${id}): must be an object`);
  });

  it('a member id and its hex that name two members', () => {
    const { j } = inPhase2(plan, removeCp1);
    const e = refusal(
      resealed((d) => {
        const s = d.phases[2]!.steps[j]!;
        if (s.kind === 'etcd-remove-member' && s.params.member.kind === 'kubeadm')
          s.params.member.idHex = 'abc';
      }),
    );
    expect(e.location?.field).toBe(`phases[2].steps[${j}].params.member.idHex`);
  });
});

describe('a plan with a fresh digest is still checked: invariants', () => {
  it('a destructive step moved before its gate', () => {
    const { j } = inPhase2(plan, removeCp1);
    const e = refusal(
      resealed((d) => {
        const [remove] = d.phases[2]!.steps.splice(j, 1);
        d.phases[2]!.steps.unshift(remove!);
        renumber(d, 2);
      }),
    );
    expect(e.message).toMatch(
      /phases\[2\]\.steps\[0\] \(2\.01\.etcd-remove-member\.cp-1\): destructive step before the gate of the swap of cp-1 \(2\.02\.gate\.cp-1\)/,
    );
    expect(e.location?.field).toBe('phases[2].steps[0]');
  });

  it('a gate step deleted', () => {
    const e = refusal(
      resealed((d) => {
        d.phases[2]!.steps.shift();
        renumber(d, 2);
      }),
    );
    expect(e.message).toMatch(
      /the swap of cp-1 has no gate step: its destructive steps .*etcd-remove-member\.cp-1/,
    );
  });

  it('destructive flipped on a step that cannot be undone', () => {
    const { j, id } = inPhase2(plan, removeCp1);
    const e = refusal(
      resealed((d) => {
        d.phases[2]!.steps[j]!.destructive = false;
      }),
    );
    expect(e.message).toContain(
      `phases[2].steps[${j}].destructive (${id}): must be true: etcd-remove-member cannot be undone`,
    );
  });

  it('steps reordered without renumbering', () => {
    const e = refusal(
      resealed((d) => {
        const s = d.phases[2]!.steps;
        [s[5], s[6]] = [s[6]!, s[5]!];
      }),
    );
    expect(e.message).toContain('phases[2].steps[5].index');
    expect(e.message).toContain('steps are numbered 1, 2, 3… in run order; got 7');
  });

  it('two control planes at once', () => {
    const e = refusal(
      resealed((d) => {
        const steps = d.phases[2]!.steps;
        const k = steps.findIndex((s) => s.subject === 'cp-2' && s.kind === 'provision');
        const [provision] = steps.splice(k, 1);
        steps.splice(5, 0, provision!);
        renumber(d, 2);
      }),
    );
    expect(e.message).toContain('control planes are replaced one at a time: the steps of cp-1 are split');
  });

  it('a removed member that is not the swap’s own', () => {
    const { j } = inPhase2(plan, removeCp1);
    const other = plan.controlPlanes[1]!.member!;
    const e = refusal(
      resealed((d) => {
        const s = d.phases[2]!.steps[j]!;
        if (s.kind === 'etcd-remove-member' && s.params.member.kind === 'kubeadm') {
          s.params.member.id = other.id;
          s.params.member.idHex = memberIdHex(other.id);
        }
      }),
    );
    expect(e.message).toContain('the swap of cp-1 removes its own etcd member only');
  });

  it('surge: the old member removed before the new one is a voter', () => {
    const e = refusal(
      resealed((d) => {
        const steps = d.phases[2]!.steps;
        const voter = steps.findIndex((s) => s.kind === 'wait-member-voter' && s.subject === 'cp-1');
        const remove = steps.findIndex(removeCp1);
        const [r] = steps.splice(remove, 1);
        steps.splice(voter, 0, r!);
        renumber(d, 2);
      }),
    );
    expect(e.message).toContain('surge: in the swap of cp-1 the new member is a voter');
  });

  it('a destructive after-care step ferry would do by itself', () => {
    const j = plan.phases[5]!.steps.findIndex((s) => s.kind === 'wipe-pki-copies');
    const e = refusal(
      resealed((d) => {
        d.phases[5]!.steps[j]!.action.performer = 'ferry';
      }),
    );
    expect(e.location?.field).toBe(`phases[5].steps[${j}].action.performer`);
  });

  it('phases out of order', () => {
    const e = refusal(
      resealed((d) => {
        [d.phases[2], d.phases[3]] = [d.phases[3]!, d.phases[2]!];
      }),
    );
    expect(e.message).toContain('phases[2].id: must be 2: phases run in order 0 to 5; got 3');
  });
});

describe('every plan buildPlan makes loads', () => {
  const variants: [string, () => Promise<PlanContent>][] = [
    ['replace', async () => buildPlan(inputsFor(await exampleSnapshot(), { strategy: 'replace' }))],
    ['capi', async () => buildPlan(inputsFor(await exampleSnapshot(), { target: { provisioner: 'capi' } }))],
    ['exec', async () => buildPlan(inputsFor(await exampleSnapshot(), { target: { provisioner: 'exec' } }))],
    [
      'leader cp-1, batches of up to 3 workers, 2 surge workers, --surge-replicas',
      async () => {
        const snap = await exampleSnapshot();
        setLeader(snap, 'cp-1');
        return buildPlan({
          ...inputsFor(snap),
          options: { maxUnavailable: { kind: 'count', nodes: 3 }, surgeWorkers: 2, surgeReplicas: true },
        });
      },
    ],
    [
      'replace without a load balancer (the endpoint is cp-1’s own address)',
      async () => {
        const snap = await exampleSnapshot();
        snap.kubeadm.clusterConfiguration!.controlPlaneEndpoint = '10.20.0.11:6443';
        for (const cm of snap.resources.configmaps) {
          if (cm.metadata.name === 'cluster-info' && typeof cm['data']?.kubeconfig === 'string')
            cm['data'].kubeconfig = cm['data'].kubeconfig.replace('k8s-api.lab.example', '10.20.0.11');
        }
        return buildPlan(inputsFor(snap, { strategy: 'replace' }));
      },
    ],
    [
      'two voters, surge',
      async () => {
        const snap = await exampleSnapshot();
        snap.etcd!.members = snap.etcd!.members.filter((m) => m.name !== 'cp-3');
        snap.etcd!.endpoints = snap.etcd!.endpoints.filter((e) => !e.endpoint.includes('10.20.0.13'));
        return buildPlan(inputsFor(snap));
      },
    ],
  ];
  it.each(variants)('%s', async (_, make) => {
    const p = await make();
    expect(parsePlan(renderPlanJson(p as Plan), 'plan.json')).toEqual(p);
  });
});

describe('what the loader says before and beyond the digest', () => {
  it('a file that is not a plan object is refused by its kind, with how to get a plan', () => {
    for (const t of ['[]', 'null', '42', '"FerryPlan"', '{"kind":"Snapshot"}', '{}']) {
      try {
        parsePlan(t, 'plan.json');
        expect.unreachable(`${t} loaded`);
      } catch (err) {
        const fe = err as FerryError;
        expect(fe).toBeInstanceOf(FerryError);
        expect(fe.exitCode).toBe(2);
        expect(fe.message).toBe('not a ferry plan (kind is not FerryPlan)');
        expect(fe.location).toEqual({ file: 'plan.json', field: 'kind' });
        expect(fe.remediation).toContain('ferry plan ... -o plan.json');
      }
    }
  });

  it('a plan of another format says which it is and which this ferry reads', () => {
    try {
      parsePlan(
        edited((d) => {
          (d as { formatVersion: unknown }).formatVersion = 99;
        }),
        'plan.json',
      );
      expect.unreachable('loaded');
    } catch (err) {
      expect((err as FerryError).message).toBe(
        `plan format 99 is not the format ${PLAN_FORMAT_VERSION} this ferry reads`,
      );
    }
  });

  it('a long list of differences shows 15 and counts the rest', () => {
    const steps = allSteps(plan);
    expect(steps.length).toBeGreaterThan(20);
    const e = refusal(
      edited((d) => {
        for (const s of allSteps(d).slice(0, 20)) s.title = `${s.title} (edited)`;
      }),
    );
    expect(e.message.split('\n  - ')).toHaveLength(16);
    expect(e.message).toMatch(/\n {2}… and 5 more$/);
    expect(e.message).toContain(`step ${steps[0]!.id}`);
    expect(e.message).not.toContain(`step ${steps[15]!.id} `);
    // Exactly 15: nothing counted.
    const fifteen = refusal(
      edited((d) => {
        for (const s of allSteps(d).slice(0, 15)) s.title = `${s.title} (edited)`;
      }),
    );
    expect(fifteen.message.split('\n  - ')).toHaveLength(16);
    expect(fifteen.message).not.toContain('more');
  });

  it('an edit that also breaks a rule says both, the difference first', () => {
    const { j } = inPhase2(plan, (s) => s.kind === 'drain');
    const e = refusal(
      edited((d) => {
        d.phases[2]!.steps[j]!.timeoutSeconds = -5;
      }),
    );
    expect(e.message.startsWith('the plan was changed after ferry plan wrote it')).toBe(true);
    expect(e.message).toContain('\nand it breaks rules ferry run relies on:\n  - phases[2]');
    expect(e.location?.field).toBe(`phases[2].steps[${j}].timeoutSeconds`);
    expect(e.remediation).not.toContain('ferry bug');
    // An edit that breaks no rule says only what differs.
    const titled = refusal(
      edited((d) => {
        d.phases[2]!.steps[j]!.title = 'x';
      }),
    );
    expect(titled.message).not.toContain('breaks rules');
  });

  it('rules broken in several places are counted; one message in many places is said once with three of them', () => {
    const drains = [0, 1, 2, 3];
    const negative = (n: number) =>
      refusal(
        resealed((d) => {
          for (const j of drains.slice(0, n)) d.phases[2]!.steps[j]!.timeoutSeconds = -5;
        }),
      );
    const two = negative(2).message;
    expect(two).toContain('the plan breaks 2 rules ferry run relies on:');
    const at = (j: number) => `phases[2].steps[${j}].timeoutSeconds (${plan.phases[2]!.steps[j]!.id})`;
    expect(two).toContain(`\n  - must be a number of seconds greater than 0; got -5: at ${at(0)}, ${at(1)}`);
    expect(two.endsWith(at(1))).toBe(true);
    const three = negative(3).message;
    expect(three).not.toContain('more places');
    const four = negative(4).message;
    expect(four).toContain('the plan breaks 4 rules');
    // Three places named, the fourth counted, never listed.
    expect(four.endsWith(`got -5: at ${at(0)}, ${at(1)}, ${at(2)}, and 1 more places`)).toBe(true);
    expect(four).not.toContain(at(3));
  });
});

describe('readPlan', () => {
  it('reads a plan file; a missing one is named as the user typed it', async () => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(join(tmpdir(), 'ferry-readplan-'));
    try {
      await writeFile(join(dir, 'plan.json'), text);
      expect(await readPlan(join(dir, 'plan.json'))).toEqual(plan);
      const e = await readPlan(join(dir, 'gone.json'), 'gone.json').then(
        () => expect.unreachable('a missing plan loaded'),
        (err: unknown) => err as FerryError,
      );
      expect(e.exitCode).toBe(2);
      expect(e.message).toContain('gone.json');
      expect(e.message).not.toContain(dir);
      // A bad plan is located at the file read.
      await writeFile(join(dir, 'bad.json'), '[]');
      const bad = await readPlan(join(dir, 'bad.json'), 'bad.json').catch(
        (err: unknown) => err as FerryError,
      );
      expect((bad as FerryError).location?.file).toBe(join(dir, 'bad.json'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
