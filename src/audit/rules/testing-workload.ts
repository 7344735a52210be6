/**
 * Builders for the kubelet, nodes and workload rule tests: small, realistic objects (uids, owner
 * references, pod status) so the rules see what a `kubectl get -o yaml` dump holds. Only what a
 * test sets is there.
 */
import type { TargetInput } from '../../facts/target.js';
import type {
  ComponentConfig,
  KubeObject,
  Resources,
  Snapshot,
  SnapshotPart,
  Taint,
} from '../../snapshot/model.js';
import { runAudit } from '../engine.js';
import type { Finding } from '../findings.js';
import type { AuditContext, Rule, RuleFinding, RuleResult } from '../rule.js';
import { makeContext, makeSnapshot } from '../testing.js';

let seq = 0;
function uid(prefix: string): string {
  seq += 1;
  return `${prefix}-${seq.toString(16).padStart(8, '0')}`;
}

// biome-ignore lint/suspicious/noExplicitAny: pod specs are free-form in fixtures, as in the API
export type PodSpec = Record<string, any>;

export function node(
  name: string,
  opts: { labels?: Record<string, string>; taints?: Taint[]; controlPlane?: boolean } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      uid: uid('node'),
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        ...(opts.controlPlane ? { 'node-role.kubernetes.io/control-plane': '' } : {}),
        ...opts.labels,
      },
    },
    spec: opts.taints ? { taints: opts.taints } : {},
    status: {
      addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
      nodeInfo: { kubeletVersion: 'v1.32.4' },
    },
  };
}

export const CP_TAINT: Taint = { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' };

export function pod(
  namespace: string,
  name: string,
  spec: PodSpec,
  opts: {
    node?: string;
    labels?: Record<string, string>;
    owner?: KubeObject;
    phase?: string;
    ready?: boolean;
    annotations?: Record<string, string>;
  } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      uid: uid('pod'),
      ...(opts.labels ? { labels: opts.labels } : {}),
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
      ...(opts.owner
        ? {
            ownerReferences: [
              {
                apiVersion: opts.owner.apiVersion,
                kind: opts.owner.kind,
                name: opts.owner.metadata.name,
                uid: opts.owner.metadata.uid!,
                controller: true,
              },
            ],
          }
        : {}),
    },
    spec: { ...spec, ...(opts.node ? { nodeName: opts.node } : {}) },
    status: {
      phase: opts.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
    },
  };
}

const API: Record<string, string> = {
  Deployment: 'apps/v1',
  ReplicaSet: 'apps/v1',
  StatefulSet: 'apps/v1',
  DaemonSet: 'apps/v1',
  Job: 'batch/v1',
  CronJob: 'batch/v1',
};

/** A controller with a pod template; `pods` places one pod per listed node. */
export function workload(
  kind: 'Deployment' | 'StatefulSet' | 'DaemonSet' | 'Job',
  namespace: string,
  name: string,
  spec: PodSpec,
  opts: { replicas?: number; labels?: Record<string, string>; pods?: string[] } = {},
): { controller: KubeObject; objects: Partial<Resources> } {
  const labels = opts.labels ?? { app: name };
  const controller: KubeObject = {
    apiVersion: API[kind]!,
    kind,
    metadata: { name, namespace, uid: uid(kind.toLowerCase()) },
    spec: {
      ...(kind === 'DaemonSet' || kind === 'Job'
        ? {}
        : { replicas: opts.replicas ?? opts.pods?.length ?? 1 }),
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec },
    },
  };
  const key = (
    { Deployment: 'deployments', StatefulSet: 'statefulsets', DaemonSet: 'daemonsets', Job: 'jobs' } as const
  )[kind];
  const objects: Partial<Resources> = { [key]: [controller] };
  let owner = controller;
  if (kind === 'Deployment') {
    const rs: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${name}-7d9f8`,
        namespace,
        uid: uid('rs'),
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            name,
            uid: controller.metadata.uid!,
            controller: true,
          },
        ],
      },
      spec: { replicas: controller.spec.replicas, template: { metadata: { labels }, spec } },
    };
    objects.replicasets = [rs];
    owner = rs;
  }
  objects.pods = (opts.pods ?? []).map((n, i) =>
    pod(namespace, kind === 'StatefulSet' ? `${name}-${i}` : `${owner.metadata.name}-p${i}`, spec, {
      node: n,
      labels,
      owner,
    }),
  );
  return { controller, objects };
}

export function pdb(
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  status?: Record<string, unknown>,
): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace, uid: uid('pdb') },
    spec,
    ...(status ? { status } : {}),
  };
}

export function pv(name: string, spec: Record<string, unknown>): KubeObject {
  return { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name, uid: uid('pv') }, spec };
}

/** Concatenates partial resource lists. */
export function merge(...parts: Partial<Resources>[]): Partial<Resources> {
  const out: Record<string, unknown[]> = {};
  for (const p of parts) {
    for (const [k, v] of Object.entries(p)) {
      if (!Array.isArray(v)) continue;
      out[k] = [...(out[k] ?? []), ...v];
    }
  }
  return out as Partial<Resources>;
}

export const KUBELET_SOURCE = {
  kind: 'object',
  objectKind: 'ConfigMap',
  namespace: 'kube-system',
  name: 'kubelet-config',
  field: 'data.kubelet',
} as const;

export function kubeletConfig(spec: Record<string, unknown>): ComponentConfig {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    source: { ...KUBELET_SOURCE },
    spec,
  };
}

export function snapshotOf(
  resources: Partial<Resources>,
  opts: { kubelet?: ComponentConfig; parts?: SnapshotPart[]; edit?: (s: Snapshot) => void } = {},
): Snapshot {
  const parts: SnapshotPart[] = opts.parts ?? ['resources', ...(opts.kubelet ? (['kubelet'] as const) : [])];
  const s = makeSnapshot({ parts, resources });
  if (opts.kubelet) s.kubelet = opts.kubelet;
  opts.edit?.(s);
  return s;
}

export function contextOf(
  resources: Partial<Resources>,
  target: TargetInput = {},
  opts: Parameters<typeof snapshotOf>[1] = {},
): AuditContext {
  return makeContext(snapshotOf(resources, opts), target);
}

/** The findings of a rule's check; fails the test when the rule skipped or was not applicable. */
export function findings(result: RuleResult): RuleFinding[] {
  if (!Array.isArray(result))
    throw new Error(`expected findings, got ${result.kind}: ${JSON.stringify(result)}`);
  return result;
}

/** Runs rules through the engine (subjects, fingerprints, target recorded) over one context. */
export function audit(ctx: AuditContext, rules: readonly Rule[]): Finding[] {
  return runAudit({ ...ctx, rules, now: new Date('2026-08-01T00:00:00Z') }).findings;
}
