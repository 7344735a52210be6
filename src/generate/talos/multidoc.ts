/**
 * Patches in the multi-document form (Talos ≥ v1.14): one `Kube*Config` document per concern, the
 * v1alpha1 document only for what stays there (etcd). Documents merge by (apiVersion, kind, name);
 * `$patch: delete` removes a generated document (talos.md §3.2 table, §5 "Switches").
 */

import type { Sourced } from '../../facts/sourced.js';
import type { NodeShape } from '../../facts/worker-groups.js';
import { CONTROL_PLANE_TAINT, EXCLUDE_FROM_LB_LABEL } from '../../knowledge/talos-config.js';
import { describeRef } from '../provenance.js';
import { extraArgsMap } from './args.js';
import { DocBuilder, type TalosDoc } from './doc.js';
import { pinnedHostnameDoc, podSecurityConfiguration, putShape, stableHostnameDoc } from './legacy.js';
import type { Role, TalosValues } from './model.js';

const NODE_CONFIG_SHAPE_PATHS = { labels: ['labels'], taints: ['taints'] };

const head = (kind: string, name?: string) =>
  name ? { apiVersion: 'v1alpha1', kind, name } : { apiVersion: 'v1alpha1', kind };

function deleteDoc(kind: string, why: string, sources: TalosValues['endpoint']['sources']): TalosDoc {
  return {
    label: kind,
    body: { ...head(kind), $patch: 'delete' },
    annotations: [],
    comment: [why, ...sources.slice(0, 2).map((s) => `from: ${describeRef(s)}`)],
  };
}

export function multidocRolePatch(v: TalosValues, role: Role): TalosDoc[] {
  const docs: TalosDoc[] = [];
  const lists = v.release.extraArgsLists;
  const cp = role === 'controlplane';
  if (cp) {
    const d = new DocBuilder('v1alpha1', { version: 'v1alpha1' });
    d.put(['cluster', 'etcd', 'image'], v.etcd.image.value, v.etcd.image.sources, v.etcd.image.why);
    if (v.etcd.args.length > 0)
      d.put(
        ['cluster', 'etcd', 'extraArgs'],
        extraArgsMap(v.etcd.args, lists),
        v.etcd.args[0]?.sources ?? [],
      );
    docs.push(d.build());
  }
  docs.push(
    new DocBuilder('KubeClusterConfig', head('KubeClusterConfig'))
      .put(['clusterName'], v.clusterName.value, v.clusterName.sources)
      .put(['endpoint'], v.endpoint.value, v.endpoint.sources)
      .build(),
  );
  const net = new DocBuilder('KubeNetworkConfig', head('KubeNetworkConfig'))
    .put(['dnsDomain'], v.dnsDomain.value, v.dnsDomain.sources)
    .put(['podSubnets'], v.podSubnets.value, v.podSubnets.sources)
    .put(['serviceSubnets'], v.serviceSubnets.value, v.serviceSubnets.sources);
  const mask = v.nodeCidrMaskSize;
  if (mask?.value.ipv4 !== undefined) net.put(['nodeCIDRMaskSizeIPv4'], mask.value.ipv4, mask.sources);
  if (mask?.value.ipv6 !== undefined) net.put(['nodeCIDRMaskSizeIPv6'], mask.value.ipv6, mask.sources);
  docs.push(net.build());
  if (cp) docs.push(deleteDoc('KubeFlannelCNIConfig', v.cniNone.why ?? 'CNI none', v.cniNone.sources));
  if (cp) docs.push(...controlPlaneDocs(v));

  const kubelet = new DocBuilder('KubeletConfig', head('KubeletConfig'))
    .put(['image'], v.images.kubelet.value, v.images.kubelet.sources, v.images.kubelet.why)
    .put(
      ['clusterDNS'],
      v.kubelet.clusterDNS.value,
      v.kubelet.clusterDNS.sources,
      'kube-dns Service address',
    );
  if (v.kubelet.args.length > 0)
    kubelet.put(['extraArgs'], extraArgsMap(v.kubelet.args, lists), v.kubelet.args[0]?.sources ?? []);
  for (const [key, val] of Object.entries(v.kubelet.config))
    kubelet.put(['config', key], val.value, val.sources);
  docs.push(kubelet.build());

  const node = new DocBuilder('KubeNodeConfig', head('KubeNodeConfig'));
  putShape(node, cp ? v.controlPlane.common : v.workers.common, NODE_CONFIG_SHAPE_PATHS);
  if (cp && !v.controlPlane.excludeFromLoadBalancers.value) {
    node.remove(
      ['labels', EXCLUDE_FROM_LB_LABEL],
      v.controlPlane.excludeFromLoadBalancers.sources,
      'the kubeadm control planes do not carry this label',
    );
  }
  if (cp && v.controlPlane.allowScheduling.value) {
    node.remove(
      ['taints', CONTROL_PLANE_TAINT],
      v.controlPlane.allowScheduling.sources,
      v.controlPlane.allowScheduling.why ?? '',
    );
  }
  if (Object.keys(node.body).length > 2) docs.push(node.build());

  if (v.kubePrism.value.enabled) {
    docs.push(
      new DocBuilder('KubePrismConfig', head('KubePrismConfig'))
        .put(['port'], v.kubePrism.value.port, v.kubePrism.sources, v.kubePrism.why)
        .build(),
    );
  } else {
    docs.push(deleteDoc('KubePrismConfig', v.kubePrism.why ?? 'KubePrism off', v.kubePrism.sources));
  }
  docs.push(stableHostnameDoc(v));
  return docs;
}

function controlPlaneDocs(v: TalosValues): TalosDoc[] {
  const a = v.apiserver;
  const lists = v.release.extraArgsLists;
  const docs: TalosDoc[] = [];
  const api = new DocBuilder('KubeAPIServerConfig', head('KubeAPIServerConfig')).put(
    ['image'],
    v.images.apiserver.value,
    v.images.apiserver.sources,
    v.images.apiserver.why,
  );
  if (v.apiPort) api.put(['apiPort'], v.apiPort.value, v.apiPort.sources, v.apiPort.why);
  api.put(['certExtraSANs'], a.certSANs.value, a.certSANs.sources, a.certSANs.why);
  const args = extraArgsMap([...a.args, ...a.oidcArgs], lists);
  // Without KubeAuthenticationConfig, Talos falls back to --anonymous-auth=false; say it explicitly.
  if (!a.anonymous.value) args['anonymous-auth'] = 'false';
  if (Object.keys(args).length > 0) {
    api.put(
      ['extraArgs'],
      args,
      [...(a.args[0]?.sources ?? []), ...(a.anonymous.value ? [] : a.anonymous.sources)],
      'kube-apiserver flags of the kubeadm apiservers that Talos does not set (deny-listed and host-path flags are in the notes)',
    );
  }
  docs.push(api.build());
  docs.push(
    new DocBuilder(
      'KubeAdmissionControlConfig[PodSecurity]',
      head('KubeAdmissionControlConfig', 'PodSecurity'),
    )
      .put(['configuration'], podSecurityConfiguration(v), a.podSecurity.sources, a.podSecurity.why)
      .build(),
  );
  if (a.anonymous.value) {
    const auth = new DocBuilder('KubeAuthenticationConfig', head('KubeAuthenticationConfig'));
    auth.put(
      ['configuration', 'anonymous', 'enabled'],
      true,
      a.anonymous.sources,
      `${a.anonymous.why}; Talos limits anonymous requests to the health paths`,
    );
    if (a.jwt) auth.put(['configuration', 'jwt'], [a.jwt.value], a.jwt.sources, a.jwt.why);
    docs.push(auth.build());
  } else {
    docs.push(
      deleteDoc(
        'KubeAuthenticationConfig',
        `${a.anonymous.why}: without this document Talos runs kube-apiserver with --anonymous-auth=false`,
        a.anonymous.sources,
      ),
    );
  }
  docs.push(
    new DocBuilder('KubeServiceAccountConfig', head('KubeServiceAccountConfig'))
      .put(['issuer', 'issuerURL'], a.issuer.value, a.issuer.sources, a.issuer.why)
      .put(['accepted', 'issuers'], a.acceptedIssuers.value, a.acceptedIssuers.sources, a.acceptedIssuers.why)
      .put(['accepted', 'audiences'], a.audiences.value, a.audiences.sources, a.audiences.why)
      .build(),
  );
  const kcm = new DocBuilder('KubeControllerManagerConfig', head('KubeControllerManagerConfig')).put(
    ['image'],
    v.images.controllerManager.value,
    v.images.controllerManager.sources,
  );
  if (v.controllerManager.args.length > 0)
    kcm.put(
      ['extraArgs'],
      extraArgsMap(v.controllerManager.args, lists),
      v.controllerManager.args[0]?.sources ?? [],
    );
  docs.push(kcm.build());
  const sched = new DocBuilder('KubeSchedulerConfig', head('KubeSchedulerConfig')).put(
    ['image'],
    v.images.scheduler.value,
    v.images.scheduler.sources,
  );
  if (v.scheduler.args.length > 0)
    sched.put(['extraArgs'], extraArgsMap(v.scheduler.args, lists), v.scheduler.args[0]?.sources ?? []);
  docs.push(sched.build());
  const proxy = new DocBuilder('KubeProxyConfig', head('KubeProxyConfig'));
  // Removing the document would fall back to kube-proxy enabled (talos.md §5): set enabled explicitly.
  proxy.put(['enabled'], !v.kubeProxyDisabled.value, v.kubeProxyDisabled.sources, v.kubeProxyDisabled.why);
  if (!v.kubeProxyDisabled.value) proxy.put(['image'], v.images.proxy.value, v.images.proxy.sources);
  docs.push(proxy.build());
  docs.push(
    new DocBuilder('KubeCoreDNSConfig', head('KubeCoreDNSConfig'))
      .put(['enabled'], !v.coreDnsDisabled.value, v.coreDnsDisabled.sources, v.coreDnsDisabled.why)
      .build(),
  );
  return docs;
}

/** Per-node patch (control planes): the pinned hostname and the labels/taints only that node had. */
export function multidocNodePatch(hostname: Sourced<string>, own: NodeShape): TalosDoc[] {
  return [pinnedHostnameDoc(hostname), ...multidocGroupPatch(own)];
}

/** Per-group patch (workers): the labels/taints the group's nodes share beyond the role patch. */
export function multidocGroupPatch(own: NodeShape): TalosDoc[] {
  const node = new DocBuilder('KubeNodeConfig', head('KubeNodeConfig'));
  putShape(node, own, NODE_CONFIG_SHAPE_PATHS);
  return Object.keys(node.body).length > 2 ? [node.build()] : [];
}
