/**
 * The findings model: one shape for every rule and every renderer (design.md "Findings").
 * A renderer never sees anything but an AuditReport built from these types, so the console, JSON,
 * SARIF, JUnit, Markdown and HTML outputs cannot disagree (lessons.md: kubescape's console said
 * "All controls passed" while its SARIF held findings).
 */
import { createHash } from 'node:crypto';
import { describeSource, type SourceRef } from '../snapshot/model.js';
import type { KitCheck } from './kit-checks.js';

export type Severity = 'blocker' | 'risk' | 'info';

/** Most severe first: the order of every report. */
export const SEVERITIES: readonly Severity[] = ['blocker', 'risk', 'info'];

export function severityRank(s: Severity): number {
  return SEVERITIES.indexOf(s);
}

/** A Kubernetes object (or a kubeadm/PKI "logical" object) a finding is about. */
export interface ObjectRef {
  /** e.g. "apps/v1", "v1". Not part of the fingerprint: a version bump is the same object. */
  apiVersion?: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
}

/** What a finding observed versus what the target needs; all optional, all plain strings. */
export interface Observation {
  /** The value found in the cluster. */
  observed?: string;
  /** The value the target would use or needs. */
  expected?: string;
  /** One short line of context. */
  note?: string;
}

/**
 * One piece of evidence. Each finding states which source produced it and the field path
 * (lessons.md: "show the evidence"; no finding without a source).
 */
export type Evidence =
  | ({ kind: 'object'; object: ObjectRef; field?: string } & Observation)
  | ({ kind: 'file'; path: string; line?: number; field?: string } & Observation)
  | ({ kind: 'flag'; component: string; node?: string; flag: string; from?: SourceRef } & Observation)
  | ({ kind: 'node'; node: string; field?: string } & Observation)
  | ({
      kind: 'etcd-member';
      memberId?: string;
      name?: string;
      endpoint?: string;
      field?: string;
    } & Observation)
  | ({ kind: 'tls'; address: string; field?: string } & Observation)
  /** An answer of the API server itself (GET /version). */
  | ({ kind: 'api'; server: string; path: string; field?: string } & Observation)
  | ({ kind: 'target'; field: string } & Observation);

/** Turns a provenance SourceRef (facts, snapshot) into evidence, so rules can quote facts directly. */
export function evidenceFromSource(ref: SourceRef, obs: Observation = {}): Evidence {
  switch (ref.kind) {
    case 'object':
      return {
        kind: 'object',
        object: {
          kind: ref.objectKind,
          name: ref.name,
          ...(ref.namespace !== undefined ? { namespace: ref.namespace } : {}),
        },
        ...(ref.field !== undefined ? { field: ref.field } : {}),
        ...obs,
      };
    case 'file':
      return {
        kind: 'file',
        path: ref.path,
        ...(ref.line !== undefined ? { line: ref.line } : {}),
        ...(ref.field !== undefined ? { field: ref.field } : {}),
        ...obs,
      };
    case 'flag':
      return {
        kind: 'flag',
        component: ref.component,
        flag: ref.flag,
        from: ref.from,
        ...(ref.node !== undefined ? { node: ref.node } : {}),
        ...obs,
      };
    case 'etcd':
      return {
        kind: 'etcd-member',
        endpoint: ref.endpoint,
        ...(ref.field !== undefined ? { field: ref.field } : {}),
        ...obs,
      };
    case 'tls':
      return { kind: 'tls', address: ref.address, ...obs };
    case 'api':
      return {
        kind: 'api',
        server: ref.server,
        path: ref.path,
        ...(ref.field !== undefined ? { field: ref.field } : {}),
        ...obs,
      };
    case 'derived': {
      // A derived value is explained by its first concrete source; the note keeps the derivation.
      const first = ref.from[0];
      const note = obs.note ? `${obs.note}; ${ref.note}` : ref.note;
      if (first) return evidenceFromSource(first, { ...obs, note });
      return { kind: 'target', field: 'derived', ...obs, note };
    }
  }
}

/** One line for a human: "Deployment shop/web spec.replicas (observed: 1)". */
export function describeEvidence(e: Evidence): string {
  let head: string;
  switch (e.kind) {
    case 'object':
      head = `${describeObject(e.object)}${e.field ? ` ${e.field}` : ''}`;
      break;
    case 'file':
      head = `${e.path}${e.line !== undefined ? `:${e.line}` : ''}${e.field ? ` ${e.field}` : ''}`;
      break;
    case 'flag':
      head = `${e.component}${e.node ? `@${e.node}` : ''} --${e.flag}${e.from ? ` (${describeSource(e.from)})` : ''}`;
      break;
    case 'node':
      head = `Node ${e.node}${e.field ? ` ${e.field}` : ''}`;
      break;
    case 'etcd-member': {
      const who = e.name ?? e.memberId ?? e.endpoint ?? '?';
      head = `etcd member ${who}${e.endpoint && e.endpoint !== who ? ` (${e.endpoint})` : ''}${e.field ? ` ${e.field}` : ''}`;
      break;
    }
    case 'tls':
      head = `TLS ${e.address}${e.field ? ` ${e.field}` : ''}`;
      break;
    case 'api':
      head = `GET ${e.path}${e.field ? ` ${e.field}` : ''} (${e.server})`;
      break;
    case 'target':
      head = `target ${e.field}`;
      break;
  }
  const obs: string[] = [];
  if (e.observed !== undefined) obs.push(`observed: ${e.observed}`);
  if (e.expected !== undefined) obs.push(`expected: ${e.expected}`);
  if (e.note !== undefined) obs.push(e.note);
  return obs.length ? `${head} (${obs.join('; ')})` : head;
}

export function describeObject(o: ObjectRef): string {
  return `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
}

/**
 * The thing a finding is about: its identity (for the fingerprint) and what suppression scopes
 * match on (namespace, kind, name, node, labels).
 */
export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  /** API group ("" for core), part of the identity so Deployment "web" ≠ a CRD kind "web". */
  group?: string;
  uid?: string;
  /** The node the subject lives on or is (Nodes, pods, static pods, etcd members). */
  node?: string;
  /** Labels of the subject, for `labelSelector` suppressions; not part of the identity. */
  labels?: Record<string, string>;
}

/** The target a finding was evaluated against (blockers.md: target-dependent rules record it). */
export interface TargetSummary {
  talosVersion: string;
  /** Set when the Talos release is not tabled: which tabled patch's facts the rules assumed. */
  assumed?: string;
  kubernetesVersion?: string;
  kubeprism: boolean;
  provisioner: string;
}

export interface Finding {
  ruleId: string;
  family: string;
  severity: Severity;
  title: string;
  message: string;
  evidence: Evidence[];
  remediation: string;
  /** Stable across runs: rule id + subject identity + field path (never the message). */
  fingerprint: string;
  /** Kit files that fix it (filled by `generate`); paths inside the kit. */
  artifacts: string[];
  subject: Subject;
  /** Field path inside the subject the finding is about, part of the fingerprint. */
  field?: string;
  target: TargetSummary;
  docs?: string;
  /**
   * What a kit must contain to resolve it (`ferry audit --kit` checks each); absent when the kit
   * cannot: the fix is the operator's, or not one file's.
   */
  kitChecks?: KitCheck[];
  /** Set when the kit given to `ferry audit --kit` resolves it (then it is in AuditReport.resolved). */
  resolution?: KitResolution;
  /** Why the kit given to `ferry audit --kit` does not resolve it, when it has kitChecks. */
  kitGap?: string;
}

/** How the kit resolves a finding: which of its files, doing what (each of the finding's kitChecks). */
export interface KitResolution {
  /** The kit directory as given to --kit. */
  kit: string;
  /** Paths inside the kit, the main one first. */
  files: string[];
  /** What those files do, as checked: "talos/controlplane-patch.yaml sets cluster.proxy.disabled: true". */
  how: string;
}

/**
 * Fingerprint = sha256 over rule id, the subject's identity (group, kind, namespace, name, uid or
 * node) and the field path. The API version is left out on purpose: policy/v1beta1 → v1 is the
 * same PDB and must not look like a new finding to a baseline.
 */
export function fingerprintOf(ruleId: string, subject: Subject, field: string | undefined): string {
  const identity = [
    ruleId,
    subject.group ?? '',
    subject.kind,
    subject.namespace ?? '',
    subject.name,
    subject.uid ?? '',
    subject.node ?? '',
    field ?? '',
  ];
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 32);
}

/** API group of an apiVersion: "apps/v1" → "apps", "v1" → "". */
export function groupOf(apiVersion: string | undefined): string | undefined {
  if (apiVersion === undefined) return undefined;
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** The subject implied by one piece of evidence, when a rule does not name one. */
export function subjectFromEvidence(e: Evidence | undefined): { subject: Subject; field?: string } {
  if (!e) return { subject: { kind: 'Cluster', name: 'cluster' } };
  const field = 'field' in e && e.field !== undefined ? { field: e.field } : {};
  switch (e.kind) {
    case 'object': {
      const group = groupOf(e.object.apiVersion);
      return {
        subject: {
          kind: e.object.kind,
          name: e.object.name,
          ...(e.object.namespace !== undefined ? { namespace: e.object.namespace } : {}),
          ...(group !== undefined ? { group } : {}),
          ...(e.object.uid !== undefined ? { uid: e.object.uid } : {}),
        },
        ...field,
      };
    }
    case 'file':
      return { subject: { kind: 'File', name: e.path }, ...field };
    case 'flag':
      return {
        subject: { kind: 'Component', name: e.component, ...(e.node !== undefined ? { node: e.node } : {}) },
        field: `--${e.flag}`,
      };
    case 'node':
      return { subject: { kind: 'Node', name: e.node, node: e.node }, ...field };
    case 'etcd-member':
      return { subject: { kind: 'EtcdMember', name: e.name ?? e.memberId ?? e.endpoint ?? '?' }, ...field };
    case 'tls':
      return { subject: { kind: 'Endpoint', name: e.address }, ...field };
    case 'api':
      // The path, not the server URL: another kubeconfig for the same cluster is the same subject.
      return { subject: { kind: 'API', name: e.path }, ...field };
    case 'target':
      return { subject: { kind: 'Target', name: 'target' }, field: e.field };
  }
}

export function describeSubject(s: Subject): string {
  return `${s.kind} ${s.namespace ? `${s.namespace}/` : ''}${s.name}${s.node && s.kind !== 'Node' ? ` on ${s.node}` : ''}`;
}
