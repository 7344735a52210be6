import type { GeneratorResult } from '../artifact.js';
import { blocked, type GenerateContext, type Generator } from '../context.js';
import { describeRefs } from '../provenance.js';
import { renderTalosSecretsBundle } from './render.js';

/** Item 1 of the kit: secrets.yaml, in `talosctl gen secrets` format, mode 0600. */
export const secretsGenerator: Generator = { name: 'secrets', generate: generateSecrets };

export function generateSecrets(ctx: GenerateContext): GeneratorResult {
  if (!ctx.secrets) return blocked();
  const { bundle, provenance, notes } = ctx.secrets;
  // Comments only: YAML readers (talosctl, the Talos Terraform provider, CABPT) ignore them.
  const header = [
    '# Talos secrets bundle (talosctl gen secrets format). Holds the cluster CAs and tokens: keep it secret.',
    ...Object.entries(provenance).map(([k, refs]) => `# ${k}: ${describeRefs(refs)}`),
    ...ctx.generatedBy.map((l) => `# ${l}`),
  ].join('\n');
  const extra =
    ctx.target.talos.configFormat === 'multidoc' &&
    ctx.secrets.encryption.kind === 'import' &&
    ctx.secrets.encryption.field === 'aescbc'
      ? [
          {
            severity: 'warning' as const,
            message:
              'Talos v1.14 generates the aescbc key as a secretbox key named key1 (encryption.v114-generated-doc): the machine configs must carry an explicit KubeEtcdEncryptionConfig mirroring the cluster, not the generated one',
          },
        ]
      : [];
  return {
    kind: 'ok',
    notes: [...notes, ...extra],
    artifacts: [
      {
        path: 'secrets.yaml',
        content: `${header}\n${renderTalosSecretsBundle(bundle, ctx.target.talosVersion)}`,
        mode: 0o600,
        purpose:
          'Talos secrets bundle: the kubeadm CAs and service-account key, bootstrap and trustd tokens, Talos API CA',
        step: 10,
        provenance,
        secret: true,
      },
    ],
  };
}
