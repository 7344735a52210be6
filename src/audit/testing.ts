/**
 * Hand-built snapshots for the audit's tests (and rule authors' tests): only what a test sets is
 * there, everything else is empty, like a files directory with a few files.
 */
import { deriveFacts } from '../facts/derive.js';
import type { TargetInput } from '../facts/target.js';
import type { KitPrepStep } from '../generate/kubeadm-prep/step.js';
import type { KitContents } from '../kit/read.js';
import {
  type BootstrapToken,
  emptyResources,
  type KubeObject,
  type Resources,
  SNAPSHOT_FORMAT_VERSION,
  type Snapshot,
  type SnapshotPart,
} from '../snapshot/model.js';
import type { Subject } from './findings.js';
import type { AuditContext, RuleFinding, RuleResult } from './rule.js';
import { buildIndex } from './snapshot-index.js';

export function makeSnapshot(
  opts: { parts?: SnapshotPart[]; resources?: Partial<Resources> } = {},
): Snapshot {
  return {
    manifest: {
      formatVersion: SNAPSHOT_FORMAT_VERSION,
      createdAt: '2026-08-01T00:00:00.000Z',
      source: { kind: 'files', path: 'fixtures/cluster' },
      ferryVersion: 'test',
      parts: opts.parts ?? ['resources'],
      warnings: [],
    },
    kubeadm: { nodeConfigurations: [] },
    staticPods: [],
    servedCertificates: [],
    resources: { ...emptyResources(), ...opts.resources },
  };
}

export function makeContext(snapshot: Snapshot, target: TargetInput = {}): AuditContext {
  const facts = deriveFacts(snapshot, target);
  return { snapshot, facts, target: facts.target, index: buildIndex(snapshot) };
}

export function obj(
  kind: string,
  name: string,
  extra: Partial<KubeObject> & { namespace?: string } = {},
): KubeObject {
  const { namespace, metadata, ...rest } = extra;
  const apiVersion =
    {
      Deployment: 'apps/v1',
      ReplicaSet: 'apps/v1',
      StatefulSet: 'apps/v1',
      DaemonSet: 'apps/v1',
      Job: 'batch/v1',
      CronJob: 'batch/v1',
      PodDisruptionBudget: 'policy/v1',
    }[kind] ?? 'v1';
  return {
    apiVersion,
    kind,
    metadata: { name, ...(namespace !== undefined ? { namespace } : {}), ...metadata },
    ...rest,
  };
}

export function token(id: string, opts: Partial<BootstrapToken> = {}): BootstrapToken {
  return {
    id,
    usages: ['authentication', 'signing'],
    authExtraGroups: ['system:bootstrappers:kubeadm:default-node-token'],
    source: { kind: 'object', objectKind: 'Secret', namespace: 'kube-system', name: `bootstrap-token-${id}` },
    ...opts,
  };
}

/** A copy of `base` (e.g. the example cluster) changed in memory, as an audit context. */
export function editedContext(
  base: Snapshot,
  edit?: (s: Snapshot) => void,
  target: TargetInput = {},
): AuditContext {
  const s = structuredClone(base);
  edit?.(s);
  return makeContext(s, target);
}

/** The findings of a result that must be findings (not a skip), each naming its subject. */
export function findingsWithSubject(r: RuleResult): (RuleFinding & { subject: Subject })[] {
  if (!Array.isArray(r)) throw new Error(`expected findings, got ${JSON.stringify(r)}`);
  for (const f of r) if (!f.subject) throw new Error(`finding without a subject: ${f.message}`);
  return r as (RuleFinding & { subject: Subject })[];
}

/**
 * A kit in memory, as kit/read.ts would return it: each file's text, or `{ secret: true }` for a
 * file the kit lists as secret (the reader never reads those).
 */
export function memoryKit(
  files: Record<string, string | { secret: true }>,
  steps: KitPrepStep[] = [],
  path = 'kit',
): KitContents {
  return {
    summary: {
      path,
      generatedAt: '2026-08-01T00:00:00.000Z',
      snapshot: { createdAt: null, source: null },
      target: {
        talosVersion: null,
        kubernetesVersion: null,
        kubeprism: null,
        provisioner: null,
        infra: null,
      },
      files: Object.entries(files).map(([p, v]) => ({
        path: p,
        purpose: '',
        step: 0,
        secret: typeof v !== 'string',
      })),
      prepSteps: steps,
      probe: null,
      bootstrapTokenId: null,
      machines: null,
      talosconfig: null,
    },
    text: new Map(
      Object.entries(files).flatMap(([p, v]) => (typeof v === 'string' ? [[p, v] as const] : [])),
    ),
  };
}
