import { randomUUID } from 'node:crypto';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { describeError, type ExitCode, FerryError, usageError } from '../errors.js';
import { oneOf, parseFlags, parsePhases, requirePositional } from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';

const usage = `usage: ferry run PLAN --kubeconfig FILE --etcd-endpoints URLS --etcd-cacert F --etcd-cert F --etcd-key F [flags]

Executes plan.json (written by ferry plan) one step at a time: before each step a gate compares the
observed cluster to the state the step expects; a mismatch stops the run (exit 3) with what was
expected, what was seen and what to do. Every transition is journalled in SQLite beside the plan
(PLAN.journal.sqlite); a run stopped or killed continues with --resume, which re-observes the step
in flight and never repeats a destructive action blindly. One run per cluster: a lock file beside
the plan and a Lease kube-system/ferry-run. Probes measure API and etcd availability throughout.

  --kubeconfig FILE            admin kubeconfig talking to the control-plane endpoint (required)
  --context NAME               kubeconfig context
  --etcd-endpoints URLS        etcd client URLs, comma-separated (required)
  --etcd-cacert/--etcd-cert/--etcd-key FILE
                               etcd CA and a client certificate (kubeadm: pki/etcd/ca.crt,
                               pki/etcd/healthcheck-client.crt/.key) (required)
  --provisioner P              manual | exec | lab | capi (default: the plan's)
  --mgmt-kubeconfig FILE       capi: the Cluster API management cluster's admin kubeconfig (required
                               for a capi plan); --mgmt-context NAME
  --kit KIT                    capi: the kit ferry generate wrote (default: the plan's kit)
  --decommission P             capi: who resets and powers off the old kubeadm machines, which
                               Cluster API does not own: manual | exec | lab (default manual)
  --provision-cmd CMD          exec: boots a Talos node; runs with NODE_NAME, ROLE, ADDRESS, REPLACES,
                               TALOS_VERSION, MACHINE_CONFIG, CLUSTER_ENDPOINT, FERRY_STEP set; may print
                               FERRY_NODE_NAME=… FERRY_ADDRESS=… when it chooses them
  --decommission-cmd CMD       exec: resets and powers off a machine (NODE_NAME, ADDRESS, ROLE)
  --lb-cmd CMD                 takes a control plane in or out of the load balancer (LB_ACTION=add|remove,
                               NODE_NAME, ADDRESS, PORT); without it the operator does it when asked
  --lab-socket PATH            lab: the control socket of the process holding the lab
  --resume                     continue a stopped or killed run of this plan
  --mark-done STEP             with --resume: a step ferry cannot tell about, checked by hand: it happened
  --retry STEP                 with --resume: … it did not happen: run it again
  --accept-unobserved CHECK    let a gate pass a check ferry could not observe (a 403, a timeout),
                               after you verified it yourself; CHECK as the gate's message names it:
                               a section (apiservers, loadBalancer, machines, nodes, objects, etcd)
                               or SECTION:SUBJECT (apiservers:cp-2); repeatable; journalled
  --drain-timeout SECONDS      per-node drain timeout (default: the plan's)
  --drain-concurrency N        nodes of a worker batch drained at the same time (default 4; 1 to 64)
  --evict-bare-pods            also evict pods without a controller (nothing recreates them: an
                               outage you accept; journalled); without it the run stops before
                               evicting one, naming them
  --step-timeout KIND=SECONDS  replaces the plan's timeout for a step kind (repeatable)
  --gate-stable SECONDS        interval between the two observations of a gate (default: the plan's, 10)
  --lb-settle SECONDS          wait after a load-balancer change (default: the plan's, 90)
  --gate-grace SECONDS         how long a precondition may take to hold (default 30)
  --poll-ms MS                 pause between observations while a step waits (default 1000; 10 or more)
  --phases LIST                run only these phases, e.g. 0,2,4 (control planes only)
  --drill                      also run the optional drill
  --no-lease                   do not take the cluster Lease (the local lock still applies)
  --no-probes                  do not probe availability
  --probe-interval-ms MS       pause between API probe requests (default 100)
  --etcd-probe-interval-ms MS  pause between etcd probe writes (default 10, about 100 a second;
                               0 writes back to back, for a lab)
  --report FILE                report (.md or .html; default PLAN.report.md and .html beside the plan)
  --yes                        answer yes to every operator question (scripted runs: you did the work)
  --dry-run                    check the connections and show what would run; change nothing

Exit codes: 0 completed; 2 bad usage or input; 3 stopped at a gate (resumable with --resume);
4 internal error.
`;

const options = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  'etcd-endpoints': { type: 'string' },
  'etcd-cacert': { type: 'string' },
  'etcd-cert': { type: 'string' },
  'etcd-key': { type: 'string' },
  provisioner: { type: 'string' },
  'mgmt-kubeconfig': { type: 'string' },
  'mgmt-context': { type: 'string' },
  kit: { type: 'string' },
  decommission: { type: 'string' },
  'provision-cmd': { type: 'string' },
  'decommission-cmd': { type: 'string' },
  'lb-cmd': { type: 'string' },
  'lab-socket': { type: 'string' },
  resume: { type: 'boolean' },
  'mark-done': { type: 'string', multiple: true },
  retry: { type: 'string', multiple: true },
  'accept-unobserved': { type: 'string', multiple: true },
  'drain-timeout': { type: 'string' },
  'drain-concurrency': { type: 'string' },
  'evict-bare-pods': { type: 'boolean' },
  'step-timeout': { type: 'string', multiple: true },
  'gate-stable': { type: 'string' },
  'lb-settle': { type: 'string' },
  'gate-grace': { type: 'string' },
  'poll-ms': { type: 'string' },
  phases: { type: 'string' },
  drill: { type: 'boolean' },
  'no-lease': { type: 'boolean' },
  'no-probes': { type: 'boolean' },
  'probe-interval-ms': { type: 'string' },
  'etcd-probe-interval-ms': { type: 'string' },
  report: { type: 'string' },
  yes: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function seconds(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw usageError(`--${flag} must be a number, 0 or more; got "${v}"`);
  return n;
}

/** More than 64 parallel drains buys nothing: the batches' budgets bound them long before. */
export const MAX_DRAIN_CONCURRENCY = 64;

function parseDrainConcurrency(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < 1 || n > MAX_DRAIN_CONCURRENCY)
    throw usageError(
      `--drain-concurrency must be a whole number of nodes from 1 to ${MAX_DRAIN_CONCURRENCY}; got "${v}"`,
    );
  return n;
}

function required(v: string | undefined, flag: string): string {
  if (!v) throw usageError(`missing --${flag}`, `see usage:\n${usage.trim()}`);
  return v;
}

export const command: Command = {
  name: 'run',
  summary: 'execute a plan: gated, journalled, resumable, with availability probes',
  usage,
  async run(argv: string[], io: Io): Promise<ExitCode> {
    const { values, positionals } = parseFlags(argv, options, usage);
    if (values.help) {
      io.stdout(usage);
      return 0;
    }
    const planArg = requirePositional(positionals, 'PLAN (a plan.json written by ferry plan)', usage);
    const path = (p: string) => resolve(io.cwd, p);
    const planFile = path(planArg);
    const [
      { readPlan },
      { checkJournal, runSession },
      { assemble },
      { TerminalOperator },
      { STEP_KINDS },
      { parseAcceptUnobserved },
    ] = await Promise.all([
      import('../plan/load.js'),
      import('../app/session.js'),
      import('../app/assemble.js'),
      import('../run/operator.js'),
      import('../plan/model.js'),
      import('../run/unobserved.js'),
    ]);
    const acceptUnobserved = (values['accept-unobserved'] ?? []).map(parseAcceptUnobserved);
    const plan = await readPlan(planFile, planArg);
    // A real run checks its journal when it opens it; a dry run opens none, and checks it here.
    if (values['dry-run']) checkJournal(planFile);
    const provisioner = oneOf(
      'provisioner',
      values.provisioner,
      ['manual', 'exec', 'lab', 'capi'] as const,
      plan.provisioner,
    );
    const capi = await capiConnection(plan, provisioner, values, path, io.cwd);
    const timeouts: Record<string, number> = {};
    for (const kv of values['step-timeout'] ?? []) {
      const eq = kv.indexOf('=');
      const k = eq < 0 ? kv : kv.slice(0, eq);
      if (!k || !(STEP_KINDS as readonly string[]).includes(k))
        throw usageError(`--step-timeout ${kv}: unknown step kind ${k}`, `kinds: ${STEP_KINDS.join(', ')}`);
      const v = eq < 0 ? '' : kv.slice(eq + 1);
      const n = Number(v);
      // A missing or zero timeout would fail the step at once: refuse it rather than guess.
      if (v.trim() === '' || !Number.isFinite(n) || n <= 0)
        throw usageError(
          `--step-timeout ${kv}: give the seconds as KIND=SECONDS, more than 0`,
          `e.g. --step-timeout ${k}=600`,
        );
      timeouts[k] = n;
    }
    const drainConcurrency = parseDrainConcurrency(values['drain-concurrency']);
    const pollMs = values['poll-ms'] === undefined ? undefined : Number(values['poll-ms']);
    if (pollMs !== undefined && !(Number.isInteger(pollMs) && pollMs >= 10))
      throw usageError(
        `--poll-ms must be a whole number of milliseconds, 10 or more; got "${values['poll-ms']}"`,
      );
    const phases = parsePhases(values.phases);
    const connection = {
      kubeconfig: path(required(values.kubeconfig, 'kubeconfig')),
      ...(values.context && { context: values.context }),
      etcd: {
        endpoints: required(values['etcd-endpoints'], 'etcd-endpoints')
          .split(',')
          .map((e) => e.trim())
          .filter(Boolean),
        caFile: path(required(values['etcd-cacert'], 'etcd-cacert')),
        certFile: path(required(values['etcd-cert'], 'etcd-cert')),
        keyFile: path(required(values['etcd-key'], 'etcd-key')),
      },
    };
    const log = (line: string) => io.stdout(`${line}\n`);
    let lab: import('../adapters/provisioners/lab-control.js').LabControl | undefined;
    if (provisioner === 'lab' || capi?.decommission === 'lab') {
      const { remoteLabControl } = await import('../adapters/provisioners/lab-control.js');
      lab = remoteLabControl(path(required(values['lab-socket'], 'lab-socket')));
    }
    const base = join(dirname(planFile), basename(planFile, extname(planFile)));
    const terminal = new TerminalOperator({
      say: log,
      confirmDir: `${base}.confirm`,
      interactive: io.isTTY && process.stdin.isTTY === true,
      input: process.stdin,
      output: process.stdout,
    });
    const operator = values.yes
      ? {
          instruct: terminal.instruct.bind(terminal),
          ask: async (id: string, q: string) => {
            log(`[${id}] ${q} — yes (--yes)`);
            return true;
          },
        }
      : terminal;
    const runId = randomUUID();
    const probeInterval = seconds('probe-interval-ms', values['probe-interval-ms']);
    const etcdProbeInterval = seconds('etcd-probe-interval-ms', values['etcd-probe-interval-ms']);
    const a = assemble({
      connection,
      provisioner,
      exec: {
        ...(values['provision-cmd'] && { provisionCmd: values['provision-cmd'] }),
        ...(values['decommission-cmd'] && { decommissionCmd: values['decommission-cmd'] }),
        ...(values['lb-cmd'] && { lbCmd: values['lb-cmd'] }),
        cwd: io.cwd,
      },
      ...(lab && { lab }),
      ...(capi && { capi }),
      operator,
      probes: values['no-probes']
        ? false
        : {
            runId,
            ...(probeInterval !== undefined && { apiIntervalMs: probeInterval }),
            ...(etcdProbeInterval !== undefined && { etcdIntervalMs: etcdProbeInterval }),
          },
      log,
    });
    try {
      if (values['dry-run']) return await dryRun(plan, a, io);
      const ctl = new AbortController();
      const onSignal = (sig: string) => {
        log(`${sig}: stopping after the current observation; resume with --resume`);
        ctl.abort(new Error(sig));
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        const s = await runSession({
          planFile,
          plan,
          ports: a.ports,
          probes: a.probes,
          log,
          signal: ctl.signal,
          lease: values['no-lease'] !== true,
          run: {
            resume: values.resume === true,
            timeouts,
            ...(values['mark-done'] && { markDone: values['mark-done'] }),
            ...(values.retry && { retry: values.retry }),
            ...(acceptUnobserved.length > 0 && { acceptUnobserved }),
            ...(values['drain-timeout'] !== undefined && {
              drainTimeoutSeconds: seconds('drain-timeout', values['drain-timeout'])!,
            }),
            ...(values['gate-stable'] !== undefined && {
              gateStableSeconds: seconds('gate-stable', values['gate-stable'])!,
            }),
            ...(values['lb-settle'] !== undefined && {
              lbSettleSeconds: seconds('lb-settle', values['lb-settle'])!,
            }),
            ...(values['gate-grace'] !== undefined && {
              gateGraceSeconds: seconds('gate-grace', values['gate-grace'])!,
            }),
            ...(pollMs !== undefined && { pollMs }),
            ...(drainConcurrency !== undefined && { drainConcurrency }),
            ...(values['evict-bare-pods'] && { evictBarePods: true }),
            ...(phases && { phases }),
            ...(values.drill && { drill: true }),
          },
        });
        await writeReports(
          plan,
          planFile,
          s.journalFile,
          values.report ? path(values.report) : undefined,
          lab,
          log,
        );
        for (const p of s.probes) {
          const x = p.summary;
          log(
            `probe ${x.name}: ${x.failures}/${x.attempts} failed, longest failure window ${x.longestFailureWindowMs} ms, longest gap ${x.longestGapMs} ms${x.extra?.['lost'] !== undefined ? `, acknowledged writes lost ${x.extra['lost']}` : ''}`,
          );
        }
        if (s.result.status === 'completed') {
          log(`run completed: ${s.result.steps.length} step(s) this run; journal ${s.journalFile}`);
          return 0;
        }
        io.stderr(`${describeError(s.result.error)}\n`);
        io.stderr(
          `stopped at ${s.result.stoppedAt ?? '?'}; journal ${s.journalFile}; continue with: ferry run ${planArg} … --resume\n`,
        );
        return s.result.error?.exitCode ?? 3;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    } finally {
      a.close();
    }
  },
};

/**
 * A capi plan's adoption and hand-over act on the management cluster, whatever provisions the
 * nodes: its kubeconfig is required, and the kit whose objects are sent.
 */
async function capiConnection(
  plan: import('../plan/model.js').Plan,
  provisioner: string,
  values: { 'mgmt-kubeconfig'?: string; 'mgmt-context'?: string; kit?: string; decommission?: string },
  path: (p: string) => string,
  cwd: string,
): Promise<import('../app/assemble.js').CapiConnection | undefined> {
  if (provisioner === 'capi' && plan.provisioner !== 'capi')
    throw usageError(
      `--provisioner capi needs a plan made for Cluster API; this one is for ${plan.provisioner}`,
      'make the plan again with ferry plan … --provisioner capi --kit KIT (a kit from ferry generate --provisioner capi)',
    );
  if (plan.provisioner !== 'capi') return undefined;
  const kubeconfig = values['mgmt-kubeconfig'];
  if (!kubeconfig)
    throw usageError(
      'missing --mgmt-kubeconfig: a capi plan adopts the cluster into the Cluster API management cluster and hands it over there',
      'pass --mgmt-kubeconfig FILE, the management cluster admin kubeconfig (the same as MGMT_KUBECONFIG in the runbook)',
    );
  const kitArg = values.kit ?? plan.source.kit?.path;
  if (!kitArg)
    throw usageError(
      'a capi run needs the kit whose Cluster API objects it sends, and the plan names none',
      'pass --kit KIT (the directory ferry generate --provisioner capi wrote)',
    );
  const decommission = oneOf(
    'decommission',
    values.decommission,
    ['manual', 'exec', 'lab'] as const,
    'manual',
  );
  const { requireFileSync } = await import('../util/input-file.js');
  requireFileSync(path(kubeconfig), {
    flag: '--mgmt-kubeconfig',
    provide: 'pass --mgmt-kubeconfig the kubeconfig of the Cluster API management cluster',
  });
  const { readCapiKit } = await import('../capi/kit-objects.js');
  const kit = await readCapiKit(resolve(cwd, kitArg), kitArg);
  return {
    kubeconfig: path(kubeconfig),
    ...(values['mgmt-context'] && { context: values['mgmt-context'] }),
    kit,
    decommission,
  };
}

async function writeReports(
  plan: import('../plan/model.js').Plan,
  planFile: string,
  journalFile: string,
  explicit: string | undefined,
  lab: import('../adapters/provisioners/lab-control.js').LabControl | undefined,
  log: (l: string) => void,
): Promise<void> {
  const [{ Journal }, { probeRecordsFrom, renderReportHtml, renderReportMarkdown }, { writeFileAtomic }] =
    await Promise.all([
      import('../run/journal.js'),
      import('../run/report.js'),
      import('../util/atomic-write.js'),
    ]);
  const j = Journal.open(journalFile, { readonly: true });
  try {
    const standIn = lab ? await lab.standIn().catch(() => undefined) : undefined;
    const input = {
      title: `ferry run: ${plan.cluster.name ?? basename(planFile)}`,
      plan,
      planFile,
      runs: j.runs(),
      transitions: j.transitions(),
      runEnds: j.runEnds(),
      probes: probeRecordsFrom(j.observations({ purpose: 'probe' })),
      drainProgress: j.observations({ purpose: 'drain-progress' }),
      ...(standIn && { notes: [standIn.note] }),
    };
    const base = join(dirname(planFile), basename(planFile, extname(planFile)));
    const targets = explicit ? [explicit] : [`${base}.report.md`, `${base}.report.html`];
    for (const t of targets) {
      await writeFileAtomic(t, t.endsWith('.html') ? renderReportHtml(input) : renderReportMarkdown(input), {
        origin: explicit ? { flag: '--report' } : {},
      });
      log(`report: ${t}`);
    }
  } finally {
    j.close();
  }
}

async function dryRun(
  plan: import('../plan/model.js').Plan,
  a: import('../app/assemble.js').Assembled,
  io: Io,
): Promise<ExitCode> {
  const view = await a.etcd.observe().catch((err: unknown) => {
    throw new FerryError('unreachable', `etcd: ${(err as Error).message}`, {
      remediation: 'check the --etcd-* flags',
    });
  });
  const ready = await a.kube.readyz();
  io.stdout(
    `etcd: ${view.members.length} member(s), leader ${view.members.find((m) => m.id === view.leaderId)?.name ?? 'none'}\n`,
  );
  io.stdout(`API through ${a.kube.server}: /readyz ${ready ? 'ok' : 'FAILS'}\n`);
  for (const p of plan.phases) {
    io.stdout(`phase ${p.id} ${p.name}: ${p.steps.length} step(s)\n`);
    for (const s of p.steps)
      io.stdout(`  ${s.id}  ${s.action.performer}${s.destructive ? '  DESTRUCTIVE' : ''}  ${s.title}\n`);
  }
  io.stdout('dry run: nothing was changed\n');
  return 0;
}
