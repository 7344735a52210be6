/**
 * Patches in the legacy v1alpha1 form (Talos ≤ v1.13): one `version: v1alpha1` document with
 * `machine:` and `cluster:`, plus HostnameConfig from v1.12. Strategic-merge patches over
 * `talosctl gen config` output (talos.md §3.2, §5 "Switches").
 */

import type { Sourced } from '../../facts/sourced.js';
import type { NodeShape } from '../../facts/worker-groups.js';
import {
  EXCLUDE_FROM_LB_LABEL,
  hasHostnameConfig,
  POD_SECURITY_CONFIG_API_VERSION,
} from '../../knowledge/talos-config.js';
import { extraArgsMap } from './args.js';
import { DocBuilder, type DocPath, type TalosDoc } from './doc.js';
import type { Role, TalosValues } from './model.js';

export function legacyRolePatch(v: TalosValues, role: Role): TalosDoc[] {
  const d = new DocBuilder('v1alpha1', { version: 'v1alpha1' });
  const lists = v.release.extraArgsLists;
  // machine
  d.put(
    ['machine', 'kubelet', 'image'],
    v.images.kubelet.value,
    v.images.kubelet.sources,
    v.images.kubelet.why,
  );
  d.put(
    ['machine', 'kubelet', 'clusterDNS'],
    v.kubelet.clusterDNS.value,
    v.kubelet.clusterDNS.sources,
    'kube-dns Service address',
  );
  if (v.kubelet.args.length > 0) {
    d.put(
      ['machine', 'kubelet', 'extraArgs'],
      extraArgsMap(v.kubelet.args, lists),
      v.kubelet.args.flatMap((a) => a.sources).slice(0, 1),
    );
  }
  for (const [key, val] of Object.entries(v.kubelet.config)) {
    d.put(['machine', 'kubelet', 'extraConfig', key], val.value, val.sources);
  }
  d.put(['machine', 'features', 'kubePrism'], { ...v.kubePrism.value }, v.kubePrism.sources, v.kubePrism.why);
  const shape = role === 'controlplane' ? v.controlPlane.common : v.workers.common;
  putShape(d, shape, MACHINE_SHAPE_PATHS);
  if (role === 'controlplane' && !v.controlPlane.excludeFromLoadBalancers.value) {
    d.remove(
      ['machine', 'nodeLabels', EXCLUDE_FROM_LB_LABEL],
      v.controlPlane.excludeFromLoadBalancers.sources,
      'the kubeadm control planes do not carry this label',
    );
  }
  // cluster
  d.put(['cluster', 'clusterName'], v.clusterName.value, v.clusterName.sources);
  d.put(['cluster', 'controlPlane', 'endpoint'], v.endpoint.value, v.endpoint.sources);
  if (role === 'controlplane' && v.apiPort)
    d.put(
      ['cluster', 'controlPlane', 'localAPIServerPort'],
      v.apiPort.value,
      v.apiPort.sources,
      v.apiPort.why,
    );
  d.put(['cluster', 'network', 'dnsDomain'], v.dnsDomain.value, v.dnsDomain.sources);
  d.put(['cluster', 'network', 'podSubnets'], v.podSubnets.value, v.podSubnets.sources);
  d.put(['cluster', 'network', 'serviceSubnets'], v.serviceSubnets.value, v.serviceSubnets.sources);
  d.put(['cluster', 'network', 'cni', 'name'], 'none', v.cniNone.sources, v.cniNone.why);
  if (role === 'controlplane') controlPlaneCluster(d, v);
  const docs = [d.build()];
  if (hasHostnameConfig(v.release)) docs.push(stableHostnameDoc(v));
  return docs;
}

function controlPlaneCluster(d: DocBuilder, v: TalosValues): void {
  const a = v.apiserver;
  const lists = v.release.extraArgsLists;
  d.put(
    ['cluster', 'apiServer', 'image'],
    v.images.apiserver.value,
    v.images.apiserver.sources,
    v.images.apiserver.why,
  );
  d.put(['cluster', 'apiServer', 'certSANs'], a.certSANs.value, a.certSANs.sources, a.certSANs.why);
  const args = extraArgsMap([...a.args, ...a.oidcArgs], lists);
  d.put(
    ['cluster', 'apiServer', 'extraArgs'],
    args,
    a.args.flatMap((x) => x.sources).slice(0, 1),
    'kube-apiserver flags of the kubeadm apiservers that Talos does not set (deny-listed and host-path flags are in the notes)',
  );
  const issuers = [a.issuer.value, ...a.acceptedIssuers.value];
  d.put(
    ['cluster', 'apiServer', 'extraArgs', 'service-account-issuer'],
    lists && issuers.length > 1 ? issuers : a.issuer.value,
    [...a.issuer.sources, ...a.acceptedIssuers.sources],
    lists
      ? 'Talos signs with the endpoint URL (first) and accepts the kubeadm issuers (mixed period)'
      : a.issuer.why,
  );
  d.put(
    ['cluster', 'apiServer', 'extraArgs', 'api-audiences'],
    a.audiences.value.join(','),
    a.audiences.sources,
    a.audiences.why,
  );
  d.put(
    ['cluster', 'apiServer', 'extraArgs', 'anonymous-auth'],
    String(a.anonymous.value),
    a.anonymous.sources,
    a.anonymous.why,
  );
  d.put(
    ['cluster', 'apiServer', 'admissionControl'],
    [{ name: 'PodSecurity', configuration: podSecurityConfiguration(v) }],
    a.podSecurity.sources,
    a.podSecurity.why,
  );
  d.put(
    ['cluster', 'controllerManager', 'image'],
    v.images.controllerManager.value,
    v.images.controllerManager.sources,
  );
  if (v.controllerManager.args.length > 0) {
    d.put(
      ['cluster', 'controllerManager', 'extraArgs'],
      extraArgsMap(v.controllerManager.args, lists),
      v.controllerManager.args[0]?.sources ?? [],
    );
  }
  d.put(['cluster', 'scheduler', 'image'], v.images.scheduler.value, v.images.scheduler.sources);
  if (v.scheduler.args.length > 0) {
    d.put(
      ['cluster', 'scheduler', 'extraArgs'],
      extraArgsMap(v.scheduler.args, lists),
      v.scheduler.args[0]?.sources ?? [],
    );
  }
  d.put(
    ['cluster', 'proxy', 'disabled'],
    v.kubeProxyDisabled.value,
    v.kubeProxyDisabled.sources,
    v.kubeProxyDisabled.why,
  );
  if (!v.kubeProxyDisabled.value)
    d.put(['cluster', 'proxy', 'image'], v.images.proxy.value, v.images.proxy.sources);
  d.put(
    ['cluster', 'coreDNS', 'disabled'],
    v.coreDnsDisabled.value,
    v.coreDnsDisabled.sources,
    v.coreDnsDisabled.why,
  );
  d.put(['cluster', 'etcd', 'image'], v.etcd.image.value, v.etcd.image.sources, v.etcd.image.why);
  if (v.etcd.args.length > 0)
    d.put(['cluster', 'etcd', 'extraArgs'], extraArgsMap(v.etcd.args, lists), v.etcd.args[0]?.sources ?? []);
  d.put(
    ['cluster', 'allowSchedulingOnControlPlanes'],
    v.controlPlane.allowScheduling.value,
    v.controlPlane.allowScheduling.sources,
    v.controlPlane.allowScheduling.why,
  );
}

export function podSecurityConfiguration(v: TalosValues): Record<string, unknown> {
  const p = v.apiserver.podSecurity.value;
  return {
    apiVersion: POD_SECURITY_CONFIG_API_VERSION,
    kind: 'PodSecurityConfiguration',
    defaults: {
      enforce: p.enforce,
      'enforce-version': 'latest',
      audit: p.audit,
      'audit-version': 'latest',
      warn: p.warn,
      'warn-version': 'latest',
    },
  };
}

/** HostnameConfig (Talos ≥1.12) for every node of a role: a stable generated name. */
export function stableHostnameDoc(v: TalosValues): TalosDoc {
  return new DocBuilder('HostnameConfig', { apiVersion: 'v1alpha1', kind: 'HostnameConfig' })
    .put(
      ['auto'],
      'stable',
      v.hostnameRule.sources,
      `${v.hostnameRule.why ?? ''}; ${v.hostnameRule.value}. Control planes get an explicit name from their node patch`,
    )
    .build();
}

/** Where the v1alpha1 document keeps labels and taints (KubeNodeConfig keeps them under `labels`/`taints`). */
const MACHINE_SHAPE_PATHS = { labels: ['machine', 'nodeLabels'], taints: ['machine', 'nodeTaints'] };

/** Puts a node shape's labels and taints, each with its sources. */
export function putShape(d: DocBuilder, shape: NodeShape, at: { labels: DocPath; taints: DocPath }): void {
  for (const [k, val] of Object.entries(shape.labels)) d.put([...at.labels, k], val.value, val.sources);
  for (const [k, val] of Object.entries(shape.taints)) d.put([...at.taints, k], val.value, val.sources);
}

/** Per-node patch (control planes): the pinned hostname and the labels/taints only that node had. */
export function legacyNodePatch(v: TalosValues, hostname: Sourced<string>, own: NodeShape): TalosDoc[] {
  const docs: TalosDoc[] = [];
  const d = new DocBuilder('v1alpha1', { version: 'v1alpha1' });
  if (!hasHostnameConfig(v.release))
    d.put(['machine', 'network', 'hostname'], hostname.value, hostname.sources, hostname.why);
  putShape(d, own, MACHINE_SHAPE_PATHS);
  if (Object.keys(d.body).length > 1) docs.push(d.build());
  if (hasHostnameConfig(v.release)) docs.push(pinnedHostnameDoc(hostname));
  return docs;
}

/** HostnameConfig (Talos ≥1.12) for one control plane: its explicit name, no generated one. */
export function pinnedHostnameDoc(hostname: Sourced<string>): TalosDoc {
  return new DocBuilder('HostnameConfig', { apiVersion: 'v1alpha1', kind: 'HostnameConfig' })
    .put(['hostname'], hostname.value, hostname.sources, hostname.why)
    .put(['auto'], 'off')
    .build();
}

/** Per-group patch (workers): the labels/taints the group's nodes share beyond the role patch. */
export function legacyGroupPatch(own: NodeShape): TalosDoc[] {
  const d = new DocBuilder('v1alpha1', { version: 'v1alpha1' });
  putShape(d, own, MACHINE_SHAPE_PATHS);
  return [d.build()];
}
