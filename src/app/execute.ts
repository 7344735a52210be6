/**
 * `ferry run PLAN` behind its flags: the Cluster API and lab connections the plan's provisioner
 * needs, the operator at the terminal, the adapters; then either the dry run's look at the
 * connections, or the session and the reports beside the plan.
 */
import { randomUUID } from 'node:crypto';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { Alertmanager } from '../adapters/alertmanager/client.js';
import { PrometheusSlo, type Slo } from '../adapters/prometheus/slo.js';
import type { LabControl } from '../adapters/provisioners/lab-control.js';
import { FerryError, usageError } from '../errors.js';
import type { Plan } from '../plan/model.js';
import type { HealthSignal, SignalReading } from '../ports/signals.js';
import type { RunOptions } from '../run/deps.js';
import { TerminalOperator } from '../run/operator.js';
import { renderReportHtml, renderReportMarkdown } from '../run/report.js';
import { reportInputFromJournal } from '../run/report-input.js';
import { writeFileAtomic } from '../util/atomic-write.js';
import { requireFileSync } from '../util/input-file.js';
import type { LabelMatcher } from '../util/label-match.js';
import {
  type Assembled,
  type AssembleOptions,
  assemble,
  type CapiConnection,
  type Connection,
  type Decommissioner,
  type RunProvisioner,
} from './assemble.js';
import { checkJournal, runSession, type SessionResult } from './session.js';
import { type UserProbe, userProbes } from './user-probes.js';

/** What a capi plan's adoption and hand-over act on, as given (absolute or relative to `cwd`). */
export interface CapiFlags {
  mgmtKubeconfig?: string | undefined;
  mgmtContext?: string | undefined;
  /** Default: the kit the plan was made with. */
  kit?: string | undefined;
  decommission: Decommissioner;
}

export type { UserProbe };

export interface ExecuteOptions {
  planFile: string;
  plan: Plan;
  connection: Connection;
  provisioner: RunProvisioner;
  capi: CapiFlags;
  /** The lab's control socket, for a lab provisioner or a lab decommissioner. */
  labSocket?: string | undefined;
  exec: NonNullable<AssembleOptions['exec']>;
  /** Every question answered yes (a scripted run: the operator did the work). */
  yes: boolean;
  /** Questions at the prompt (stdin and stdout are terminals), else through files beside the plan. */
  interactive: boolean;
  probes: false | { apiIntervalMs?: number | undefined; etcdIntervalMs?: number | undefined };
  /** `--alertmanager`: its alerts gate every step; with `silenceExpected`, a step's expected alerts are silenced. */
  alerts?: { url: string; groups?: LabelMatcher[][]; silenceExpected: boolean } | undefined;
  /** `--probe`: the operator's own endpoints, probed throughout and gated on their failure budget. */
  userProbes?: UserProbe[];
  /** `--prometheus` and its `--slo`s: each an instant query that must hold at every gate. */
  slos?: { url: string; slos: Slo[] } | undefined;
  lease: boolean;
  /** age recipients for the run's etcd snapshots (`--snapshot-recipient`); none: kept plain, 0600. */
  snapshotRecipients?: string[];
  run: RunOptions;
  /** One report file (.md or .html); default PLAN.report.md and PLAN.report.html. */
  report?: string | undefined;
  dryRun: boolean;
  cwd: string;
  log: (line: string) => void;
  signal?: AbortSignal;
}

export type ExecuteOutcome =
  | {
      kind: 'dry-run';
      etcd: { members: number; leader: string | undefined };
      /** The Alertmanager's and the SLOs' readings now (the probes have not run yet). */
      signals: { name: string; reading: SignalReading }[];
      api: { server: string; ready: boolean };
    }
  | { kind: 'ran'; session: SessionResult; reports: string[] };

export async function executeRun(o: ExecuteOptions): Promise<ExecuteOutcome> {
  // A real run checks its journal when it opens it; a dry run opens none, and checks it here.
  if (o.dryRun) checkJournal(o.planFile);
  const capi = await capiConnection(o.plan, o.provisioner, o.capi, o.cwd);
  let lab: LabControl | undefined;
  if (o.provisioner === 'lab' || capi?.decommission === 'lab') {
    if (!o.labSocket)
      throw usageError(
        'missing --lab-socket',
        'pass --lab-socket PATH, the control socket the process holding the lab prints',
      );
    const { remoteLabControl } = await import('../adapters/provisioners/lab-control.js');
    lab = remoteLabControl(o.labSocket);
  }
  const a = assemble({
    ...(o.snapshotRecipients && { snapshotRecipients: o.snapshotRecipients }),
    connection: o.connection,
    provisioner: o.provisioner,
    exec: o.exec,
    ...(lab && { lab }),
    ...(capi && { capi }),
    operator: operatorFor(o),
    probes: o.probes && {
      runId: randomUUID(),
      ...(o.probes.apiIntervalMs !== undefined && { apiIntervalMs: o.probes.apiIntervalMs }),
      ...(o.probes.etcdIntervalMs !== undefined && { etcdIntervalMs: o.probes.etcdIntervalMs }),
    },
    log: o.log,
  });
  const am =
    o.alerts && new Alertmanager({ url: o.alerts.url, ...(o.alerts.groups && { groups: o.alerts.groups }) });
  const user = userProbes(o.userProbes ?? []);
  const slos = (o.slos?.slos ?? []).map((s) => new PrometheusSlo(o.slos!.url, s));
  const signals = [...(am ? [am] : []), ...user.signals, ...slos];
  try {
    if (o.dryRun) return await dryRun(a, [...(am ? [am] : []), ...slos]);
    if (am)
      o.log(
        `alerts: ${am.name}, stopping at a gate on ${am.describeGroups()}${o.alerts?.silenceExpected ? '; expected alerts silenced per step' : ''}`,
      );
    const session = await runSession({
      planFile: o.planFile,
      plan: o.plan,
      ports: { ...a.ports, signals, ...(am && o.alerts?.silenceExpected && { silencer: am }) },
      probes: [...a.probes, ...user.probes],
      log: o.log,
      ...(o.signal && { signal: o.signal }),
      lease: o.lease,
      run: o.run,
    });
    const reports = await writeReports(o, session.journalFile, lab);
    return { kind: 'ran', session, reports };
  } finally {
    a.close();
  }
}

function operatorFor(o: ExecuteOptions) {
  const base = join(dirname(o.planFile), basename(o.planFile, extname(o.planFile)));
  const terminal = new TerminalOperator({
    say: o.log,
    confirmDir: `${base}.confirm`,
    interactive: o.interactive,
    input: process.stdin,
    output: process.stdout,
  });
  if (!o.yes) return terminal;
  return {
    instruct: terminal.instruct.bind(terminal),
    ask: async (id: string, q: string) => {
      o.log(`[${id}] ${q} — yes (--yes)`);
      return true;
    },
  };
}

/**
 * A capi plan's adoption and hand-over act on the management cluster, whatever provisions the
 * nodes: its kubeconfig is required, and the kit whose objects are sent.
 */
async function capiConnection(
  plan: Plan,
  provisioner: RunProvisioner,
  given: CapiFlags,
  cwd: string,
): Promise<CapiConnection | undefined> {
  if (provisioner === 'capi' && plan.provisioner !== 'capi')
    throw usageError(
      `--provisioner capi needs a plan made for Cluster API; this one is for ${plan.provisioner}`,
      'make the plan again with ferry plan … --provisioner capi --kit KIT (a kit from ferry generate --provisioner capi)',
    );
  if (plan.provisioner !== 'capi') return undefined;
  const kubeconfig = given.mgmtKubeconfig;
  if (!kubeconfig)
    throw usageError(
      'missing --mgmt-kubeconfig: a capi plan adopts the cluster into the Cluster API management cluster and hands it over there',
      'pass --mgmt-kubeconfig FILE, the management cluster admin kubeconfig (the same as MGMT_KUBECONFIG in the runbook)',
    );
  const kitArg = given.kit ?? plan.source.kit?.path;
  if (!kitArg)
    throw usageError(
      'a capi run needs the kit whose Cluster API objects it sends, and the plan names none',
      'pass --kit KIT (the directory ferry generate --provisioner capi wrote)',
    );
  requireFileSync(resolve(cwd, kubeconfig), {
    flag: '--mgmt-kubeconfig',
    provide: 'pass --mgmt-kubeconfig the kubeconfig of the Cluster API management cluster',
  });
  const { readCapiKit } = await import('../capi/kit-objects.js');
  const kit = await readCapiKit(resolve(cwd, kitArg), kitArg);
  return {
    kubeconfig: resolve(cwd, kubeconfig),
    ...(given.mgmtContext && { context: given.mgmtContext }),
    kit,
    decommission: given.decommission,
  };
}

async function writeReports(
  o: ExecuteOptions,
  journalFile: string,
  lab: LabControl | undefined,
): Promise<string[]> {
  const standIn = lab ? await lab.standIn().catch(() => undefined) : undefined;
  const input = reportInputFromJournal(journalFile, {
    title: `ferry run: ${o.plan.cluster.name ?? basename(o.planFile)}`,
    plan: o.plan,
    planFile: o.planFile,
    ...(standIn && { notes: [standIn.note] }),
  });
  const base = join(dirname(o.planFile), basename(o.planFile, extname(o.planFile)));
  const targets = o.report ? [o.report] : [`${base}.report.md`, `${base}.report.html`];
  for (const t of targets) {
    await writeFileAtomic(t, t.endsWith('.html') ? renderReportHtml(input) : renderReportMarkdown(input), {
      origin: o.report ? { flag: '--report' } : {},
    });
    o.log(`report: ${t}`);
  }
  return targets;
}

async function dryRun(a: Assembled, now: HealthSignal[]): Promise<ExecuteOutcome> {
  const view = await a.etcd.observe().catch((err: unknown) => {
    throw new FerryError('unreachable', `etcd: ${(err as Error).message}`, {
      remediation: 'check the --etcd-* flags',
    });
  });
  const ready = await a.kube.readyz();
  const signals = await Promise.all(now.map(async (s) => ({ name: s.name, reading: await s.read() })));
  return {
    kind: 'dry-run',
    signals,
    etcd: {
      members: view.members.length,
      leader: view.members.find((m) => m.id === view.leaderId)?.name,
    },
    api: { server: a.kube.server, ready },
  };
}
