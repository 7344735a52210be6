import { resolve } from 'node:path';
import { type ExitCode, usageError } from '../errors.js';
import { TARGET_FLAG_OPTIONS, TARGET_FLAGS_USAGE, targetInputFromFlags } from '../facts/target.js';
import { CAPI_FLAG_OPTIONS, CAPI_FLAGS_USAGE, capiOptionsFromFlags } from '../generate/capi/options.js';
import { readCiliumValues } from '../generate/cilium-values.js';
import { parseFlags, requirePositional } from './args.js';
import type { Command } from './command.js';
import type { Io } from './io.js';

const usage = `usage: ferry generate SNAPSHOT --pki DIR -o KIT [flags] [target flags]

Writes the migration kit for the cluster in SNAPSHOT (a saved snapshot or a files directory): the
Talos secrets bundle made from the kubeadm PKI, the complete machine config of every planned Talos
node and the patches it is made of, a talosconfig for the new nodes, the kubeadm-side preparation
steps, the health-probe RBAC, OpenTofu import blocks, a README and provenance.json. Every value is
derived from the cluster; when ferry cannot derive one it writes nothing and lists what to provide
(exit 2). Every Talos document and Cluster API object is validated against the schemas ferry
carries (an invalid one is a bug: exit 4, nothing written). The kit is written atomically; files
holding keys or tokens are mode 0600.

  --pki DIR                  copy of /etc/kubernetes/pki from a control-plane node (required)
  -o, --output KIT           directory to create (required)
  --bootstrap-token T        kubeadm bootstrap token for the Talos nodes ([a-z0-9]{6}.[a-z0-9]{16});
                             make one with: kubeadm token create --ttl 0
                             (or set FERRY_BOOTSTRAP_TOKEN, which keeps it out of the process list)
  --encryption-config FILE   the file named by kube-apiserver --encryption-provider-config, with its
                             keys (default: the one in the snapshot directory, if there)
  --full                     also write complete worker configs per role and group
                             (talos/full/worker*.yaml), for workers beyond the plan
  --talos-endpoints LIST     addresses the Talos control planes will have, comma-separated: the
                             talosconfig's endpoints (default none: the runbook passes -e each time)
  --cilium-values FILE       the Cilium release's current values (helm get values cilium -o yaml),
                             merged under the Talos settings
  --force                    replace KIT if it exists
${TARGET_FLAGS_USAGE}
${CAPI_FLAGS_USAGE}

Exit codes: 0 kit written; 2 bad usage or input (nothing written); 4 internal error (nothing written).
`;

const options = {
  pki: { type: 'string' },
  output: { type: 'string', short: 'o' },
  'bootstrap-token': { type: 'string' },
  'encryption-config': { type: 'string' },
  full: { type: 'boolean' },
  'talos-endpoints': { type: 'string' },
  force: { type: 'boolean' },
  'cilium-values': { type: 'string' },
  ...TARGET_FLAG_OPTIONS,
  ...CAPI_FLAG_OPTIONS,
} as const;

/** Host or IP, optionally :port, as talosctl takes endpoints; nothing that could be a URL or a flag. */
const ENDPOINT = /^[A-Za-z0-9[][A-Za-z0-9.:[\]-]*$/;

function talosEndpoints(list: string): string[] {
  const out = list
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  const bad = out.find((e) => !ENDPOINT.test(e));
  if (out.length === 0 || bad !== undefined)
    throw usageError(
      `--talos-endpoints "${bad ?? list}" is not a list of addresses`,
      "give the Talos control planes' addresses, comma-separated, e.g. --talos-endpoints 10.20.0.31,10.20.0.32",
    );
  return out;
}

function mode(m: number): string {
  return `0${m.toString(8)}`;
}

export const command: Command = {
  name: 'generate',
  summary:
    'write the migration kit (Talos secrets, kubeadm-side preparation, RBAC, OpenTofu) from a snapshot',
  usage,
  async run(argv: string[], io: Io): Promise<ExitCode> {
    const { values, positionals } = parseFlags(argv, options, usage);
    const snapshotPath = requirePositional(positionals, 'SNAPSHOT (a snapshot directory)', usage);
    if (positionals.length > 1)
      throw usageError(`unexpected argument "${positionals[1]}"`, `see usage:\n${usage.trim()}`);
    if (values.pki === undefined)
      throw usageError(
        '--pki DIR is required',
        'pass a copy of /etc/kubernetes/pki from a control-plane node',
      );
    if (values.output === undefined)
      throw usageError('-o KIT is required', 'name the directory the kit is written to');
    const token = values['bootstrap-token'] ?? io.env['FERRY_BOOTSTRAP_TOKEN'];
    const { generateKit } = await import('../generate/kit.js');
    const result = await generateKit({
      snapshotPath,
      cwd: io.cwd,
      pkiDir: resolve(io.cwd, values.pki),
      outDir: resolve(io.cwd, values.output),
      target: targetInputFromFlags(values),
      ...(token !== undefined ? { bootstrapToken: token } : {}),
      ...(values['encryption-config'] !== undefined
        ? { encryptionConfigPath: resolve(io.cwd, values['encryption-config']) }
        : {}),
      full: values.full === true,
      ...(values['talos-endpoints'] !== undefined
        ? { talosEndpoints: talosEndpoints(values['talos-endpoints']) }
        : {}),
      force: values.force === true,
      capi: capiOptionsFromFlags(values),
      ...(values['cilium-values'] !== undefined
        ? {
            cilium: {
              currentValues: await readCiliumValues(
                resolve(io.cwd, values['cilium-values']),
                values['cilium-values'],
              ),
            },
          }
        : {}),
    });
    const t = result.facts.target;
    const lines = [
      `wrote ${result.outDir} (${result.files.length} files) for Talos ${t.talosVersion}, provisioner ${t.provisioner}`,
      ...t.choices.map((c) => `  ${c.field}: ${c.value ?? '(unknown)'} (${c.origin})`),
      '',
      ...result.files.map((f) => `  ${mode(f.mode)}${f.secret ? ' secret' : '       '}  ${f.path}`),
      '',
    ];
    io.stdout(`${lines.join('\n')}\n`);
    const warnings = result.notes.filter((n) => n.severity === 'warning');
    for (const w of warnings) io.stderr(`warning: (${w.generator}) ${w.message}\n`);
    io.stdout(`next: read ${resolve(result.outDir, 'README.md')}\n`);
    return 0;
  },
};
