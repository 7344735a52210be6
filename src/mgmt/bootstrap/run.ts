/**
 * Runs the bootstrap stages in order, one handler per stage kind (a Record the compiler checks),
 * journaling each transition before its work starts. A run that finds a journal continues: stages
 * recorded done are skipped; the stage in flight when the last run died is run again, and every
 * handler first looks at the world so that running it again is safe (kind cluster present?
 * providers in the inventory? move files written?).
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { parse } from 'yaml';
import { capiKubectl, kubectlPrefix } from '../../capi/kubectl-commands.js';
import { PAUSED_ANNOTATION } from '../../capi/view.js';
import { FerryError } from '../../errors.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { writeFileAtomic } from '../../util/atomic-write.js';
import type { StageJournal } from '../stage-journal.js';
import { type Tools, toolFailed } from '../tools/adapter.js';
import type { MgmtConfig } from './config.js';
import { credentialsSecret } from './manifests.js';
import { readSecret } from './secrets.js';
import { type Cmd, MOVE_LABEL_ARG, type Stage, type StageKind, type StatePaths } from './stages.js';

/** What the stages bootstrap and restore share (kind, clusterctl.yaml, clusterctl init) need. */
export interface StageContext {
  paths: Pick<StatePaths, 'kindKubeconfig' | 'xdg'>;
  tools: Tools;
  progress: (line: string) => void;
  /** How to continue after a stage stopped: the command the operator runs again. */
  again: string;
}

export interface RunContext extends StageContext {
  config: MgmtConfig;
  paths: StatePaths;
  journal: StageJournal<StageKind>;
  env: NodeJS.ProcessEnv;
  pollMs: number;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
  /** Told which stage runs, so that tool output is journaled under it. */
  onStage?: (kind: StageKind) => void;
}

type Handler<K extends StageKind, C> = (s: Extract<Stage, { kind: K }>, ctx: C) => Promise<void>;
type Handlers = { [K in StageKind]: Handler<K, RunContext> };
type Shared = 'kind-cluster' | 'clusterctl-config' | 'clusterctl-init';

async function exec(ctx: StageContext, cmd: Cmd, what: string, remediation: string) {
  let stdin = cmd.stdin;
  if (typeof stdin === 'object') {
    if (!('config' in ctx)) throw new FerryError('internal', 'a credentials Secret outside the bootstrap');
    const run = ctx as RunContext;
    stdin = JSON.stringify(credentialsSecret(run.config, await infraSecret(run)));
  }
  return await ctx.tools.ok(
    {
      tool: cmd.tool,
      args: cmd.args,
      ...(stdin !== undefined ? { stdin } : {}),
      ...(cmd.env ? { env: cmd.env } : {}),
      ...(cmd.secretOutput ? { secretOutput: true } : {}),
    },
    what,
    remediation,
  );
}

/** The Proxmox token secret or the vSphere password, registered so that the adapter masks and refuses it. */
async function infraSecret(ctx: RunContext): Promise<string> {
  const infra = ctx.config.infrastructure;
  const v =
    infra.kind === 'proxmox'
      ? await readSecret(infra.tokenSecret, ctx.env, 'infrastructure.proxmox.tokenSecret')
      : await readSecret(infra.password, ctx.env, 'infrastructure.vsphere.password');
  ctx.tools.secrets.add(v);
  return v;
}

export const BOOTSTRAP_AGAIN =
  'fix the cause, then run the same ferry mgmt bootstrap command again: it continues at this stage';

async function json(ctx: RunContext, cmd: Cmd, what: string): Promise<Record<string, unknown>> {
  const r = await exec(ctx, cmd, what, ctx.again);
  try {
    return JSON.parse(r.stdout) as Record<string, unknown>;
  } catch (cause) {
    throw new FerryError('gate', `${what}: kubectl printed no JSON`, { remediation: ctx.again, cause });
  }
}

/** Polls `get` until `done` holds, showing `clusterctl describe` whenever its tree changes. */
async function waitFor(
  ctx: RunContext,
  s: { get: Cmd; describe: Cmd; timeoutSeconds: number; title: string },
  done: (status: Record<string, unknown>) => boolean,
): Promise<void> {
  const deadline = ctx.now() + s.timeoutSeconds * 1000;
  let shown = '';
  for (;;) {
    const obj = await json(ctx, s.get, 'cannot read the TalosControlPlane');
    const status = (obj['status'] ?? {}) as Record<string, unknown>;
    const d = await ctx.tools.run({
      tool: s.describe.tool,
      args: s.describe.args,
      env: s.describe.env ?? {},
    });
    const tree = d.code === 0 ? d.stdout.trimEnd() : `(clusterctl describe exited ${d.code})`;
    if (tree !== shown) {
      ctx.progress(tree);
      shown = tree;
    }
    if (done(status)) return;
    if (ctx.now() >= deadline)
      throw new FerryError('gate', `timed out after ${s.timeoutSeconds} s: ${s.title}\n${tree}`, {
        remediation: `look at the conditions above (clusterctl describe cluster … --show-conditions all); ${ctx.again}`,
      });
    await ctx.sleep(ctx.pollMs);
  }
}

async function runAll(ctx: RunContext, s: Stage, what: string) {
  for (const c of s.commands) await exec(ctx, c, what, ctx.again);
}

/** The handlers of the stages `ferry mgmt restore` runs too: they need no mgmt.yaml. */
export const KIND_HANDLERS: { [K in Shared]: Handler<K, StageContext> } = {
  'kind-cluster': async (s, ctx) => {
    const list = await ctx.tools.run({ tool: 'kind', args: ['get', 'clusters'] });
    const exists = list.code === 0 && list.stdout.split('\n').some((l) => l.trim() === s.name);
    const [create, ready] = s.commands as [Cmd, Cmd];
    if (!exists) {
      await exec(
        ctx,
        create,
        `kind could not create the cluster ${s.name}`,
        `look at kind's error above (is docker/podman running?); ${ctx.again}`,
      );
    } else {
      ctx.progress(`kind cluster ${s.name} exists already (an earlier run created it)`);
      const kc = await exec(
        ctx,
        { tool: 'kind', args: ['get', 'kubeconfig', '--name', s.name], secretOutput: true },
        `cannot read the kubeconfig of kind cluster ${s.name}`,
        `delete it (kind delete cluster --name ${s.name}) and run again`,
      );
      await writeFileAtomic(ctx.paths.kindKubeconfig, kc.stdout, { mode: 0o600 });
    }
    await exec(
      ctx,
      ready,
      `the kind cluster ${s.name} has no Ready node`,
      `delete it (kind delete cluster --name ${s.name}) and run again`,
    );
  },
  'clusterctl-config': async (s, ctx) => {
    mkdirSync(ctx.paths.xdg, { recursive: true, mode: 0o700 });
    await writeFileAtomic(s.path, s.text, { mode: 0o600 });
  },
  'clusterctl-init': async (s, ctx) => {
    // Read the inventory first: a second init refuses ("there is already an instance", mgmt.md §2).
    const inv = await ctx.tools.run({
      tool: 'kubectl',
      args: [
        '--kubeconfig',
        ctx.paths.kindKubeconfig,
        'get',
        'providers.clusterctl.cluster.x-k8s.io',
        '--all-namespaces',
        '-o',
        'json',
      ],
    });
    let installed: { type?: string; providerName?: string; version?: string }[] = [];
    if (inv.code === 0) {
      installed = (
        (JSON.parse(inv.stdout) as { items?: { type?: string; providerName?: string; version?: string }[] })
          .items ?? []
      ).map((i) => i);
    } else if (!/doesn't have a resource type|NotFound|no matches for kind/.test(inv.stderr)) {
      throw toolFailed(
        { tool: 'kubectl', args: [] },
        inv,
        'cannot read the clusterctl inventory in kind',
        ctx.again,
        ctx.tools.secrets,
      );
    }
    const want = s.providers;
    const have = want.filter((p) =>
      installed.some((i) => i.type === p.type && i.providerName === p.name && i.version === p.version),
    );
    if (have.length === want.length) {
      ctx.progress('the providers are installed already (clusterctl inventory)');
      return;
    }
    if (installed.length > 0)
      throw new FerryError(
        'gate',
        `kind holds ${installed.length} provider(s) but not the ${want.length} this bootstrap pins (an interrupted clusterctl init?)`,
        {
          remediation: `delete the kind cluster (kind delete cluster --name ${s.kindName}), then: ${ctx.again}`,
        },
      );
    await exec(
      ctx,
      s.commands[0] as Cmd,
      'clusterctl init failed (a provider did not become ready?)',
      ctx.again,
    );
  },
};

export const HANDLERS: Handlers = {
  ...KIND_HANDLERS,
  credentials: async (s, ctx) => runAll(ctx, s, `cannot create the Secret ${s.secretName}`),
  manifests: async (s, ctx) => {
    const v = CrdValidator.fromSchemas();
    const errors = s.objects.flatMap((o) => v.validate(o));
    if (errors.length > 0)
      throw new FerryError(
        'internal',
        `the generated manifests do not match the CRDs: ${errors.map((e) => `${e.document} ${e.path}: ${e.message}`).join('; ')}`,
        {
          remediation: 'report this; nothing was applied',
        },
      );
    await writeFileAtomic(s.path, s.text);
    await runAll(ctx, s, 'cannot apply the management cluster manifests');
  },
  'wait-control-plane': async (s, ctx) => waitFor(ctx, s, (st) => st['ready'] === true),
  'fetch-secrets': async (s, ctx) => {
    for (const f of s.files) {
      const r = await exec(ctx, f.cmd, `cannot read the ${f.what} Secret`, ctx.again);
      const text = Buffer.from(r.stdout.trim(), 'base64').toString('utf8');
      if (text.trim() === '')
        throw new FerryError('gate', `the ${f.what} Secret is empty`, {
          remediation: `wait for the control plane provider to write it; ${ctx.again}`,
        });
      registerSecrets(ctx, text);
      await writeFileAtomic(f.path, text, { mode: 0o600 });
    }
  },
  cni: async (s, ctx) => runAll(ctx, s, 'helm could not install Cilium'),
  ccm: async (s, ctx) => runAll(ctx, s, 'helm could not install the Talos cloud controller manager'),
  'wait-nodes': async (s, ctx) =>
    waitFor(
      ctx,
      s,
      (st) =>
        st['ready'] === true && typeof st['readyReplicas'] === 'number' && st['readyReplicas'] >= s.replicas,
    ),
  'cert-manager': async (s, ctx) => runAll(ctx, s, 'helm could not install cert-manager'),
  'capi-operator': async (s, ctx) =>
    runAll(ctx, s, 'the Cluster API operator or one of its providers did not become ready'),
  'pivot-export': async (s, ctx) => {
    rmSync(ctx.paths.moveDir, { recursive: true, force: true });
    mkdirSync(ctx.paths.moveDir, { recursive: true, mode: 0o700 });
    const list = await exec(ctx, s.listSecrets, 'cannot list the Secrets to move', ctx.again);
    const names = list.stdout
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.startsWith(s.labelPrefix));
    if (names.length > 0)
      await exec(
        ctx,
        { tool: 'kubectl', args: [...s.labelArgs, ...names, MOVE_LABEL_ARG] },
        'cannot label the Secrets for the move',
        ctx.again,
      );
    const ns = ctx.config.cluster.namespace;
    const name = ctx.config.cluster.name;
    await exec(
      ctx,
      s.commands[0] as Cmd,
      'clusterctl move --to-directory refused',
      `clusterctl refuses paused Clusters (H13): if nobody paused ${ns}/${name} on purpose, unpause it (spec.paused and the ${PAUSED_ANNOTATION} annotation both pause it): ${capiKubectl.unpauseCluster(kubectlPrefix({ kubeconfig: s.kubeconfig }), ns, name)}; ${ctx.again}`,
    );
    const written = readdirSync(ctx.paths.moveDir);
    if (!written.includes(`Cluster_${ns}_${name}.yaml`))
      throw new FerryError(
        'gate',
        `clusterctl move wrote no Cluster_${ns}_${name}.yaml into ${ctx.paths.moveDir} (${written.length} files)`,
        {
          remediation: `check that the Cluster ${ns}/${name} exists in kind; ${ctx.again}`,
        },
      );
  },
  'pause-source': async (s, ctx) => runAll(ctx, s, 'cannot pause the Cluster in kind'),
  'pivot-import': async (s, ctx) => {
    await runAll(ctx, s, 'clusterctl move --from-directory failed');
    const obj = await json(ctx, s.verify, 'the moved Cluster is not in the new management cluster');
    if ((obj['spec'] as { paused?: unknown } | undefined)?.paused === true)
      throw new FerryError('gate', 'the moved Cluster is still paused in the new management cluster', {
        remediation: ctx.again,
      });
    // The directory holds the cluster's Secrets (CA keys, kubeconfig): not a file to keep.
    rmSync(ctx.paths.moveDir, { recursive: true, force: true });
  },
  'delete-kind': async (s, ctx) => {
    await runAll(ctx, s, 'kind could not delete the bootstrap cluster');
    rmSync(ctx.paths.kindKubeconfig, { force: true });
  },
};

/** Every value in a kubeconfig/talosconfig that is key material, so that the adapter masks and refuses it. */
function registerSecrets(ctx: RunContext, text: string) {
  const walk = (v: unknown, key: string) => {
    if (typeof v === 'string') {
      if (/data$|token|key|crt|^ca$|password/i.test(key)) ctx.tools.secrets.add(v);
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, key);
    } else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  try {
    walk(parse(text), '');
  } catch {
    ctx.tools.secrets.add(text.trim());
  }
}

export interface RunOutcome {
  ran: StageKind[];
  skipped: StageKind[];
}

/** What the journaled runner needs: the journal, where progress goes, the secrets to mask. */
export interface JournaledContext<K extends string> {
  journal: StageJournal<K>;
  tools: Tools;
  progress: (line: string) => void;
  onStage?: (kind: K) => void;
}

/**
 * Runs stages in order, each transition journaled before its work: done stages are skipped, the one
 * in flight when the last run died runs again (its handler looks at the world first).
 */
export async function runJournaled<K extends string, S extends { kind: K; title: string }>(
  stages: S[],
  ctx: JournaledContext<K>,
  dispatch: (s: S) => Promise<void>,
): Promise<{ ran: K[]; skipped: K[] }> {
  const last = ctx.journal.lastStates();
  const out: { ran: K[]; skipped: K[] } = { ran: [], skipped: [] };
  const total = stages.length;
  for (const [i, s] of stages.entries()) {
    const n = `[${i + 1}/${total}]`;
    if (last.get(s.kind) === 'done') {
      out.skipped.push(s.kind);
      continue;
    }
    const before = last.get(s.kind);
    ctx.progress(
      `${n} ${s.title}${before ? ` (again: it was ${before === 'started' ? 'in flight' : before} when the last run ended)` : ''}`,
    );
    ctx.onStage?.(s.kind);
    ctx.journal.record(s.kind, 'started');
    try {
      await dispatch(s);
    } catch (err) {
      ctx.journal.record(
        s.kind,
        'failed',
        ctx.tools.secrets.mask(err instanceof Error ? err.message : String(err)),
      );
      throw err;
    }
    ctx.journal.record(s.kind, 'done');
    out.ran.push(s.kind);
  }
  return out;
}

export async function runStages(stages: Stage[], ctx: RunContext): Promise<RunOutcome> {
  return runJournaled<StageKind, Stage>(stages, ctx, (s) => dispatch(s, ctx));
}

function dispatch(s: Stage, ctx: RunContext): Promise<void> {
  // The Record is checked per kind above; here the kind of `s` picks its own handler.
  return (HANDLERS[s.kind] as (s: Stage, ctx: RunContext) => Promise<void>)(s, ctx);
}
