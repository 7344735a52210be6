/** `ferry run`'s flags: what it accepts, and their translation into the settings of a run. */
import { resolve } from 'node:path';
import { parseSlo } from '../adapters/prometheus/slo.js';
import type { ExecuteOptions } from '../app/execute.js';
import { usageError } from '../errors.js';
import type { Plan } from '../plan/model.js';
import { parseAcceptUnobserved } from '../run/unobserved.js';
import { parseMatcherGroup } from '../util/label-match.js';
import {
  oneOf,
  parseDrainConcurrency,
  parseFlags,
  parsePhases,
  parseProbeFlag,
  parseProvisionConcurrency,
  parseStepTimeouts,
  present,
  required,
  seconds,
  wholeNumber,
} from './args.js';
import type { Io } from './io.js';

export const usage = `usage: ferry run PLAN --kubeconfig FILE --etcd-endpoints URLS --etcd-cacert F --etcd-cert F --etcd-key F [flags]

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
  --provision-concurrency N    exec: provision commands of a worker batch run side by side, at most
                               N at once (default 4; 1 to 64)
  --decommission-cmd CMD       exec: resets and powers off a machine (NODE_NAME, ADDRESS, ROLE)
  --lb-cmd CMD                 takes a control plane in or out of the load balancer (LB_ACTION=add|remove,
                               NODE_NAME, ADDRESS, PORT); without it the operator does it when asked
  --lab-socket PATH            lab: the control socket of the process holding the lab
  --resume                     continue a stopped or killed run of this plan
  --mark-done STEP             with --resume: a step ferry cannot tell about, checked by hand: it happened
  --retry STEP                 with --resume: … it did not happen: run it again
  --accept-unobserved CHECK    let a gate pass a check ferry could not observe (a 403, a timeout),
                               after you verified it yourself; CHECK as the gate's message names it:
                               a section (apiservers, loadBalancer, machines, nodes, objects, budgets, etcd)
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
  --alertmanager URL           the cluster's Alertmanager (http:// or https://): a firing alert that
                               matches stops the run at the next gate (exit 3), naming it; one that
                               cannot be read stops it too
  --alert-matcher M            which alerts stop it, in Alertmanager's syntax: 'severity=critical'
                               (the default), 'severity=~"critical|warning",namespace!=dev'; the
                               matchers of one flag all hold; repeatable: any flag's group
  --probe URL[,OPTION…]        one of your own HTTP(S) endpoints, requested throughout the run (a new
                               connection each time) and in its report; at each gate, more failed
                               requests since the last gate than allowed stop the run (exit 3).
                               Options: expect=STATUS (default 200), max-fail=PERCENT (default 0%),
                               interval=MS (default 250), timeout=MS (default 2000); repeatable
  --prometheus URL             the cluster's Prometheus, for --slo
  --slo 'QUERY<=VALUE'         an instant query evaluated at each gate (<, <=, >, >=, ==); a series
                               that breaks it stops the run (exit 3), naming the series and its
                               value; a query that returns nothing or fails stops it too; repeatable
  --silence-expected           silence, for each step's duration, the alerts the step raises by
                               design (a node going away, an etcd member or leader changing:
                               KubeNodeNotReady, etcdMembersDown…), scoped to its node; journalled
  --probe-interval-ms MS       pause between API probe requests (default 100)
  --etcd-probe-interval-ms MS  pause between etcd probe writes (default 10, about 100 a second;
                               0 writes back to back, for a lab)
  --snapshot-recipient age1…   encrypt the etcd snapshots the run takes (steps 0.03, 4.01) with age
                               for this recipient (repeatable; --snapshot-recipients-file FILE too):
                               FILE.age, 0600, the plaintext removed. Either way each snapshot's
                               integrity hash is checked and its sha256 journalled
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
  'provision-concurrency': { type: 'string' },
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
  alertmanager: { type: 'string' },
  probe: { type: 'string', multiple: true },
  prometheus: { type: 'string' },
  slo: { type: 'string', multiple: true },
  'alert-matcher': { type: 'string', multiple: true },
  'silence-expected': { type: 'boolean' },
  'probe-interval-ms': { type: 'string' },
  'etcd-probe-interval-ms': { type: 'string' },
  report: { type: 'string' },
  'snapshot-recipient': { type: 'string', multiple: true },
  'snapshot-recipients-file': { type: 'string', multiple: true },
  yes: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type RunFlags = ReturnType<typeof parseRunFlags>['values'];

export function parseRunFlags(argv: string[]) {
  return parseFlags(argv, options, usage);
}

const PROVISIONERS = ['manual', 'exec', 'lab', 'capi'] as const;
const DECOMMISSIONERS = ['manual', 'exec', 'lab'] as const;

/** The run the flags ask for; every bad value is a usage error (exit 2) naming its flag. */
export function runSettings(
  values: RunFlags,
  plan: Plan,
  planFile: string,
  io: Io,
): Omit<ExecuteOptions, 'log' | 'signal'> {
  const path = (p: string) => resolve(io.cwd, p);
  const given = (p: string | undefined) => (p === undefined ? undefined : path(p));
  const need = (flag: keyof RunFlags & string) =>
    required(flag, values[flag] as string | undefined, `see usage:\n${usage.trim()}`);
  const provisioner = oneOf('provisioner', values.provisioner, PROVISIONERS, plan.provisioner);
  const decommission = oneOf('decommission', values.decommission, DECOMMISSIONERS, 'manual');
  const accepted = (values['accept-unobserved'] ?? []).map(parseAcceptUnobserved);
  const ms = { unit: 'milliseconds' };
  const run = {
    resume: values.resume === true,
    timeouts: parseStepTimeouts(values['step-timeout']),
    ...present({
      markDone: values['mark-done'],
      retry: values.retry,
      acceptUnobserved: accepted.length > 0 ? accepted : undefined,
      drainTimeoutSeconds: seconds('drain-timeout', values['drain-timeout']),
      gateStableSeconds: seconds('gate-stable', values['gate-stable']),
      lbSettleSeconds: seconds('lb-settle', values['lb-settle']),
      gateGraceSeconds: seconds('gate-grace', values['gate-grace']),
      pollMs: wholeNumber('poll-ms', values['poll-ms'], { min: 10, unit: 'milliseconds' }),
      drainConcurrency: parseDrainConcurrency(values['drain-concurrency']),
      evictBarePods: values['evict-bare-pods'] || undefined,
      phases: parsePhases(values.phases),
      drill: values.drill || undefined,
    }),
  };
  const probes = present({
    apiIntervalMs: seconds('probe-interval-ms', values['probe-interval-ms'], ms),
    etcdIntervalMs: seconds('etcd-probe-interval-ms', values['etcd-probe-interval-ms'], ms),
  });
  const connection = {
    kubeconfig: path(need('kubeconfig')),
    ...present({ context: values.context || undefined }),
    etcd: {
      endpoints: need('etcd-endpoints')
        .split(',')
        .map((e) => e.trim())
        .filter(Boolean),
      caFile: path(need('etcd-cacert')),
      certFile: path(need('etcd-cert')),
      keyFile: path(need('etcd-key')),
    },
  };
  return {
    planFile,
    plan,
    connection,
    provisioner,
    capi: {
      mgmtKubeconfig: values['mgmt-kubeconfig'],
      mgmtContext: values['mgmt-context'],
      kit: values.kit,
      decommission,
    },
    labSocket: given(values['lab-socket']),
    exec: {
      ...present({
        provisionCmd: values['provision-cmd'] || undefined,
        decommissionCmd: values['decommission-cmd'] || undefined,
        lbCmd: values['lb-cmd'] || undefined,
        provisionConcurrency: parseProvisionConcurrency(values['provision-concurrency']),
      }),
      cwd: io.cwd,
    },
    yes: values.yes === true,
    interactive: io.isTTY && process.stdin.isTTY === true,
    probes: values['no-probes'] ? false : probes,
    alerts: alertSettings(values),
    userProbes: (values.probe ?? []).map(parseProbeFlag),
    slos: sloSettings(values),
    lease: values['no-lease'] !== true,
    run,
    report: given(values.report),
    dryRun: values['dry-run'] === true,
    cwd: io.cwd,
  };
}

/** `--alertmanager`, `--alert-matcher`, `--silence-expected`: each wrong value names its flag. */
function alertSettings(values: RunFlags): ExecuteOptions['alerts'] {
  const url = values.alertmanager;
  const matchers = values['alert-matcher'] ?? [];
  if (url === undefined) {
    const stray =
      matchers.length > 0 ? '--alert-matcher' : values['silence-expected'] ? '--silence-expected' : undefined;
    if (stray)
      throw usageError(
        `${stray} needs --alertmanager URL`,
        'pass the Alertmanager ferry should read, e.g. --alertmanager http://alertmanager.monitoring:9093',
      );
    return undefined;
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    throw usageError(
      `--alertmanager ${url}: not an http:// or https:// URL`,
      'give its base URL, e.g. --alertmanager http://127.0.0.1:9093',
    );
  const groups = matchers.map((m) => {
    const g = parseMatcherGroup(m);
    if ('error' in g)
      throw usageError(
        `--alert-matcher ${m}: ${g.error}`,
        "write matchers as Alertmanager does: 'severity=critical' or 'severity=~\"critical|warning\",namespace!=dev'",
      );
    return g;
  });
  return { url, ...(groups.length > 0 && { groups }), silenceExpected: values['silence-expected'] === true };
}

/** `--prometheus URL` with its `--slo` expressions; one without the other is a usage error. */
function sloSettings(values: RunFlags): ExecuteOptions['slos'] {
  const url = values.prometheus;
  const texts = values.slo ?? [];
  if (url === undefined && texts.length === 0) return undefined;
  if (url === undefined)
    throw usageError(
      '--slo needs --prometheus URL',
      'pass the Prometheus to query, e.g. --prometheus http://prometheus.monitoring:9090',
    );
  if (texts.length === 0)
    throw usageError(
      '--prometheus needs at least one --slo',
      "say what must hold, e.g. --slo 'max(rate(http_requests_errors_total[5m])) <= 0.01'",
    );
  if (!isHttpUrl(url))
    throw usageError(
      `--prometheus ${url}: not an http:// or https:// URL`,
      'give its base URL, e.g. --prometheus http://127.0.0.1:9090',
    );
  const slos = texts.map((t) => {
    const s = parseSlo(t);
    if ('error' in s) throw usageError(`--slo ${t}: ${s.error}`, 'e.g. --slo \'sum(up{job="etcd"}) >= 3\'');
    return s;
  });
  return { url, slos };
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
