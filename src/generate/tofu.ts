/**
 * Item 7 of the kit: OpenTofu adopts the secrets bundle ferry built instead of generating one.
 * The siderolabs/talos provider's talos_machine_secrets resource imports from the path of a
 * secrets.yaml (its ImportState reads the file); an apply that *creates* it would draw new CAs,
 * and Talos nodes configured from those could never join this cluster.
 */
import type { GeneratorResult } from './artifact.js';
import { blocked, type GenerateContext, type Generator } from './context.js';

export const tofuGenerator: Generator = { name: 'tofu', generate: generateTofu };

export function generateTofu(ctx: GenerateContext): GeneratorResult {
  if (!ctx.secrets) return blocked();
  const minor = `v${ctx.target.talos.minor}`;
  const text = [
    '# OpenTofu / Terraform: adopt the Talos secrets bundle ferry built from the kubeadm PKI.',
    '#',
    '# Run from this directory:  tofu init && tofu plan',
    '# The plan must say "talos_machine_secrets.this will be imported" and "0 to add". If it says',
    '# "will be created", STOP: a created talos_machine_secrets generates new CAs, and Talos nodes',
    '# configured from them cannot join the existing cluster (their certificates would not be trusted',
    "# by the kubeadm control plane and etcd). The provider's Read is a no-op, so nothing would warn later.",
    '#',
    '# The state then holds every key of the cluster: use an encrypted state backend',
    '# (OpenTofu state encryption or a backend with encryption at rest and tight access).',
    ...ctx.generatedBy.map((l) => `# ${l}`),
    '',
    'terraform {',
    '  required_version = ">= 1.6.0" # import blocks in OpenTofu',
    '  required_providers {',
    '    talos = {',
    '      source = "siderolabs/talos"',
    '    }',
    '  }',
    '}',
    '',
    'import {',
    '  to = talos_machine_secrets.this',
    '  # The provider reads this file at import time (path relative to where tofu runs).',
    '  id = "../secrets.yaml"',
    '}',
    '',
    'resource "talos_machine_secrets" "this" {',
    `  talos_version = "${minor}"`,
    '',
    '  lifecycle {',
    '    # Destroying or replacing this resource means new cluster CAs: never.',
    '    prevent_destroy = true',
    '    # A lower talos_version than the state forces a replacement; the import records a default.',
    '    ignore_changes = [talos_version]',
    '  }',
    '}',
    '',
    'output "machine_secrets" {',
    '  value     = talos_machine_secrets.this.machine_secrets',
    '  sensitive = true',
    '}',
    '',
  ].join('\n');
  return {
    kind: 'ok',
    notes: [],
    artifacts: [
      {
        path: 'tofu/secrets.tf',
        content: text,
        mode: 0o644,
        purpose: 'OpenTofu import block that adopts secrets.yaml as talos_machine_secrets (never create it)',
        step: 90,
        provenance: {
          'import.id': [{ kind: 'derived', from: [], note: 'secrets.yaml written by this kit' }],
          'talos_machine_secrets.this.talos_version': [
            { kind: 'derived', from: [], note: `target Talos ${ctx.target.talosVersion}` },
          ],
        },
        secret: false,
      },
    ],
  };
}
