/**
 * `ferry rehearse SNAPSHOT`: lab up → generate → plan → run (lab provisioner) → report → lab down.
 * The plan is built from the snapshot with its etcd section taken from the lab (the lab's member
 * ids and leader: a plan names members by id), while the versions stay the snapshot's; the report
 * says which etcd binaries stand in for which versions. The checks a rehearsal makes: no API error
 * through the endpoint, no acknowledged write lost, no PodDisruptionBudget violated, the longest
 * etcd write gap, and the end state (only Talos members, their Nodes Ready).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { MgmtApi } from '../adapters/capi/mgmt-api.js';
import { createEtcdReader } from '../adapters/etcd/reader.js';
import { loadKubeconfig } from '../adapters/kube/kubeconfig.js';
import { createRequester } from '../adapters/kube/request.js';
import { requestProbe } from '../adapters/probes/http.js';
import { type LabControl, serveLabControl } from '../adapters/provisioners/lab-control.js';
import { runAudit } from '../audit/engine.js';
import { ALL_RULES } from '../audit/rules/index.js';
import { readCapiKit } from '../capi/kit-objects.js';
import { FerryError } from '../errors.js';
import { deriveFacts } from '../facts/derive.js';
import type { ProxmoxOptions } from '../generate/capi/options.js';
import { capiNamesOf } from '../kit/capi-names.js';
import { type KitSummary, readKit } from '../kit/read.js';
import { LabCluster, type LabClusterOptions } from '../lab/cluster.js';
import { localLabControl } from '../lab/control.js';
import type { LabFault } from '../lab/faults.js';
import { keptLabState, labFiles, readLabState, writeLabState } from '../lab/state.js';
import type { MaxUnavailable } from '../plan/batches/limits.js';
import { buildPlan } from '../plan/build.js';
import type { PhaseId, Plan, StepKind, Strategy } from '../plan/model.js';
import { renderPlan } from '../plan/render.js';
import type { Probe, ProbeRecord } from '../ports/run.js';
import type { RunOptions, RunResult } from '../run/deps.js';
import { Journal, journalPathFor } from '../run/journal.js';
import { lockPathFor, readLockRecord, staleReason } from '../run/lock.js';
import { TerminalOperator } from '../run/operator.js';
import { type ReportCheck, renderReportHtml, renderReportMarkdown } from '../run/report.js';
import { reportInputFromJournal } from '../run/report-input.js';
import { loadSnapshot } from '../snapshot/load.js';
import type { Snapshot } from '../snapshot/model.js';
import { refuseUnobserved } from '../snapshot/unobserved.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { assemble, type CapiConnection } from './assemble.js';
import { CANARY_PROBE, canaryCheck, phaseWindows } from './rehearse-canary.js';
import { type WorkloadFloor, WorkloadWatch } from './rehearse-workloads.js';
import { runSession } from './session.js';
import { type UserProbe, userProbes } from './user-probes.js';

export interface RehearseOptions {
  snapshotPath: string;
  /** Work directory: lab/, kit/, plan.json, journal, reports. */
  dir: string;
  /** Third octet of the lab's loopback addresses. */
  subnet: number;
  strategy?: Strategy;
  phases?: PhaseId[];
  /**
   * Plan with --surge-replicas: a workload whose PDB allows no disruption (the example's
   * shop/checkout) is scaled up by one around its drains. Default true: the rehearsal rolls the
   * workers too; false shows the plan's refusal and the drain that a budget stops.
   */
  surgeReplicas?: boolean;
  /** Run options on top of the rehearsal's fast defaults. */
  run?: RunOptions;
  lab?: Partial<LabClusterOptions>;
  /** Faults put in force once the lab is up (tests). */
  faults?: LabFault[];
  /** Keep the lab running after the run (the caller disposes `lab`). */
  keepLab?: boolean;
  /**
   * Leave the lab's files (etcd data, PKI, logs) in DIR/lab when it stops, with the state file
   * `ferry lab status|down --dir DIR/lab` read (`ferry rehearse --keep`).
   */
  keepData?: boolean;
  /**
   * `capi`: the lab's Cluster API reconciler runs (the lab API server is management and workload
   * cluster at once), the kit is generated for Cluster API on `infra`, and the run adds the nodes
   * through the capi provisioner, decommissioning the old ones through the lab. Default `lab`.
   */
  provisioner?: RehearsalProvisioner;
  /** The infrastructure of a capi rehearsal's kit; default proxmox (the lab stands in for it). */
  infra?: RehearsalInfra;
  /** Serve the lab's control socket here too (a separate `ferry run --provisioner lab` can drive it). */
  controlSocket?: string;
  probes?:
    | {
        apiIntervalMs?: number;
        apiTimeoutMs?: number;
        etcdIntervalMs?: number;
        /** The canary request probe: a GET every 10 ms, each within 2 s by default (as the API probes). */
        requestTimeoutMs?: number;
      }
    | false;
  /** `--probe`: the operator's endpoints, probed throughout and gated like `ferry run --probe`. */
  userProbes?: UserProbe[];
  log: (line: string) => void;
  signal?: AbortSignal;
}

export interface RehearseResult {
  result: RunResult;
  probes: ProbeRecord[];
  checks: ReportCheck[];
  /** Each lab workload's fewest Ready pods during the roll, against its PDB. */
  workloads: WorkloadFloor[];
  planFile: string;
  journalFile: string;
  reports: string[];
  notes: string[];
  /** The lab, when kept. */
  lab?: LabCluster;
  /** The lab directory whose files were kept (keepData). */
  keptLab?: string;
}

export type RehearsalProvisioner = 'lab' | 'capi';
export type RehearsalInfra = 'proxmox';

/**
 * What a capi rehearsal's kit says about the Proxmox it would run on: the lab stands in for
 * Proxmox, so these only have to make a valid kit (documentation addresses, RFC 5737).
 */
const LAB_PROXMOX: ProxmoxOptions = {
  sourceNode: 'lab',
  templateId: 9000,
  bridge: 'vmbr0',
  ipv4Addresses: ['192.0.2.100-192.0.2.120'],
  ipv4Prefix: 24,
  ipv4Gateway: '192.0.2.1',
  dnsServers: ['192.0.2.2'],
};

/** The lab's directory inside a rehearsal's work directory. */
export const rehearsalLabDir = (dir: string): string => join(dir, 'lab');

/** Preflight, the control planes, the workers (with --surge-replicas) and the last control plane: what `ferry rehearse` runs. */
export const DEFAULT_REHEARSAL_PHASES: PhaseId[] = [0, 2, 3, 4];

/**
 * The steps a capi rehearsal runs outside its phases: the adoption (phase 1) and the hand-over
 * (phase 5) act on the management cluster, which the lab is; the rest of those phases needs a
 * shell on the real machines.
 */
export const CAPI_REHEARSAL_STEPS: StepKind[] = ['capi-adopt', 'capi-handover'];

/** Preflight and the control planes only (the crash sweep's scope). */
export const REHEARSAL_PHASES: PhaseId[] = [0, 2, 4];

/** Fast settings for a lab: its load balancer checks every 200 ms, its nodes start in 300 ms. */
/**
 * The lab's Cluster API reconciler runs its etcd audit every 200 ms: 10 s of settle after the
 * hand-over is 50 audits, where production's window waits out slower controllers.
 */
const LAB_CAPI_SETTLE_SECONDS = 10;

export const LAB_RUN_DEFAULTS: RunOptions = {
  gateStableSeconds: 1,
  lbSettleSeconds: 1,
  gateGraceSeconds: 20,
  pollMs: 200,
  timeouts: {
    gate: 60,
    'wait-member-joined': 60,
    'wait-member-voter': 120,
    'wait-node-ready': 60,
    drain: 120,
    // A worker batch drains several nodes at once (--drain-concurrency); on 2 shared cores that
    // takes longer than one node.
    'drain-batch': 240,
    provision: 120,
    'provision-request': 120,
    'provision-detect': 120,
    decommission: 60,
  },
};

function bootstrapToken(): string {
  const pick = (n: number) =>
    Array.from(randomBytes(n), (b) => 'abcdefghijklmnopqrstuvwxyz0123456789'[b % 36]).join('');
  return `${pick(6)}.${pick(16)}`;
}

/** The snapshot as the lab runs it: etcd members, ids and leader from the lab, versions from the snapshot. */
export async function labView(snapshot: Snapshot, lab: LabCluster): Promise<Snapshot> {
  const s = lab.etcdClientSettings();
  const reader = createEtcdReader({
    endpoints: s.endpoints,
    caFile: s.caFile,
    certFile: s.certFile,
    keyFile: s.keyFile,
  });
  try {
    const { state } = await reader.readState();
    const version = snapshot.etcd?.version;
    const server = version?.server;
    return {
      ...snapshot,
      etcd: {
        ...state,
        ...(version && { version }),
        endpoints: state.endpoints.map((e) => ({ ...e, ...(server && { version: server }) })),
      },
    };
  } finally {
    reader.close();
  }
}

async function tryKit(
  o: Pick<RehearseOptions, 'snapshotPath' | 'dir' | 'provisioner' | 'infra'>,
  notes: string[],
): Promise<KitSummary | null> {
  const capi = o.provisioner === 'capi';
  const pki = join(o.snapshotPath, 'pki');
  // A capi run sends the kit's Cluster API objects: without a kit there is nothing to rehearse.
  const noKit = (why: string) => {
    if (capi)
      throw new FerryError('input', `a capi rehearsal needs the kit, and it could not be generated: ${why}`, {
        remediation:
          'give the snapshot its pki/ (a copy of /etc/kubernetes/pki), or fix what ferry generate reports',
      });
  };
  if (!existsSync(pki)) {
    noKit('the snapshot has no pki/');
    notes.push(
      'kit: not generated (the snapshot has no pki/); the preparation steps refer to `ferry generate`',
    );
    return null;
  }
  const kitDir = join(o.dir, 'kit');
  try {
    const { generateKit } = await import('../generate/kit.js');
    await generateKit({
      snapshotPath: o.snapshotPath,
      pkiDir: pki,
      outDir: kitDir,
      target: capi ? { provisioner: 'capi', infra: o.infra ?? 'proxmox' } : {},
      bootstrapToken: bootstrapToken(),
      force: true,
      ...(capi && { capi: { proxmox: LAB_PROXMOX } }),
    });
    notes.push(
      `kit: generated in ${kitDir} from the snapshot's PKI (the lab's Talos nodes do not boot from it: they are simulated)`,
    );
    if (capi)
      notes.push(
        'kit: for Cluster API on Proxmox with placeholder Proxmox settings: the lab reconciler stands in for Cluster API and Proxmox',
      );
    return await readKit(kitDir);
  } catch (err) {
    if (capi) throw err;
    notes.push(
      `kit: not generated (${(err as Error).message.split('\n')[0]}); the preparation steps refer to \`ferry generate\``,
    );
    return null;
  }
}

export interface LabRunSetup {
  lab: LabCluster;
  plan: Plan;
  planFile: string;
  notes: string[];
  control: LabControl;
  /** The kit's directory, when one was generated (a capi run sends its objects). */
  kitDir?: string;
  /** Stops the lab (keeping its files with keepData). */
  stop(): Promise<void>;
}

/**
 * A rehearsal runs on a new lab, so the journal of an earlier one in the same directory describes
 * a lab that is gone (and, with a new kit, another plan): it goes. A rehearsal still running there
 * keeps it, and this one stops before starting a lab.
 */
export async function clearEarlierRehearsal(planFile: string): Promise<void> {
  const held = await readLockRecord(lockPathFor(planFile));
  if (held && staleReason(held) === undefined) {
    throw new FerryError(
      'gate',
      `another rehearsal is running in ${dirname(planFile)}: pid ${held.pid}, started ${held.startedAt}`,
      { remediation: 'wait for it to end, or give this one its own directory (--dir) and subnet (--subnet)' },
    );
  }
  const journal = journalPathFor(planFile);
  await Promise.all([journal, `${journal}-wal`, `${journal}-shm`].map((f) => rm(f, { force: true })));
}

/**
 * Lab up (and settled), faults in force, the kit, the plan written to DIR/plan.json (and its
 * runbook plan.md). The caller owns the lab: dispose it.
 */
export async function prepareLabRun(
  o: Pick<
    RehearseOptions,
    | 'snapshotPath'
    | 'dir'
    | 'subnet'
    | 'strategy'
    | 'lab'
    | 'faults'
    | 'log'
    | 'keepData'
    | 'surgeReplicas'
    | 'provisioner'
    | 'infra'
  > & {
    /** Worker batches at most this big (bench/workers: 1 for the one-node-at-a-time baseline). */
    maxUnavailable?: MaxUnavailable;
  },
): Promise<LabRunSetup> {
  const log = o.log;
  const startedAt = new Date().toISOString();
  await mkdir(o.dir, { recursive: true });
  await clearEarlierRehearsal(join(o.dir, 'plan.json'));
  await clearKeptLab(rehearsalLabDir(o.dir));
  const snapshot = await loadSnapshot(resolve(o.snapshotPath), { strictPki: false });
  refuseUnobserved(snapshot, 'ferry rehearse', o.snapshotPath);
  const notes: string[] = [];
  log(`lab: starting from ${o.snapshotPath} on 127.0.${o.subnet}.0/24`);
  const lab = await LabCluster.fromSnapshot(snapshot, {
    dir: rehearsalLabDir(o.dir),
    subnet: o.subnet,
    log: (l) => log(`lab: ${l}`),
    ...o.lab,
    // The lab API server is the management cluster too; a CCM sets the providerIDs (no H11 stop).
    ...(o.provisioner === 'capi' && { capi: { ccm: true, ...o.lab?.capi } }),
    ...(o.keepData && { keepData: true }),
  });
  const stop = () => stopLab(lab, o, startedAt);
  try {
    const info = lab.info();
    notes.push(info.etcd.standIn.note);
    notes.push(
      `etcd: kubeadm members run etcd ${info.etcd.standIn.lab}; Talos members join on the lab's 3.5 binary (a real one-minor jump)`,
      info.etcd.storage,
    );
    notes.push(`addresses: ${info.addresses.map((a) => `${a.name} ${a.real ?? '-'} → ${a.lab}`).join(', ')}`);
    if (info.notLoaded.length) notes.push(`not loaded into the lab: ${info.notLoaded.join('; ')}`);
    const settled = await lab.waitSettled(60_000);
    if (!settled.settled) log(`lab: not settled yet: ${settled.pending.slice(0, 5).join('; ')}`);
    for (const f of o.faults ?? []) await lab.inject(f);

    const view = await labView(snapshot, lab);
    const kit = await tryKit(o, notes);
    const facts = deriveFacts(view, {
      ...(kit?.target.talosVersion && { talosVersion: kit.target.talosVersion }),
      ...(o.provisioner === 'capi' && { provisioner: 'capi', infra: o.infra ?? 'proxmox' }),
    });
    const now = new Date();
    const audit = runAudit({
      snapshot: view,
      facts,
      target: facts.target,
      rules: ALL_RULES,
      suppressions: [],
      now,
    });
    const plan: Plan = buildPlan({
      snapshot: view,
      facts,
      audit,
      snapshotPath: o.snapshotPath,
      strategy: o.strategy ?? 'surge',
      kit,
      allowBlockers: true,
      now,
      options: {
        surgeReplicas: o.surgeReplicas ?? true,
        ...(o.maxUnavailable && { maxUnavailable: o.maxUnavailable }),
      },
    });
    if (plan.audit.blockers.length) {
      notes.push(
        `audit: ${plan.audit.blockers.length} blocker(s) accepted for the rehearsal (${[...new Set(plan.audit.blockers.map((b) => b.ruleId))].join(', ')}): a real run must fix them first`,
      );
    }
    const planFile = join(o.dir, 'plan.json');
    await writeFileAtomic(planFile, renderPlan(plan, 'json'));
    await writeFileAtomic(join(o.dir, 'plan.md'), renderPlan(plan, 'md'));
    log(`plan: ${planFile} (${plan.phases.reduce((n, p) => n + p.steps.length, 0)} steps)`);
    return {
      lab,
      plan,
      planFile,
      notes,
      control: localLabControl(lab),
      ...(kit && { kitDir: join(o.dir, 'kit') }),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Stops the lab; with keepData its files stay, and a state file says what they are, so that
 * `ferry lab status --dir` shows them and `ferry lab down --dir` removes them.
 */
async function stopLab(
  lab: LabCluster,
  o: Pick<RehearseOptions, 'snapshotPath' | 'subnet' | 'keepData'>,
  startedAt: string,
): Promise<void> {
  const info = o.keepData ? lab.info() : undefined;
  await lab.dispose();
  if (!info) return;
  await writeLabState(
    lab.dir,
    keptLabState({
      snapshot: resolve(o.snapshotPath),
      dir: lab.dir,
      subnet: o.subnet,
      startedAt,
      lab: info,
      kept: lab.etcd.dirs,
    }),
  );
}

/** The files an earlier rehearsal kept in this lab directory: the new lab's start reaps them, so their state goes too. */
async function clearKeptLab(labDir: string): Promise<void> {
  const state = await readLabState(labDir).catch(() => undefined);
  if (state?.phase === 'stopped') await rm(labFiles(labDir).state, { force: true });
}

/** Whether a stopped rehearsal kept lab files in this directory (the command then says how to remove them). */
export async function rehearsalKeptLab(labDir: string): Promise<boolean> {
  const state = await readLabState(labDir).catch(() => undefined);
  return (state?.kept?.length ?? 0) > 0;
}

export async function rehearse(o: RehearseOptions): Promise<RehearseResult> {
  const log = o.log;
  const { lab, plan, planFile, notes, control, kitDir, stop } = await prepareLabRun(o);
  let served: { close(): Promise<void> } | undefined;
  try {
    if (o.controlSocket) served = await serveLabControl(control, o.controlSocket);
    const runId = randomBytes(8).toString('hex');
    const capi = o.provisioner === 'capi' ? await labCapiConnection(lab, kitDir) : undefined;
    const a = assemble({
      connection: { kubeconfig: lab.kubeconfigPath, etcd: lab.etcdClientSettings() },
      provisioner: capi ? 'capi' : 'lab',
      lab: control,
      ...(capi && { capi }),
      operator: new TerminalOperator({ say: log, confirmDir: join(o.dir, 'confirm'), interactive: false }),
      probes:
        o.probes === false
          ? false
          : {
              runId,
              apiIntervalMs: o.probes?.apiIntervalMs ?? 50,
              ...(o.probes?.apiTimeoutMs !== undefined && { apiTimeoutMs: o.probes.apiTimeoutMs }),
              etcdIntervalMs: o.probes?.etcdIntervalMs ?? 0,
            },
      log,
    });
    const phases = o.phases ?? DEFAULT_REHEARSAL_PHASES;
    const skippedPhases = plan.phases.filter((p) => !phases.includes(p.id) && p.steps.length > 0);
    for (const p of skippedPhases) {
      const why =
        p.id === 3
          ? 'workers are rehearsed unless --phases leaves them out'
          : 'it needs a shell on the real machines (node-side preparation, after-care); follow the runbook plan.md';
      const also = capi ? p.steps.filter((s) => CAPI_REHEARSAL_STEPS.includes(s.kind)) : [];
      notes.push(
        `not rehearsed: phase ${p.id} (${p.name}, ${p.steps.length - also.length} steps): ${why}${also.length ? `; its Cluster API step(s) ${also.map((s) => s.id).join(', ')} were rehearsed` : ''}`,
      );
    }
    const settleSeconds = o.run?.capiSettleSeconds ?? LAB_CAPI_SETTLE_SECONDS;
    if (capi)
      notes.push(
        `hand-over settle window: ${settleSeconds} s (the lab's Cluster API audit runs every 200 ms; the plan's window is for a real management cluster)`,
      );
    // The apps' view: the canary's request probe beside the API and etcd probes, and every
    // workload's Ready pods against its PDB, for the whole roll.
    const canaryUrl = lab.info().canary?.url;
    const canary: Probe[] =
      o.probes !== false && canaryUrl
        ? [
            requestProbe({
              url: `${canaryUrl}/`,
              name: CANARY_PROBE,
              intervalMs: 10,
              timeoutMs: o.probes?.requestTimeoutMs ?? 2_000,
            }),
          ]
        : [];
    const user = userProbes(o.userProbes ?? []);
    const watch = new WorkloadWatch(lab.client);
    watch.start();
    let session: Awaited<ReturnType<typeof runSession>>;
    let watched: Awaited<ReturnType<WorkloadWatch['stop']>>;
    try {
      session = await runSession({
        planFile,
        plan,
        ports: { ...a.ports, signals: user.signals },
        probes: [...a.probes, ...canary, ...user.probes],
        log,
        ...(o.signal && { signal: o.signal }),
        liveSeconds: 15,
        run: {
          ...LAB_RUN_DEFAULTS,
          // The plan lists the snapshot's bare pods (the example's default/netshoot) as outages; a
          // rehearsal accepts them as an operator would with --evict-bare-pods (journaled), so that
          // every worker is replaced. A caller may still refuse them (evictBarePods: false).
          evictBarePods: true,
          ...o.run,
          ...(capi && { capiSettleSeconds: settleSeconds }),
          timeouts: { ...LAB_RUN_DEFAULTS.timeouts, ...o.run?.timeouts },
          phases,
          ...(capi && { alsoKinds: [...CAPI_REHEARSAL_STEPS, ...(o.run?.alsoKinds ?? [])] }),
        },
      });
    } finally {
      watched = await watch.stop();
      a.close();
    }

    const checks = await rehearsalChecks(lab, plan, session.probes, session.result);
    if (canary.length > 0) {
      const j = Journal.open(session.journalFile, { readonly: true });
      let windows: ReturnType<typeof phaseWindows>;
      try {
        windows = phaseWindows(plan, j.transitions());
      } finally {
        j.close();
      }
      checks.push(
        canaryCheck(
          session.probes.find((p) => p.summary.name === CANARY_PROBE),
          windows,
        ),
      );
    }
    checks.push(workloadCheck(watched));
    if (capi) checks.push(...(await capiChecks(lab, capi, session.result)));
    const reports = await writeRehearsalReport(
      o.dir,
      plan,
      planFile,
      session.journalFile,
      notes,
      checks,
      watched.floors,
    );
    for (const r of reports) log(`report: ${r}`);
    return {
      result: session.result,
      probes: session.probes,
      checks,
      workloads: watched.floors,
      planFile,
      journalFile: session.journalFile,
      reports,
      notes,
      ...(o.keepLab && { lab }),
      ...(o.keepData && !o.keepLab && { keptLab: lab.dir }),
    };
  } finally {
    await served?.close();
    if (!o.keepLab) await stop();
  }
}

/** The lab as the management cluster: its admin kubeconfig, the kit's objects, the lab decommissioning. */
async function labCapiConnection(lab: LabCluster, kitDir: string | undefined): Promise<CapiConnection> {
  if (!kitDir) throw new FerryError('internal', 'a capi rehearsal without its kit');
  const kubeconfig = lab.info().capi?.mgmtKubeconfig;
  if (!kubeconfig) throw new FerryError('internal', "the lab's Cluster API does not run");
  return {
    kubeconfig,
    kit: await readCapiKit(kitDir),
    // Cluster API does not reset or power off the old kubeadm machines: the lab does.
    decommission: 'lab',
  };
}

/**
 * What a capi rehearsal asserts beyond the manual one: the lab's Cluster API removed no etcd
 * member (its audit, H1, never fired), and the TalosControlPlane was handed over: unpaused and
 * ready, with every replica ready.
 */
export async function capiChecks(
  lab: LabCluster,
  capi: CapiConnection,
  result: RunResult,
): Promise<ReportCheck[]> {
  const checks: ReportCheck[] = [];
  const r = lab.capi;
  const audits = (r?.events ?? []).filter((e) => e.kind === 'etcd-audit');
  const removed = audits.flatMap((e) => (e.kind === 'etcd-audit' ? e.removed : []));
  checks.push({
    name: "no etcd member removed by Cluster API's audit",
    // Fail closed: without the reconciler there was no audit to watch.
    ok: r !== undefined && audits.length === 0,
    detail: !r
      ? "the lab's Cluster API did not run: its audit could not be watched"
      : audits.length === 0
        ? 'the etcd audit never ran'
        : `${audits.length} audit(s) removed ${removed.join(', ') || 'nothing'}`,
  });
  if (result.status !== 'completed') return checks;
  const name = 'TalosControlPlane handed over (unpaused, ready)';
  try {
    const req = createRequester(loadKubeconfig(capi.kubeconfig, capi.context));
    const names = capiNamesOf(
      capi.kit.objects.filter((x) => x.kind !== 'Secret').map((value, line) => ({ value, line })),
      `${capi.kit.dir}/capi/cluster.yaml`,
    );
    const tcp = await MgmtApi.fromKit(req, names, capi.kit.objects).controlPlane();
    checks.push(
      tcp
        ? {
            name,
            ok:
              !tcp.paused &&
              !tcp.clusterPaused &&
              tcp.ready &&
              tcp.replicas !== undefined &&
              tcp.readyReplicas === tcp.replicas,
            detail: `${tcp.namespace}/${tcp.name}: ${tcp.paused ? 'paused' : 'unpaused'}${tcp.clusterPaused ? ' (Cluster paused)' : ''}, ${tcp.ready ? 'ready' : 'not ready'}, ${tcp.readyReplicas ?? '?'}/${tcp.replicas ?? '?'} replicas ready`,
          }
        : { name, ok: false, detail: 'the TalosControlPlane is not in the management cluster' },
    );
  } catch (err) {
    checks.push({
      name,
      ok: false,
      detail: `could not read the TalosControlPlane: ${(err as Error).message}`,
    });
  }
  return checks;
}

/** Every workload's fewest Ready pods against its PDB's minimum; a sample that could not be taken is said. */
export function workloadCheck(w: { floors: WorkloadFloor[]; samples: number; missed: number }): ReportCheck {
  const covered = w.floors.filter((f) => f.pdb);
  const below = covered.filter((f) => f.violated);
  const show = (f: WorkloadFloor) =>
    `${f.name} ${f.minReady}/${f.replicas} Ready at least${f.pdb ? ` (PDB ${f.pdb.name} needs ${f.pdb.minimum})` : ''}`;
  return {
    name: 'every workload kept its PDB minimum Ready',
    ok: w.samples > 0 && below.length === 0,
    detail:
      w.samples === 0
        ? 'no sample of the workloads could be taken'
        : `${below.length} PDB violation(s) over ${w.samples} samples${w.missed ? ` (${w.missed} missed)` : ''}: ${(below.length ? below : covered).map(show).join('; ') || 'no workload has a PDB'}${
            w.floors.length > covered.length
              ? `; without a PDB: ${w.floors
                  .filter((f) => !f.pdb)
                  .map(show)
                  .join('; ')}`
              : ''
          }`,
  };
}

/** What a rehearsal asserts about the run it watched. */
export async function rehearsalChecks(
  lab: LabCluster,
  plan: Plan,
  probes: ProbeRecord[],
  result: RunResult,
): Promise<ReportCheck[]> {
  const checks: ReportCheck[] = [];
  checks.push({
    name: 'run completed',
    ok: result.status === 'completed',
    detail:
      result.status === 'completed'
        ? ['done', 'already-done', 'skipped']
            .map((o) => `${result.steps.filter((x) => x.outcome === o).length} ${o}`)
            .join(', ')
        : `stopped at ${result.stoppedAt}: ${result.error?.message ?? ''}`,
  });
  const api = probes.filter((p) => p.summary.name.startsWith('api-'));
  const apiErrors = api.reduce((n, p) => n + p.summary.failures, 0);
  checks.push({
    name: 'no API error through the endpoint',
    ok: api.length > 0 && apiErrors === 0,
    detail:
      api
        .map(
          (p) =>
            `${p.summary.name}: ${p.summary.failures}/${p.summary.attempts} failed${p.summary.errors.length ? ` (${p.summary.errors.map((e) => `${e.count}× ${e.message}`).join('; ')})` : ''}`,
        )
        .join('; ') || 'no API probe ran',
  });
  const etcd = probes.find((p) => p.summary.name === 'etcd-write');
  const lost = etcd?.summary.extra?.['lost'];
  checks.push({
    name: 'no acknowledged write lost',
    ok: lost === 0,
    detail: etcd
      ? `${etcd.summary.extra?.['acknowledged']} acknowledged etcd writes read back, ${lost} missing`
      : 'no etcd probe ran',
  });
  if (etcd) {
    checks.push({
      name: 'longest etcd write gap',
      ok: etcd.summary.longestGapMs < 1_000,
      detail: `${etcd.summary.longestGapMs} ms (bound for a rehearsal on shared CPUs: 1000 ms; a forced election costs 1200–1500 ms)`,
    });
  }
  const evictions = lab.evictionLog.all();
  const violations = lab.evictionLog.violations();
  checks.push({
    name: 'no PodDisruptionBudget violated',
    ok: violations.length === 0,
    detail: `${evictions.filter((e) => e.outcome === 'evicted').length} evicted, ${evictions.filter((e) => e.outcome === 'refused').length} refused by a budget, ${violations.length} let through a budget with no room`,
  });
  if (result.status === 'completed') {
    try {
      const members = await lab.etcd.memberList();
      const kubeadm = new Set(plan.controlPlanes.map((c) => c.node));
      const left = members.filter((m) => kubeadm.has(m.name));
      checks.push({
        name: 'etcd runs on Talos members only',
        ok: left.length === 0 && members.every((m) => !m.isLearner),
        detail: members.map((m) => `${m.name}${m.isLearner ? ' (learner)' : ''}`).join(', '),
      });
    } catch (err) {
      checks.push({ name: 'etcd runs on Talos members only', ok: false, detail: (err as Error).message });
    }
  }
  return checks;
}

export async function writeRehearsalReport(
  dir: string,
  plan: Plan,
  planFile: string,
  journalFile: string,
  notes: string[],
  checks: ReportCheck[],
  workloads: WorkloadFloor[] = [],
): Promise<string[]> {
  const input = reportInputFromJournal(journalFile, {
    title: `ferry rehearse: ${plan.cluster.name ?? 'cluster'} (lab)`,
    plan,
    planFile,
    notes,
    checks,
  });
  const md = join(dir, 'rehearsal.md');
  const html = join(dir, 'rehearsal.html');
  const json = join(dir, 'rehearsal.json');
  await writeFileAtomic(md, renderReportMarkdown(input));
  await writeFileAtomic(html, renderReportHtml(input));
  // For scripts: the checks, every probe's figures (the canary's p50/p99 in `extra`) and each
  // workload's fewest Ready pods against its PDB.
  const forScripts = {
    title: input.title,
    outcome: input.runEnds.at(-1)?.state ?? 'unknown',
    checks,
    probes: input.probes.map((p) => ({ ...p.summary, startedAt: p.startedAt })),
    workloads,
    notes,
  };
  await writeFileAtomic(json, `${JSON.stringify(forScripts, null, 2)}\n`);
  return [md, html, json];
}
