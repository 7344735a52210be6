import type { SourceRef } from '../snapshot/model.js';

/**
 * One file of the kit. Generators are pure: they return artifacts; only the kit writer touches disk
 * (atomically, in a temporary directory renamed into place).
 */
export interface Artifact {
  /** Path inside the kit, with `/`, e.g. "talos/controlplane-patch.yaml". */
  path: string;
  content: string;
  /** 0o600 for anything holding key material or tokens. */
  mode: 0o600 | 0o644 | 0o755;
  /** One line: what the file is for (goes into the kit README). */
  purpose: string;
  /** Order of use in the runbook/README; lower first. */
  step: number;
  /** Where each value came from: key = value path inside the file, e.g. "cluster.network.podSubnets". */
  provenance: Record<string, SourceRef[]>;
  /** True when the file holds private keys or token secrets (scanned by the secret-leak test). */
  secret: boolean;
  /** The schema generate checks the file against before anything is written (schema/artifacts.ts). */
  schema?: ArtifactSchema;
}

/**
 * `talos`: a machine-config stream, each document against the release's schema — `full` for a
 * complete config, `patch` for a strategic-merge patch. `capi`: Cluster API objects against their
 * CRDs, with the Talos patches they embed (strategicPatches) checked as `patch` documents.
 */
export type ArtifactSchema =
  | { kind: 'talos'; mode: 'full' | 'patch'; talosVersion: string }
  | { kind: 'capi'; talosVersion: string };

/** A value ferry needs but cannot derive: generate writes nothing and says what to provide (exit 2). */
export interface MissingInput {
  what: string;
  why: string;
  /** The flag or file that provides it, e.g. "--bootstrap-token" or "pki/etcd/ca.key". */
  provideWith: string;
}

/** A value ferry deliberately did not carry over (e.g. an apiserver flag on Talos's deny-list). */
export interface GenerateNote {
  severity: 'info' | 'warning';
  message: string;
  source?: SourceRef;
}

export type GeneratorResult =
  | { kind: 'ok'; artifacts: Artifact[]; notes: GenerateNote[] }
  | { kind: 'missing'; missing: MissingInput[]; notes: GenerateNote[] };
