import { createHash } from 'node:crypto';
import { describeSource, type SourceRef } from '../snapshot/model.js';
import { VERSION } from '../version.js';
import type { Artifact } from './artifact.js';
import type { GenerateContext } from './context.js';
import type { KitNote } from './readme.js';

/** describeSource, minus the empty "(from )" of values ferry made itself (random keys, tokens). */
export function describeRef(ref: SourceRef): string {
  if (ref.kind === 'derived' && ref.from.length === 0) return ref.note;
  return describeSource(ref);
}

export function describeRefs(refs: SourceRef[]): string {
  return refs.map(describeRef).join('; ');
}

/** provenance.json: every file of the kit with where each of its values came from. */
export function renderProvenance(ctx: GenerateContext, artifacts: Artifact[], notes: KitNote[]): string {
  const refs = (list: SourceRef[]) => list.map((ref) => ({ text: describeRef(ref), ref }));
  const doc = {
    kind: 'FerryKitProvenance',
    version: 1,
    ferryVersion: VERSION,
    generatedAt: ctx.now.toISOString(),
    snapshot: ctx.facts.snapshot,
    // The id (before the dot) names Secret kube-system/bootstrap-token-<id>; the secret part stays
    // in secrets.yaml. The plan's after-care deletes this token by its id.
    bootstrapTokenId: ctx.secrets?.bundle.secrets.bootstrapToken.slice(0, 6) ?? null,
    target: {
      talosVersion: ctx.target.talosVersion,
      kubernetesVersion: ctx.target.kubernetesVersion ?? null,
      kubeprism: ctx.target.kubeprism,
      provisioner: ctx.target.provisioner,
      infra: ctx.target.infra,
      choices: ctx.target.choices,
    },
    files: artifacts.map((a) => ({
      path: a.path,
      purpose: a.purpose,
      step: a.step,
      mode: `0${a.mode.toString(8)}`,
      secret: a.secret,
      sha256: createHash('sha256').update(a.content).digest('hex'),
      provenance: Object.fromEntries(Object.entries(a.provenance).map(([k, v]) => [k, refs(v)])),
    })),
    notes: notes.map((n) => ({
      generator: n.generator,
      severity: n.severity,
      message: n.message,
      ...(n.source ? { source: refs([n.source])[0] } : {}),
    })),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
