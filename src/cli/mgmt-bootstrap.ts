import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { type ExitCode, FerryError, usageError } from '../errors.js';
import type { StageKind } from '../mgmt/bootstrap/stages.js';
import { noPositionals, parseFlags, seconds } from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';
import { providerTimeoutSeconds as providerTimeout } from './mgmt-flags.js';

const usage = `usage: ferry mgmt bootstrap --config mgmt.yaml [--dry-run] [--state-dir DIR] [flags]

Builds a Cluster API management cluster on Talos from an ephemeral kind cluster and pivots to it:
kind cluster → clusterctl.yaml with pinned providers → clusterctl init → the credentials Secret →
the management cluster's manifests → wait for its control plane (clusterctl describe shown as it
changes) → its kubeconfig and talosconfig → Cilium and the Talos CCM (Helm) → wait for every
control plane → cert-manager and the Cluster API operator with the same providers → clusterctl move
--to-directory (kind) / --from-directory (the new cluster) → delete kind.

Each stage is journaled in DIR (default .ferry-mgmt-<cluster> beside mgmt.yaml). Running the same
command again after a failure or a crash continues at the stage that did not finish. Before kind
starts, the Proxmox template is read back with the token and checked.

  --config FILE            the management cluster (see examples/mgmt/mgmt.yaml)
  --dry-run                print every command, the Proxmox setup (pveum, template) and the files
                           ferry would write; nothing runs
  --state-dir DIR          journal, kubeconfigs (0600), clusterctl.yaml, the move directory
  --wait-timeout SECONDS   how long to wait for the control plane, each wait (default 1800)
  --provider-timeout SECONDS  how long each provider may take to become ready (default 600)
  --poll-interval SECONDS  how often to look at the control plane while waiting (default 10)
  --accept-config-change   continue a journal that was started with a different mgmt.yaml
  --skip-template-check    do not read the Proxmox template back before kind starts

Exit codes: 0 the management cluster runs and holds itself; 2 bad usage, a bad mgmt.yaml, a tool
missing or of an unsupported version, a template that does not fit; 3 a stage stopped (a tool
failed, a wait timed out): fix the cause and run the same command again; 4 internal error.
`;

const options = {
  config: { type: 'string' },
  'dry-run': { type: 'boolean' },
  'state-dir': { type: 'string' },
  'wait-timeout': { type: 'string' },
  'provider-timeout': { type: 'string' },
  'poll-interval': { type: 'string' },
  'accept-config-change': { type: 'boolean' },
  'skip-template-check': { type: 'boolean' },
} as const;

export async function runMgmtBootstrap(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, options, usage);
  noPositionals(positionals, usage);
  if (values.config === undefined)
    throw usageError('missing --config mgmt.yaml', `see usage:\n${usage.trim()}`);
  const positive = { positive: true };
  const waitTimeoutSeconds = seconds('wait-timeout', values['wait-timeout'], positive) ?? 1800;
  const providerTimeoutSeconds = providerTimeout(values['provider-timeout']);
  const pollMs = (seconds('poll-interval', values['poll-interval'], positive) ?? 10) * 1000;

  const { loadMgmtConfig } = await import('../mgmt/bootstrap/config.js');
  const { buildStages, statePaths, renderCmd } = await import('../mgmt/bootstrap/stages.js');
  const configPath = resolve(io.cwd, values.config);
  const config = await loadMgmtConfig(configPath, values.config);
  const stateDir = resolve(
    io.cwd,
    values['state-dir'] ?? join(dirname(values.config), `.ferry-mgmt-${config.cluster.name}`),
  );
  const paths = statePaths(stateDir, config.cluster.name);
  const stages = buildStages(config, paths, { waitTimeoutSeconds, providerTimeoutSeconds });

  if (values['dry-run'] === true) {
    const { pveumCommands, templateCommands } = await import('../mgmt/bootstrap/proxmox.js');
    const out: string[] = [
      `# ferry mgmt bootstrap --dry-run: ${config.file}; state in ${stateDir}; nothing runs`,
    ];
    if (config.infrastructure.kind === 'proxmox') {
      out.push('', '# Proxmox, once, on a Proxmox node (as root): the CAPMOX user with least privilege');
      out.push(...pveumCommands(config, config.infrastructure));
      out.push('', '# the Talos template (Image Factory schematic with qemu-guest-agent, nocloud image)');
      out.push(...templateCommands(config, config.infrastructure));
    } else {
      const v = await import('../mgmt/bootstrap/vsphere.js');
      const i = config.infrastructure;
      out.push(
        '',
        '# vSphere, once, as a vCenter administrator: export GOVC_USERNAME and GOVC_PASSWORD yourself (govc reads them from the environment; no password on a command line)',
      );
      out.push(...v.govcEnvCommands(i));
      out.push('', "# CAPV's role with least privilege, and where it holds");
      out.push(...v.govcRoleCommands(i));
      out.push('', '# the Talos template (Image Factory schematic with vmtoolsd-guest-agent, vmware OVA)');
      out.push(...v.govcTemplateCommands(config, i));
    }
    out.push('', `mkdir -p -m 0700 ${stateDir}`);
    for (const [i, s] of stages.entries()) {
      out.push('', `# [${i + 1}/${stages.length}] ${s.kind}: ${s.title}`);
      if (s.kind === 'clusterctl-config') out.push(`mkdir -p -m 0700 ${paths.xdg}`);
      if (s.kind === 'wait-control-plane' || s.kind === 'wait-nodes')
        out.push(
          `kubectl ${s.get.args.slice(0, 4).join(' ')} wait taloscontrolplane/${s.tcp} --for=jsonpath='${s.kind === 'wait-nodes' ? `{.status.readyReplicas}'=${s.replicas}` : "{.status.ready}'=true"} --timeout=${s.timeoutSeconds}s`,
        );
      if (s.kind === 'clusterctl-config' || s.kind === 'manifests')
        out.push(`cat > ${s.path} <<'EOF'\n${s.text.replace(/\n$/, '')}\nEOF`);
      if (s.kind === 'fetch-secrets')
        for (const f of s.files) out.push(`(umask 077; ${renderCmd(f.cmd)} | base64 -d > ${f.path})`);
      if (s.kind === 'pivot-export')
        out.push(
          `mkdir -p -m 0700 ${paths.moveDir}`,
          `kubectl ${s.labelArgs.join(' ')} $(kubectl ${s.listSecrets.args.join(' ')} | grep '^${s.labelPrefix}') clusterctl.cluster.x-k8s.io/move=`,
        );
      for (const c of s.commands) out.push(renderCmd(c));
    }
    io.stdout(`${out.join('\n')}\n`);
    return 0;
  }

  const text = readFileSync(configPath);
  const digest = createHash('sha256').update(text).digest('hex');
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const { acquireLocalLock } = await import('../run/lock.js');
  const lock = await acquireLocalLock(join(stateDir, 'bootstrap.lock'), {
    lineage: digest,
    runId: String(process.pid),
  });
  const { StageJournal } = await import('../mgmt/stage-journal.js');
  const journal = StageJournal.open<StageKind>(paths.journal, digest);
  try {
    const earlier = journal.stagesDigest();
    if (earlier !== undefined && earlier !== digest && values['accept-config-change'] !== true)
      throw new FerryError(
        'input',
        `${stateDir} holds a bootstrap started with a different ${values.config}`,
        {
          location: { file: values.config },
          remediation:
            'put the old mgmt.yaml back, use another --state-dir, or pass --accept-config-change if the change is meant',
        },
      );
    const { Tools } = await import('../mgmt/tools/adapter.js');
    const { secretEnv } = await import('../mgmt/bootstrap/secrets.js');
    let current: StageKind | 'preflight' = 'preflight';
    const tools = new Tools({
      env: io.env,
      sink: (tool, stream, line) => journal.line(current, tool, stream, line),
      dropEnv: secretEnv(config.infrastructure),
    });
    const progress = (line: string) => io.stderr(`${line}\n`);
    // Preflight: every tool present and in range before anything is created.
    const { preflightTools } = await import('../mgmt/bootstrap/preflight.js');
    await preflightTools(tools, {
      need: ['kind', 'kubectl', 'helm'],
      core: config.providers.core,
      coreSource: 'providers.core',
      progress,
    });
    if (config.infrastructure.kind === 'proxmox' && values['skip-template-check'] !== true) {
      const { readSecret } = await import('../mgmt/bootstrap/secrets.js');
      const { proxmoxApi, checkTemplate } = await import('../mgmt/bootstrap/proxmox-api.js');
      const p = config.infrastructure;
      const secret = await readSecret(p.tokenSecret, io.env, 'infrastructure.proxmox.tokenSecret');
      tools.secrets.add(secret);
      const check = checkTemplate(
        await proxmoxApi({ url: p.url, tokenId: p.tokenId, secret, insecure: p.insecure }).vmConfig(
          p.node,
          p.templateId,
        ),
      );
      if (!check.ok)
        throw new FerryError(
          'input',
          `the Proxmox template ${p.templateId} on ${p.node} does not fit: ${check.problems.join('; ')}`,
          {
            location: { file: config.file, field: 'infrastructure.proxmox.templateId' },
            remediation: 'rebuild it with the template commands `ferry mgmt bootstrap --dry-run` prints',
          },
        );
      progress(`Proxmox template ${p.templateId} (${check.name ?? 'unnamed'}) on ${p.node}: fits`);
    }
    const { runStages, BOOTSTRAP_AGAIN } = await import('../mgmt/bootstrap/run.js');
    const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
    const outcome = await runStages(stages, {
      config,
      paths,
      tools,
      journal,
      progress: (line) => progress(line),
      again: BOOTSTRAP_AGAIN,
      env: io.env,
      pollMs,
      sleep,
      now: () => Date.now(),
      onStage: (k) => {
        current = k;
      },
    });
    io.stdout(
      `management cluster ${config.cluster.name} runs and holds its own Cluster API objects; kubeconfig ${paths.mgmtKubeconfig}, talosconfig ${paths.talosconfig}` +
        `${outcome.skipped.length > 0 ? ` (${outcome.skipped.length} stage(s) were done by an earlier run)` : ''}\n`,
    );
    return 0;
  } finally {
    journal.close();
    await lock.release();
  }
}

export const command: Command = {
  name: 'mgmt bootstrap',
  summary: 'build a Cluster API management cluster on Talos from kind, and pivot to it',
  usage,
  run: runMgmtBootstrap,
};
