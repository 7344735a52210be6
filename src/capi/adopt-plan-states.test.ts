/**
 * Adoption's plan against the management cluster's states, one fact at a time: from a converged
 * cluster (every step's effect there, so a second run does nothing), each step turns not done when
 * the one fact it reads is taken away, and only that step; the refusals both ways, at the edge
 * where they must stop and just inside it where they must not.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../snapshot/model.js';
import type { MintResult } from './adopt-kubeconfig.js';
import {
  type AdoptPlan,
  type AdoptStep,
  describeStep,
  planAdoption,
  RECONCILE_ANNOTATION,
  statusHas,
} from './adopt-plan.js';
import { labKitObjects } from './testing-kit.js';

const KIT = labKitObjects();
const CLUSTER_UID = 'cluster-uid';
const PAUSED = 'cluster.x-k8s.io/paused';
const SKIP = 'machineset.cluster.x-k8s.io/skip-preflight-checks';

const clone = <T>(o: T): T => structuredClone(o);
const byName = (live: KubeObject[], kind: string, name?: string) =>
  live.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name))!;

/** The management cluster once adoption has run to the end (kubeadm members gone). */
function converged(): KubeObject[] {
  const live = KIT.map(clone);
  const cluster = byName(live, 'Cluster');
  cluster.metadata.uid = CLUSTER_UID;
  const tcp = byName(live, 'TalosControlPlane');
  tcp.metadata.resourceVersion = '42';
  // The kit's TalosControlPlane is paused; unpaused is where adoption ends.
  if (tcp.metadata.annotations) delete tcp.metadata.annotations[PAUSED];
  tcp.status = { bootstrapped: true, initialized: true, ready: true };
  cluster.spec = { ...cluster.spec, paused: false };
  cluster.metadata.annotations = { [RECONCILE_ANNOTATION]: '42' };
  const owner = [{ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', name: 'lab', uid: CLUSTER_UID }];
  for (const s of live.filter((o) => o.kind === 'Secret')) s.metadata.ownerReferences = clone(owner);
  live.push(
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lab' } },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'lab-kubeconfig', namespace: 'lab', ownerReferences: clone(owner) },
    },
  );
  return live;
}

function plan(
  live: KubeObject[],
  remain = false,
  mint?: MintResult,
  kit = KIT,
): AdoptPlan & { kind: 'plan' } {
  const p = planAdoption(kit, live, remain, mint ? { kubeconfig: mint } : {});
  if (p.kind !== 'plan') throw new Error(`refused: ${p.reason}`);
  return p;
}

const label = (s: AdoptStep) =>
  s.kind === 'create' ? `create ${s.object.kind} ${s.object.metadata.name}` : s.kind;
/** The steps not done, by label. */
const pending = (p: { steps: { step: AdoptStep; done: boolean }[] }) =>
  p.steps.filter((s) => !s.done).map((s) => label(s.step));
const stepOf = <K extends AdoptStep['kind']>(p: { steps: { step: AdoptStep }[] }, kind: K) =>
  p.steps.find((s) => s.step.kind === kind)!.step as Extract<AdoptStep, { kind: K }>;

describe('planAdoption, converged', () => {
  it('a cluster that shows every effect has nothing to do; each step reopens when its own fact goes', () => {
    const full = plan(converged());
    expect(pending(full)).toEqual([]);
    expect(full.nothingToDo).toBe(true);
    expect(full.steps.at(-1)!.step.kind).toBe('unpause-tcp');

    // Every kit object the plan creates: gone live, only its create step reopens.
    for (const o of KIT) {
      const live = converged().filter((x) => !(x.kind === o.kind && x.metadata.name === o.metadata.name));
      const p = plan(live);
      const expected =
        o.kind === 'Secret'
          ? [`create Secret ${o.metadata.name}`, 'own-secrets']
          : o.kind === 'Cluster'
            ? // No Cluster live: not unpaused, no request seen, and ownership by any uid.
              ['create Cluster lab', 'unpause-cluster', 'touch-cluster']
            : o.kind === 'TalosControlPlane'
              ? [
                  'create TalosControlPlane lab-control-plane',
                  'tcp-bootstrapped',
                  'tcp-initialized',
                  'touch-cluster',
                  'unpause-tcp',
                ]
              : [`create ${o.kind} ${o.metadata.name}`];
      expect(pending(p), `${o.kind} ${o.metadata.name} missing`).toEqual(expected);
      expect(p.nothingToDo).toBe(false);
    }
  });

  it('the namespace is there when a Namespace object or any object in it is listed, not another namespace', () => {
    const mint: MintResult = {
      kind: 'minted',
      secret: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'lab-kubeconfig', namespace: 'lab' } },
      notAfter: new Date(0),
    };
    const ns = (live: KubeObject[]) => plan(live, true, mint).steps[0]!;
    expect(ns(converged())).toMatchObject({ step: { kind: 'namespace', name: 'lab' }, done: true });
    expect(ns(converged().filter((o) => o.kind !== 'Namespace')).done).toBe(true);
    expect(ns([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lab' } }]).done).toBe(true);
    const elsewhere: KubeObject[] = [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'other' } },
    ];
    expect(ns(elsewhere).done).toBe(false);
    expect(ns([]).done).toBe(false);
    expect(
      ns([...elsewhere, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y', namespace: 'lab' } }])
        .done,
    ).toBe(true);
  });

  it('the Cluster is unpaused once it is live and its spec does not say paused: true', () => {
    const unpaused = (edit: (c: KubeObject) => void) => {
      const live = converged();
      edit(byName(live, 'Cluster'));
      return plan(live).steps.find((s) => s.step.kind === 'unpause-cluster')!.done;
    };
    expect(unpaused(() => {})).toBe(true);
    expect(unpaused((c) => (c.spec = { ...c.spec, paused: true }))).toBe(false);
    expect(unpaused((c) => (c.spec = { ...c.spec, paused: 'true' }))).toBe(true);
    expect(
      unpaused((c) => {
        delete c.spec;
      }),
    ).toBe(true);
  });

  it('the TalosControlPlane is unpaused once it is live without the paused annotation; while kubeadm members remain, not at all', () => {
    const step = (edit: (t: KubeObject) => void, remain = false) => {
      const live = converged();
      edit(byName(live, 'TalosControlPlane'));
      return plan(live, remain).steps.find((s) => s.step.kind === 'unpause-tcp');
    };
    expect(step(() => {})!.done).toBe(true);
    expect(step((t) => (t.metadata.annotations = { [PAUSED]: 'true' }))!.done).toBe(false);
    expect(step((t) => (t.metadata.annotations = { [PAUSED]: '' }))!.done).toBe(false);
    expect(
      step((t) => {
        delete t.metadata.annotations;
      })!.done,
    ).toBe(true);
    expect(step((t) => (t.metadata.annotations = { other: 'x' }))!.done).toBe(true);
    expect(step(() => {}, true)).toBeUndefined();
  });

  it("the Cluster's touch needs the status there and the annotation equal to the TalosControlPlane's version", () => {
    const done = (edit: (tcp: KubeObject, cluster: KubeObject) => void) => {
      const live = converged();
      edit(byName(live, 'TalosControlPlane'), byName(live, 'Cluster'));
      return plan(live).steps.find((s) => s.step.kind === 'touch-cluster')!.done;
    };
    expect(done(() => {})).toBe(true);
    // The request names the version, but the status it was meant to carry is not there.
    expect(done((t) => (t.status = { bootstrapped: true }))).toBe(false);
    // Neither a version nor a request: nothing says the Cluster saw it.
    expect(
      done((t, c) => {
        delete t.metadata.resourceVersion;
        delete c.metadata.annotations;
      }),
    ).toBe(false);
    // The Cluster already reports the result: done whatever the annotation says.
    expect(
      done((_t, c) => {
        delete c.metadata.annotations;
        c.status = { conditions: [{ type: 'ControlPlaneInitialized', status: 'True' }] };
      }),
    ).toBe(true);
    // No Cluster live, TalosControlPlane initialized: asked for, not done (and no crash).
    const noCluster = converged().filter((o) => o.kind !== 'Cluster');
    expect(plan(noCluster).steps.find((s) => s.step.kind === 'touch-cluster')!.done).toBe(false);
  });
});

describe('planAdoption, ownership of the Secrets', () => {
  const ownDone = (edit: (live: KubeObject[]) => void) => {
    const live = converged();
    edit(live);
    return plan(live).steps.find((s) => s.step.kind === 'own-secrets')!;
  };
  const ownerOf = (live: KubeObject[], name: string) => byName(live, 'Secret', name).metadata;

  it('a Secret is owned by a reference of kind Cluster, the Cluster’s name and, when the Cluster has a uid, that uid', () => {
    expect(ownDone(() => {}).done).toBe(true);
    const ref = (r: Record<string, string>) => (live: KubeObject[]) => {
      ownerOf(live, 'lab-ca').ownerReferences = [
        { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', name: 'lab', uid: CLUSTER_UID, ...r },
      ];
    };
    expect(ownDone(ref({ kind: 'TalosControlPlane' })).done).toBe(false);
    expect(ownDone(ref({ name: 'other' })).done).toBe(false);
    expect(ownDone(ref({ uid: 'stale-uid' })).done).toBe(false);
    // A live Cluster without a uid (a dry-run view): the name and kind are enough.
    expect(
      ownDone((live) => {
        ref({ uid: 'any' })(live);
        delete byName(live, 'Cluster').metadata.uid;
      }).done,
    ).toBe(true);
    // One Secret of several unowned: not done.
    expect(
      ownDone((live) => {
        delete ownerOf(live, 'lab-talos').ownerReferences;
      }).done,
    ).toBe(false);
    expect(
      ownDone((live) => {
        ownerOf(live, 'lab-talos').ownerReferences = [];
      }).done,
    ).toBe(false);
    // An owner among others counts.
    expect(
      ownDone((live) => {
        const m = ownerOf(live, 'lab-ca');
        m.ownerReferences = [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'y' },
          ...(m.ownerReferences ?? []),
        ];
      }).done,
    ).toBe(true);
  });

  it("the kubeconfig Secret is ferry's to own when it has no owner; one another controller owns stays out", () => {
    const names = (edit: (live: KubeObject[]) => void) => ownDone(edit).step;
    expect(names(() => {})).toMatchObject({ secrets: ['lab-ca', 'lab-talos'] });
    expect(
      names((live) => {
        delete ownerOf(live, 'lab-kubeconfig').ownerReferences;
      }),
    ).toMatchObject({ secrets: ['lab-ca', 'lab-talos', 'lab-kubeconfig'] });
    expect(
      names((live) => {
        ownerOf(live, 'lab-kubeconfig').ownerReferences = [];
      }),
    ).toMatchObject({ secrets: ['lab-ca', 'lab-talos', 'lab-kubeconfig'] });
    const unowned = ownDone((live) => {
      delete ownerOf(live, 'lab-kubeconfig').ownerReferences;
    });
    expect(unowned.done).toBe(false);
  });
});

describe('planAdoption, the kubeconfig Secret', () => {
  const minted = (name = 'minted'): MintResult => ({
    kind: 'minted',
    secret: { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'lab' } },
    notAfter: new Date('2027-06-01T00:00:00Z'),
  });
  const withoutKubeconfig = () =>
    converged().filter((o) => !(o.kind === 'Secret' && o.metadata.name === 'lab-kubeconfig'));

  it('missing live: written from the minted Secret, its credential described with the expiry', () => {
    const p = plan(withoutKubeconfig(), false, minted());
    const step = stepOf(p, 'kubeconfig-secret');
    expect(step.secret?.metadata.name).toBe('minted');
    expect(step.credential).toMatch(/until 2027-06-01T00:00:00\.000Z/);
    expect(pending(p)).toEqual(['kubeconfig-secret', 'own-secrets']);
    expect(stepOf(p, 'own-secrets').secrets).toEqual(['lab-ca', 'lab-talos', 'lab-kubeconfig']);
  });

  it('there live: kept as it is, even when a minted one is offered; none minted is fine', () => {
    for (const mint of [minted(), undefined, { kind: 'unavailable', reason: 'no CA' } as const]) {
      const step = stepOf(plan(converged(), false, mint), 'kubeconfig-secret');
      expect(step.secret).toBeUndefined();
      expect(step.credential).toBe('already there');
    }
  });

  it('missing live and not mintable: refused with the reason, or with "none minted" when nothing was tried', () => {
    const unavailable = planAdoption(KIT, withoutKubeconfig(), false, {
      kubeconfig: { kind: 'unavailable', reason: 'lab-ca has no tls.crt' },
    });
    expect(unavailable).toMatchObject({
      kind: 'refused',
      reason: expect.stringContaining('lab-ca has no tls.crt'),
    });
    const none = planAdoption(KIT, withoutKubeconfig(), false, {});
    expect(none).toMatchObject({
      kind: 'refused',
      reason: expect.stringContaining('no kubeconfig was minted'),
    });
    expect(none.kind === 'refused' && none.reason).not.toContain('undefined');
  });
});

describe('planAdoption, refusals', () => {
  const machine = (
    labels: Record<string, string>,
    over: Partial<KubeObject['metadata']> = {},
  ): KubeObject => ({
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Machine',
    metadata: { name: 'cp-1', namespace: 'lab', labels, ...over },
  });
  const CP = { 'cluster.x-k8s.io/cluster-name': 'lab', 'cluster.x-k8s.io/control-plane': '' };
  const secret: KubeObject = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'lab-kubeconfig', namespace: 'lab' },
  };
  const adopt = (live: KubeObject[]) => planAdoption(KIT, [secret, ...live], true, {});
  const tcpLive = (
    status: Record<string, unknown> | undefined,
    spec?: Record<string, unknown>,
  ): KubeObject => {
    const t = clone(byName(KIT, 'TalosControlPlane'));
    if (status) t.status = status;
    if (spec) t.spec = spec;
    else delete t.spec;
    return t;
  };

  it('refuses a kit without a Cluster or without a TalosControlPlane', () => {
    for (const kind of ['Cluster', 'TalosControlPlane'])
      expect(
        planAdoption(
          KIT.filter((o) => o.kind !== kind),
          [secret],
          true,
          {},
        ),
      ).toMatchObject({
        kind: 'refused',
        remediation: expect.stringContaining('--provisioner capi'),
      });
  });

  it("only this cluster's control-plane Machines in its namespace count for H2, and they are named", () => {
    expect(adopt([machine(CP)])).toMatchObject({ kind: 'refused', reason: expect.stringContaining('cp-1') });
    expect(adopt([machine(CP), machine(CP, { name: 'cp-2' })])).toMatchObject({
      reason: expect.stringContaining('cp-1, cp-2'),
    });
    expect(adopt([machine(CP, { namespace: 'other' })]).kind).toBe('plan');
    expect(adopt([machine({ ...CP, 'cluster.x-k8s.io/cluster-name': 'other' })]).kind).toBe('plan');
    expect(adopt([machine({ 'cluster.x-k8s.io/cluster-name': 'lab' })]).kind).toBe('plan');
    expect(adopt([machine({}, { labels: undefined })]).kind).toBe('plan');
    expect(adopt([{ ...machine(CP), kind: 'MachinePool' }]).kind).toBe('plan');
    // Bootstrapped: the Machines are CACPPT's to have.
    expect(adopt([machine(CP), tcpLive({ bootstrapped: true })]).kind).toBe('plan');
    expect(adopt([machine(CP), tcpLive({ bootstrapped: 'true' })]).kind).toBe('refused');
  });

  it('a TalosControlPlane asking for replicas before it is bootstrapped is refused; 0, or bootstrapped, is not', () => {
    const spec = (replicas: unknown) => ({ ...byName(KIT, 'TalosControlPlane').spec, replicas });
    expect(adopt([tcpLive(undefined, spec(1))])).toMatchObject({
      kind: 'refused',
      reason: expect.stringContaining('1 replicas'),
    });
    expect(adopt([tcpLive(undefined, spec(0))]).kind).toBe('plan');
    expect(adopt([tcpLive({ bootstrapped: true }, spec(3))]).kind).toBe('plan');
    expect(adopt([tcpLive(undefined, spec('1'))]).kind).toBe('plan');
    // A live TalosControlPlane without a spec (as a partial read shows it): no crash, no refusal.
    expect(adopt([tcpLive(undefined)]).kind).toBe('plan');
  });
});

describe('planAdoption, what it creates', () => {
  it('MachineDeployments at 0 replicas with the preflight skip added to their own annotations', () => {
    const kit = KIT.map(clone);
    const md = byName(kit, 'MachineDeployment');
    md.metadata.annotations = { 'team.example/owner': 'platform' };
    const p = plan(
      [],
      true,
      { kind: 'minted', secret: clone(byName(KIT, 'Secret')), notAfter: new Date(0) },
      kit,
    );
    const created = p.steps
      .map((s) => s.step)
      .find(
        (s): s is Extract<AdoptStep, { kind: 'create' }> =>
          s.kind === 'create' && s.object.kind === 'MachineDeployment',
      )!.object;
    expect(created.metadata.annotations).toEqual({
      'team.example/owner': 'platform',
      [SKIP]: 'ControlPlaneIsStable',
    });
    expect(created.metadata.name).toBe(md.metadata.name);
    expect(created.spec?.['replicas']).toBe(0);
    expect(created.spec?.['template']).toEqual(md.spec?.['template']);
  });
});

describe('statusHas', () => {
  it('every wanted field, nested ones field by field', () => {
    expect(statusHas({ a: 1, b: 2 }, { a: 1 })).toBe(true);
    expect(statusHas({ a: 1, b: 2 }, { a: 1, b: 3 })).toBe(false);
    expect(statusHas({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(statusHas({ a: { b: true, c: 1 } }, { a: { b: true } })).toBe(true);
    expect(statusHas({ a: { b: false } }, { a: { b: true } })).toBe(false);
    expect(statusHas({ a: null }, { a: null })).toBe(true);
    expect(statusHas({ a: 1 }, { a: null })).toBe(false);
    expect(statusHas(undefined, { a: 1 })).toBe(false);
    expect(statusHas(null, {})).toBe(true);
  });
});

describe('describeStep', () => {
  it('names each kind of step by what it does', () => {
    const ns = 'lab';
    const text: Record<AdoptStep['kind'], string> = {
      namespace: describeStep({ kind: 'namespace', name: ns }),
      create: describeStep({ kind: 'create', object: byName(KIT, 'Cluster'), why: 'because' }),
      'tcp-bootstrapped': describeStep({ kind: 'tcp-bootstrapped', namespace: ns, name: 'cp' }),
      'kubeconfig-secret': describeStep({
        kind: 'kubeconfig-secret',
        namespace: ns,
        name: 'k',
        credential: 'c',
      }),
      'own-secrets': describeStep({
        kind: 'own-secrets',
        namespace: ns,
        cluster: 'lab',
        secrets: ['a', 'b'],
      }),
      'tcp-initialized': describeStep({
        kind: 'tcp-initialized',
        namespace: ns,
        name: 'cp',
        contract: 'v1beta2',
        status: { initialization: { controlPlaneInitialized: true }, note: null },
      }),
      'unpause-cluster': describeStep({ kind: 'unpause-cluster', namespace: ns, name: 'lab' }),
      'touch-cluster': describeStep({
        kind: 'touch-cluster',
        namespace: ns,
        name: 'lab',
        controlPlane: 'cp',
      }),
      'unpause-tcp': describeStep({ kind: 'unpause-tcp', namespace: ns, name: 'cp' }),
    };
    expect(text.namespace).toBe('namespace lab');
    expect(text.create).toBe('Cluster lab/lab (because)');
    expect(
      describeStep({
        kind: 'create',
        object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } },
        why: 'w',
      }),
    ).toBe('Namespace n (w)');
    expect(text['tcp-bootstrapped']).toBe('TalosControlPlane lab/cp status.bootstrapped: true');
    expect(text['kubeconfig-secret']).toMatch(/^Secret lab\/k .*; c\)$/);
    expect(text['own-secrets']).toBe('Secrets a, b owned by Cluster lab/lab');
    expect(text['tcp-initialized']).toMatch(
      /^TalosControlPlane lab\/cp status\.initialization\.controlPlaneInitialized: true, status\.note: null \(contract v1beta2/,
    );
    expect(text['unpause-cluster']).toBe('Cluster lab/lab unpaused');
    expect(text['touch-cluster']).toMatch(
      /^Cluster lab\/lab asked to reconcile .*TalosControlPlane cp's resourceVersion/,
    );
    expect(text['unpause-tcp']).toBe('TalosControlPlane lab/cp unpaused');
  });
});
