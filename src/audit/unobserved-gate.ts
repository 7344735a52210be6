/**
 * What `ferry snapshot` refuses to keep without --allow-partial: the reads the server refused or
 * does not serve whose inputs some audit rule depends on (engine.ts inputsOf). An unobserved input
 * no rule reads is only a warning.
 */
import type { NotObserved, SnapshotInput, SnapshotManifest } from '../snapshot/model.js';
import { inputsOf } from './engine.js';
import type { Rule } from './rule.js';

export interface UnobservedForAudit {
  /** The reads that did not happen and that some rule needs. */
  reads: NotObserved[];
  /** Their inputs, each once. */
  inputs: SnapshotInput[];
  /** The rules that would be skipped for them. */
  rules: string[];
}

export function unobservedForAudit(manifest: SnapshotManifest, rules: readonly Rule[]): UnobservedForAudit {
  const byRule = rules.map((r) => ({ id: r.id, inputs: new Set(inputsOf(r)) }));
  const reads = (manifest.unobserved ?? []).filter((n) => byRule.some((r) => r.inputs.has(n.input)));
  const inputs = [...new Set(reads.map((n) => n.input))];
  return {
    reads,
    inputs,
    rules: byRule.filter((r) => inputs.some((i) => r.inputs.has(i))).map((r) => r.id),
  };
}
