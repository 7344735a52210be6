import type { Facts } from '../facts/model.js';
import type { Target } from '../facts/target.js';
import type { Snapshot, SourceRef } from '../snapshot/model.js';
import type { GeneratorResult, MissingInput } from './artifact.js';
import type { CapiOptions } from './capi/options.js';
import type { CiliumOptions } from './cilium.js';
import type { EncryptionConfigWithKeys } from './secrets/encryption.js';
import type { BuiltBundle } from './secrets/from-kubeadm.js';

/**
 * Everything a generator may read. Generators are pure functions of this context: the kit writer
 * (kit.ts) is the only code that touches the disk.
 */
export interface GenerateContext {
  snapshot: Snapshot;
  facts: Facts;
  target: Target;
  /** Operator switches that are not part of the Target. */
  options: {
    full: boolean;
    infra: string | undefined;
    capi?: CapiOptions;
    cilium?: CiliumOptions;
    /** Addresses the Talos control planes will have (--talos-endpoints), when the operator knows them. */
    talosEndpoints?: string[];
  };
  /**
   * The Talos secrets bundle built from the kubeadm PKI. Undefined only when an input it needs is
   * missing; that is already reported, so a generator that needs it returns `blocked()`.
   */
  secrets: BuiltBundle | undefined;
  /** The cluster's EncryptionConfiguration with its keys, when ferry has it. */
  encryptionConfig: EncryptionConfigWithKeys | undefined;
  /**
   * The cluster's own ClusterConfiguration text (kube-system/kubeadm-config, else kubeadm-config.yaml),
   * so kubeadm-side files can be edited without losing fields ferry does not model.
   */
  clusterConfigurationText: { text: string; source: SourceRef } | undefined;
  pkiDir: string;
  /** Comment lines every generated file starts with (ferry version, snapshot, target). */
  generatedBy: string[];
  now: Date;
}

export interface Generator {
  /** Short name, shown in notes and provenance.json. */
  name: string;
  generate(ctx: GenerateContext): GeneratorResult | Promise<GeneratorResult>;
}

/** A generator that cannot run because an input reported elsewhere is missing. */
export function blocked(): GeneratorResult {
  return { kind: 'missing', missing: [], notes: [] };
}

/** The value of a fact, or a MissingInput saying what to provide (from the fact's own `missing`). */
export function need<T>(
  fact: { key: string; title: string; value: T | undefined; missing?: string; provenance: SourceRef[] },
  why: string,
  missing: MissingInput[],
): T | undefined {
  if (fact.value !== undefined) return fact.value;
  missing.push({
    what: `${fact.title} (${fact.key})`,
    why,
    provideWith: fact.missing ?? 'a snapshot with this part',
  });
  return undefined;
}
