import { resolve } from 'node:path';
import { usageError } from '../errors.js';
import { TARGET_FLAG_OPTIONS, TARGET_FLAGS_USAGE, targetInputFromFlags } from '../facts/target.js';
import type { Fleet, FleetCluster } from '../fleet/config.js';
import { oneOf, parseDuration, parseFlags, requirePositional, wholeNumber } from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';

const FAIL_ON = ['blocker', 'risk', 'info', 'never'] as const;

const usage = `usage: ferry fleet audit FLEET [flags]

Audits every cluster of FLEET (a fleet.yaml: clusters by name, each a snapshot directory or a
kubeconfig, with labels, and management clusters whose Cluster API Clusters join them;
examples/fleet/fleet.yaml) side by side and writes one fleet report: a
verdict per cluster, every blocker and risk grouped across the fleet with the clusters it affects
and the fix once. Each cluster's full report (and a live cluster's snapshot) is written under
OUT/clusters/NAME/, the fleet report as OUT/fleet.json. A cluster that cannot be read is reported
with the reason and never stops the others.

flags:
  -o, --output FORMAT   table (default) | md | json | html (one offline page: a rule x cluster
                        matrix, a section per cluster, a filter box; ?filter=TEXT opens it filtered)
                        | sarif (a run per cluster, automationDetails.id ferry-fleet/NAME)
  --output-file FILE    write the report to FILE (atomically) instead of stdout
  --out DIR             where the per-cluster reports and fleet.json go (default fleet-audit)
  --concurrency N       clusters read at once (default 4)
  --baseline FILE       a previous OUT/fleet.json: also report what is new and what was fixed
  --fail-on LEVEL       blocker (default) | risk | info | never: a cluster with findings at or
                        above LEVEL, or with rules at or above it that could not read their
                        inputs, is not ready
  --sort-by LABEL       order the clusters by this label, then by name (default wave)
${TARGET_FLAGS_USAGE}

Exit codes: 0 every cluster ready; 1 a cluster is not (blocked, not observed, unreachable,
unreadable); 2 bad usage or a bad fleet file (naming the file, line and field); 4 a rule failed.
`;

const options = {
  output: { type: 'string', short: 'o' },
  'output-file': { type: 'string' },
  out: { type: 'string' },
  concurrency: { type: 'string' },
  baseline: { type: 'string' },
  'fail-on': { type: 'string' },
  'sort-by': { type: 'string' },
  ...TARGET_FLAG_OPTIONS,
} as const;

/** The file's clusters and the management clusters' (listed now; progress on stderr). */
async function members(fleet: Fleet, io: Io): Promise<FleetCluster[]> {
  if (fleet.management.length === 0) return fleet.clusters;
  const { discoverFleet } = await import('../app/fleet-discover.js');
  io.stderr(`listing the Clusters of ${fleet.management.length} management cluster(s)\n`);
  return discoverFleet(fleet, (line) => io.stderr(`  ${line}\n`));
}

async function audit(argv: string[], io: Io): Promise<0 | 1 | 2 | 4> {
  const { values, positionals } = parseFlags(argv, options, usage);
  const file = requirePositional(positionals, 'FLEET', usage);
  if (positionals.length > 1)
    throw usageError(`unexpected argument "${positionals[1]}"`, `see usage:\n${usage.trim()}`);
  const { FLEET_FORMATS } = await import('../fleet/render.js');
  const format = oneOf('output', values.output, [...FLEET_FORMATS, 'sarif'] as const, 'table');
  const failOn = oneOf('fail-on', values['fail-on'], FAIL_ON, 'blocker');
  const concurrency = wholeNumber('concurrency', values.concurrency, { min: 1, max: 64 }) ?? 4;
  const target = targetInputFromFlags(values);
  const path = (p: string) => resolve(io.cwd, p);
  const outDir = path(values.out ?? 'fleet-audit');

  const [{ loadFleet }, { parsePreviousFleetReport }, { readTextFile }] = await Promise.all([
    import('../fleet/config.js'),
    import('../fleet/previous.js'),
    import('../util/input-file.js'),
  ]);
  // What can be wrong is read before any cluster is.
  const fleet = await loadFleet(path(file), file);
  const previous =
    values.baseline === undefined
      ? undefined
      : {
          file: values.baseline,
          report: parsePreviousFleetReport(
            await readTextFile(path(values.baseline), {
              shown: values.baseline,
              flag: '--baseline',
              provide: 'give the fleet.json of a previous ferry fleet audit',
            }),
            values.baseline,
          ),
        };

  const [{ auditFleet }, { assembleFleetReport, fleetExitCode }, { renderFleetReport, summaryLine }, atomic] =
    await Promise.all([
      import('../app/fleet-audit.js'),
      import('../fleet/report.js'),
      import('../fleet/render.js'),
      import('../util/atomic-write.js'),
    ]);
  const clusters = await members(fleet, io);
  io.stderr(`auditing ${clusters.length} cluster(s) of ${file}, ${concurrency} at a time\n`);
  const results = await auditFleet({
    clusters,
    outDir,
    cwd: io.cwd,
    concurrency,
    target,
    now: () => new Date(),
    progress: (line) => io.stderr(`  ${line}\n`),
  });
  const report = assembleFleetReport({
    fleet: file,
    results,
    failOn,
    now: new Date(),
    sortBy: values['sort-by'] ?? 'wave',
    ...(previous && { previous }),
  });
  await atomic.writeFileAtomic(resolve(outDir, 'fleet.json'), renderFleetReport(report, 'json'));
  // SARIF carries each cluster's whole audit run, so it is built from the results themselves.
  const text =
    format === 'sarif'
      ? (await import('../fleet/sarif.js')).renderFleetSarif(results)
      : renderFleetReport(report, format);
  const outputFile = values['output-file'];
  if (outputFile !== undefined) {
    await atomic.writeFileAtomic(path(outputFile), text, {
      origin: { flag: '--output-file', shown: outputFile },
    });
    io.stdout(`${format} report written to ${outputFile}: ${summaryLine(report)}\n`);
  } else io.stdout(text);
  return fleetExitCode(report);
}

const planUsage = `usage: ferry fleet plan FLEET [flags]

Plans every cluster of FLEET as \`ferry plan\` does (the same refusals) and puts them in waves:
canary clusters first (label canary: "true"), then each value of the wave label in order
(unlabelled last), at most --max-parallel clusters migrating at once; a wave's estimate is the sum
over its rounds of the longest cluster of each. Each cluster's plan is written as
OUT/clusters/NAME/plan.json (for \`ferry run\`), the fleet plan as OUT/fleet-plan.json. Clusters that
cannot be planned are listed with why and are in no wave.

flags:
  -o, --output FORMAT   table (default) | md | json
  --out DIR             where the plans go (default fleet-plan)
  --concurrency N       clusters read and planned at once (default 4)
  --max-parallel K      clusters migrating at once within a wave (default 3)
  --wave-label LABEL    the label that orders the waves (default wave)
  --allow-blockers      plan clusters with unsuppressed blockers anyway (as ferry plan)
  --surge-replicas      scale a workload a budget holds at 0 up by one around its drains
${TARGET_FLAGS_USAGE}

Exit codes: 0 every cluster planned; 1 a cluster cannot be planned; 2 bad usage or a bad fleet file.
`;

const planOptions = {
  output: { type: 'string', short: 'o' },
  out: { type: 'string' },
  concurrency: { type: 'string' },
  'max-parallel': { type: 'string' },
  'wave-label': { type: 'string' },
  'allow-blockers': { type: 'boolean' },
  'surge-replicas': { type: 'boolean' },
  ...TARGET_FLAG_OPTIONS,
} as const;

async function plan(argv: string[], io: Io): Promise<0 | 1> {
  const { values, positionals } = parseFlags(argv, planOptions, planUsage);
  const file = requirePositional(positionals, 'FLEET', planUsage);
  if (positionals.length > 1)
    throw usageError(`unexpected argument "${positionals[1]}"`, `see usage:\n${planUsage.trim()}`);
  const format = oneOf('output', values.output, ['table', 'md', 'json'] as const, 'table');
  const concurrency = wholeNumber('concurrency', values.concurrency, { min: 1, max: 64 }) ?? 4;
  const maxParallel = wholeNumber('max-parallel', values['max-parallel'], { min: 1, max: 1000 }) ?? 3;
  const target = targetInputFromFlags(values);
  const outDir = resolve(io.cwd, values.out ?? 'fleet-plan');
  const { loadFleet } = await import('../fleet/config.js');
  const fleet = await loadFleet(resolve(io.cwd, file), file);
  const [{ planFleet }, { assembleFleetPlan, renderFleetPlan }, { writeFileAtomic }] = await Promise.all([
    import('../app/fleet-plan.js'),
    import('../fleet/waves.js'),
    import('../util/atomic-write.js'),
  ]);
  const clusters = await members(fleet, io);
  io.stderr(`planning ${clusters.length} cluster(s) of ${file}, ${concurrency} at a time\n`);
  const entries = await planFleet({
    clusters,
    outDir,
    cwd: io.cwd,
    concurrency,
    target,
    allowBlockers: values['allow-blockers'] === true,
    surgeReplicas: values['surge-replicas'] === true,
    now: () => new Date(),
    progress: (line) => io.stderr(`  ${line}\n`),
  });
  const fleetPlan = assembleFleetPlan({
    fleet: file,
    entries,
    maxParallel,
    waveLabel: values['wave-label'] ?? 'wave',
    now: new Date(),
  });
  await writeFileAtomic(resolve(outDir, 'fleet-plan.json'), renderFleetPlan(fleetPlan, 'json'));
  io.stdout(renderFleetPlan(fleetPlan, format));
  return fleetPlan.notPlanned > 0 ? 1 : 0;
}

const statusUsage = `usage: ferry fleet status FLEET [--plans DIR] [--max-age DUR] [--concurrency N] [-o table|json|html]

Where each cluster's migration stands, from the journal \`ferry run\` keeps beside the plan
\`ferry fleet plan\` wrote (DIR/clusters/NAME/plan.json; DIR defaults to fleet-plan): not planned,
not started, in progress (no end recorded: running, or killed, which --resume continues), stopped
at a gate or failed (the step and what the run said), completed. Journals are read without taking
their lock. Under each cluster: its Kubernetes and Talos versions from its Nodes (a snapshot's, or
the live cluster's), whether it came from a management cluster, and what the probes of its last
run measured (ferry run records them when it ends; a killed run records none). Then each
management cluster's newest backup (management[].backup in the fleet file), checksum-verified, and
its age. -o html writes one offline page (redirect it to a file), what needs attention first.

flags:
  --plans DIR        where ferry fleet plan wrote (default fleet-plan)
  --max-age DUR      a backup older than this needs attention, e.g. 26h, 8d
  --concurrency N    clusters read at once (default 4)
  -o table|json|html

Exit codes: 0 nothing needs attention; 1 a run stopped or failed, a journal could not be read, a
management cluster could not be listed, or a backup is missing, does not verify, could not be read
or is older than --max-age; 2 bad usage or a bad fleet file.
`;

const statusOptions = {
  output: { type: 'string', short: 'o' },
  plans: { type: 'string' },
  'max-age': { type: 'string' },
  concurrency: { type: 'string' },
} as const;

async function status(argv: string[], io: Io): Promise<0 | 1> {
  const { values, positionals } = parseFlags(argv, statusOptions, statusUsage);
  const file = requirePositional(positionals, 'FLEET', statusUsage);
  if (positionals.length > 1)
    throw usageError(`unexpected argument "${positionals[1]}"`, `see usage:\n${statusUsage.trim()}`);
  const format = oneOf('output', values.output, ['table', 'json', 'html'] as const, 'table');
  const maxAgeSeconds = parseDuration('max-age', values['max-age']);
  const concurrency = wholeNumber('concurrency', values.concurrency, { min: 1, max: 64 }) ?? 4;
  const { loadFleet } = await import('../fleet/config.js');
  const fleet = await loadFleet(resolve(io.cwd, file), file);
  const [{ fleetStatus }, { renderFleetStatus, fleetStatusExit }] = await Promise.all([
    import('../app/fleet-status.js'),
    import('../fleet/status-render.js'),
  ]);
  const s = await fleetStatus({
    fleet,
    clusters: await members(fleet, io),
    plansDir: resolve(io.cwd, values.plans ?? 'fleet-plan'),
    cwd: io.cwd,
    env: io.env,
    now: new Date(),
    concurrency,
  });
  io.stdout(renderFleetStatus(s, format, { fleetFile: file, maxAgeSeconds }));
  return fleetStatusExit(s, maxAgeSeconds);
}

const scheduleUsage = `usage: ferry fleet schedule FLEET -o DIR [--namespace NS] [--image IMAGE] [--schedule CRON] [--backup-schedule CRON] [--time-zone TZ] [--force]

Writes the nightly fleet audit for a management cluster: DIR/manifests.yaml (a namespace, a
ServiceAccount without an API token, a volume for the reports, a CronJob running ferry fleet audit
one at a time, unprivileged, with a read-only root) and DIR/fleet-secret/fleet.yaml (the fleet
with each kubeconfig as a key of the Secret ferry-fleet). Each management entry with a backup
(management[].backup with credentialsFile and recipientsFile) also gets a CronJob running ferry
mgmt backup (retention: 14 daily, 8 weekly), and a ClusterRole ferry-mgmt-backup with only what
that backup reads and patches, bound to the user ferry-mgmt-backup: the management kubeconfig
should authenticate as that user. Prints the two commands that install it: kubectl apply of the
manifests, and kubectl create secret from this machine's files (no credential is ever in the
manifests). Live clusters only: a snapshot entry is refused.

flags:
  -o, --output DIR      where to write (refused if it exists, unless --force)
  --namespace NS        default ferry
  --image IMAGE         default ferry:VERSION (Containerfile builds it)
  --schedule CRON       default "0 2 * * *"
  --backup-schedule CRON  default "0 1 * * *"
  --time-zone TZ        e.g. Europe/Berlin (default: the controller's)
`;

const scheduleOptions = {
  output: { type: 'string', short: 'o' },
  namespace: { type: 'string' },
  image: { type: 'string' },
  schedule: { type: 'string' },
  'backup-schedule': { type: 'string' },
  'time-zone': { type: 'string' },
  force: { type: 'boolean' },
} as const;

async function schedule(argv: string[], io: Io): Promise<0> {
  const { values, positionals } = parseFlags(argv, scheduleOptions, scheduleUsage);
  const file = requirePositional(positionals, 'FLEET', scheduleUsage);
  const out = values.output;
  if (out === undefined) throw usageError('missing -o DIR', 'say where the manifests go: -o DIR');
  const cronFlag = (flag: 'schedule' | 'backup-schedule', fallback: string) => {
    const cron = values[flag] ?? fallback;
    if (cron.trim().split(/\s+/).length !== 5)
      throw usageError(
        `--${flag} "${cron}" is not a cron schedule`,
        `give five fields, e.g. --${flag} "${fallback}"`,
      );
    return cron;
  };
  const cron = cronFlag('schedule', '0 2 * * *');
  const backupCron = cronFlag('backup-schedule', '0 1 * * *');
  const namespace = values.namespace ?? 'ferry';
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace))
    throw usageError(`--namespace "${namespace}" is not a namespace name`, 'give a lowercase DNS label');
  const [{ loadFleet }, { fleetSchedule }, { writeDirAtomic }, { VERSION }, fs] = await Promise.all([
    import('../fleet/config.js'),
    import('../fleet/schedule.js'),
    import('../util/atomic-write.js'),
    import('../version.js'),
    import('node:fs/promises'),
  ]);
  const fleet = await loadFleet(resolve(io.cwd, file), file);
  const dir = resolve(io.cwd, out);
  const s = fleetSchedule(fleet, {
    namespace,
    image: values.image ?? `ferry:${VERSION}`,
    schedule: cron,
    backupSchedule: backupCron,
    ...(values['time-zone'] !== undefined && { timeZone: values['time-zone'] }),
    fleetFile: file,
    secretFleetFile: resolve(dir, 'fleet-secret/fleet.yaml'),
  });
  await writeDirAtomic(
    dir,
    async (tmp) => {
      await fs.writeFile(resolve(tmp, 'manifests.yaml'), s.manifests);
      await fs.mkdir(resolve(tmp, 'fleet-secret'));
      await fs.writeFile(resolve(tmp, 'fleet-secret/fleet.yaml'), s.fleetYaml, { mode: 0o600 });
    },
    { force: values.force === true, origin: { flag: '--output' } },
  );
  io.stdout(
    [
      `wrote ${out}/manifests.yaml and ${out}/fleet-secret/fleet.yaml; install with:`,
      `  kubectl apply -f ${resolve(dir, 'manifests.yaml')}`,
      `  ${s.createSecret}`,
      ...(s.backups.length > 0
        ? [
            `the backup CronJobs (${s.backups.map((b) => b.cronJob).join(', ')}) use the management kubeconfig in the Secret:`,
            '  make it authenticate as user ferry-mgmt-backup (e.g. a client certificate with CN=ferry-mgmt-backup),',
            '  whom ClusterRole ferry-mgmt-backup grants only what the backup reads and patches',
          ]
        : []),
      '',
    ].join('\n'),
  );
  return 0;
}

export const command: Command = {
  name: 'fleet',
  summary:
    'many clusters as one: audit side by side (fleet audit), plan in waves (fleet plan), follow the runs (fleet status)',
  usage: `${usage}\n${planUsage}\n${statusUsage}\n${scheduleUsage}`,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    switch (sub) {
      case 'audit':
        return audit(rest, io);
      case 'plan':
        return plan(rest, io);
      case 'status':
        return status(rest, io);
      case 'schedule':
        return schedule(rest, io);
      default:
        throw usageError(
          sub === undefined ? 'missing subcommand' : `unknown subcommand "${sub}"`,
          `see usage:\n${usage.trim()}`,
        );
    }
  },
};
