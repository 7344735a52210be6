/**
 * A Talos control-plane Machine made the way CACPPT makes one (adoption recipe (c), capi.md §2),
 * so ferry can add it while the TalosControlPlane stays paused and its etcd audit cannot run (H1):
 * the infrastructure machine cloned from the TCP's `spec.infrastructureTemplate`, the TalosConfig
 * with the TCP's `controlPlaneConfig.controlplane` spec byte for byte (any difference is a rollout,
 * H7), and the Machine labelled cluster-name + control-plane, controller-owned by the TCP, with
 * the TCP's version. All three share one name, `<tcp>-<5 random>`: the infrastructure machine's
 * name becomes the Talos host name, which the audit compares (H1).
 */
import { randomInt } from 'node:crypto';
import type { KubeObject } from '../snapshot/model.js';
import { CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL } from './view.js';

export const MACHINE_API_VERSION = 'cluster.x-k8s.io/v1beta2';
export const TALOSCONFIG_API_VERSION = 'bootstrap.cluster.x-k8s.io/v1alpha3';

const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** Cluster API's generated-name suffix: five lowercase alphanumerics. */
export function nameSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += ALNUM[randomInt(ALNUM.length)];
  return s;
}

export interface InfraTemplateRef {
  apiVersion: string;
  kind: string;
  name: string;
}

/** The TCP's infrastructure template reference, or why it is unusable. */
export function infraTemplateRef(tcp: KubeObject): InfraTemplateRef | { error: string } {
  const r = tcp.spec?.['infrastructureTemplate'] as Partial<InfraTemplateRef> | undefined;
  if (!r?.apiVersion || !r.kind || !r.name)
    return { error: 'spec.infrastructureTemplate needs apiVersion, kind and name' };
  return { apiVersion: r.apiVersion, kind: r.kind, name: r.name };
}

export interface CpMachineObjects {
  name: string;
  infra: KubeObject;
  talosConfig: KubeObject;
  machine: KubeObject;
}

export function cpMachineObjects(o: {
  tcp: KubeObject;
  template: KubeObject;
  cluster: string;
  suffix: string;
}): CpMachineObjects | { error: string } {
  const { tcp, template, cluster } = o;
  const ref = infraTemplateRef(tcp);
  if ('error' in ref) return ref;
  const config = (tcp.spec?.['controlPlaneConfig'] as { controlplane?: unknown } | undefined)?.controlplane;
  if (!config || typeof config !== 'object')
    return { error: 'spec.controlPlaneConfig.controlplane is missing' };
  const version = tcp.spec?.['version'];
  if (typeof version !== 'string' || version === '') return { error: 'spec.version is missing' };
  if (!tcp.metadata.uid) return { error: 'metadata.uid is missing (not read from the server)' };
  const ns = tcp.metadata.namespace!;
  const name = `${tcp.metadata.name}-${o.suffix}`;
  const tplMeta = (template.spec?.['template'] as { metadata?: KubeObject['metadata'] } | undefined)
    ?.metadata;
  const tplSpec = (template.spec?.['template'] as { spec?: unknown } | undefined)?.spec ?? {};
  const labels = { [CLUSTER_NAME_LABEL]: cluster, [CONTROL_PLANE_LABEL]: '' };
  // The TCP owns the two until the Machine controller adopts them for its Machine.
  const tcpOwner = {
    apiVersion: tcp.apiVersion,
    kind: tcp.kind,
    name: tcp.metadata.name,
    uid: tcp.metadata.uid,
  };
  const infraKind = ref.kind.replace(/Template$/, '');
  const group = (v: string) => v.split('/')[0]!;
  return {
    name,
    infra: {
      apiVersion: ref.apiVersion,
      kind: infraKind,
      metadata: {
        name,
        namespace: ns,
        labels: { ...(tplMeta?.labels ?? {}), ...labels },
        annotations: {
          ...(tplMeta?.annotations ?? {}),
          // What Cluster API's clone writes; CACPPT compares it to spot outdated Machines.
          'cluster.x-k8s.io/cloned-from-name': ref.name,
          'cluster.x-k8s.io/cloned-from-groupkind': `${ref.kind}.${group(ref.apiVersion)}`,
        },
        ownerReferences: [tcpOwner],
      },
      spec: structuredClone(tplSpec) as Record<string, unknown>,
    },
    talosConfig: {
      apiVersion: TALOSCONFIG_API_VERSION,
      kind: 'TalosConfig',
      metadata: { name, namespace: ns, labels, ownerReferences: [tcpOwner] },
      spec: structuredClone(config) as Record<string, unknown>,
    },
    machine: {
      apiVersion: MACHINE_API_VERSION,
      kind: 'Machine',
      metadata: {
        name,
        namespace: ns,
        labels,
        ownerReferences: [{ ...tcpOwner, controller: true }],
      },
      spec: {
        clusterName: cluster,
        version,
        bootstrap: {
          configRef: { apiGroup: group(TALOSCONFIG_API_VERSION), kind: 'TalosConfig', name },
        },
        infrastructureRef: { apiGroup: group(ref.apiVersion), kind: infraKind, name },
      },
    },
  };
}
