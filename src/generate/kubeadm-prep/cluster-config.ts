import { isDocument, isScalar, isSeq, parseAllDocuments, stringify } from 'yaml';
import type { ClusterConfiguration, Flag, HostPathMount } from '../../snapshot/model.js';

export interface RenderedClusterConfiguration {
  apiVersion: 'kubeadm.k8s.io/v1beta3' | 'kubeadm.k8s.io/v1beta4';
  doc: Record<string, unknown>;
  /** Things the rendering could not keep (said in the kit, never dropped silently). */
  losses: string[];
}

/**
 * Renders the snapshot's normalized ClusterConfiguration back into a kubeadm document, in the
 * cluster's own API version (v1beta2, which current kubeadm no longer reads, becomes v1beta3).
 * `extraArgs` are maps in v1beta3 and name/value lists (repeatable) in v1beta4.
 */
export function renderClusterConfiguration(
  cc: ClusterConfiguration,
  changes: { certSANs: string[]; apiServerExtraArgs?: Flag[] },
): RenderedClusterConfiguration {
  const losses: string[] = [];
  const apiVersion =
    cc.sourceApiVersion === 'kubeadm.k8s.io/v1beta4' ? 'kubeadm.k8s.io/v1beta4' : 'kubeadm.k8s.io/v1beta3';
  if (cc.sourceApiVersion === 'kubeadm.k8s.io/v1beta2')
    losses.push('v1beta2 was rendered as v1beta3 (kubeadm ≥1.26 reads no v1beta2)');
  if (cc.unknownFields.length > 0)
    losses.push(`fields ferry does not model were left out: ${cc.unknownFields.join(', ')}`);
  const v4 = apiVersion === 'kubeadm.k8s.io/v1beta4';
  const args = (flags: Flag[], where: string) => {
    if (v4) return flags.length > 0 ? flags.map((f) => ({ name: f.name, value: f.value })) : undefined;
    const map: Record<string, string> = {};
    for (const f of flags) {
      if (f.name in map)
        losses.push(`${where}.extraArgs repeats --${f.name}; v1beta3 keeps only the last value`);
      map[f.name] = f.value;
    }
    return Object.keys(map).length > 0 ? map : undefined;
  };
  const vols = (v: HostPathMount[]) => (v.length > 0 ? v.map((m) => ({ ...m })) : undefined);
  const local = cc.etcd.local;
  const external = cc.etcd.external;
  const doc: Record<string, unknown> = {
    apiVersion,
    kind: 'ClusterConfiguration',
    clusterName: cc.clusterName,
    kubernetesVersion: cc.kubernetesVersion,
    controlPlaneEndpoint: cc.controlPlaneEndpoint,
    imageRepository: cc.imageRepository,
    certificatesDir: cc.certificatesDir,
    encryptionAlgorithm: v4 ? cc.encryptionAlgorithm : undefined,
    featureGates: Object.keys(cc.featureGates).length > 0 ? cc.featureGates : undefined,
    networking: prune({ ...cc.networking }),
    apiServer: prune({
      certSANs: changes.certSANs,
      extraArgs: args(changes.apiServerExtraArgs ?? cc.apiServer.extraArgs, 'apiServer'),
      extraVolumes: vols(cc.apiServer.extraVolumes),
      timeoutForControlPlane: v4 ? undefined : cc.apiServer.timeoutForControlPlane,
    }),
    controllerManager: prune({
      extraArgs: args(cc.controllerManager.extraArgs, 'controllerManager'),
      extraVolumes: vols(cc.controllerManager.extraVolumes),
    }),
    scheduler: prune({
      extraArgs: args(cc.scheduler.extraArgs, 'scheduler'),
      extraVolumes: vols(cc.scheduler.extraVolumes),
    }),
    etcd: prune({
      local: local
        ? prune({
            imageRepository: local.imageRepository,
            imageTag: local.imageTag,
            dataDir: local.dataDir,
            extraArgs: args(local.extraArgs, 'etcd.local'),
            serverCertSANs: local.serverCertSANs.length > 0 ? local.serverCertSANs : undefined,
            peerCertSANs: local.peerCertSANs.length > 0 ? local.peerCertSANs : undefined,
          })
        : undefined,
      external: external ? prune({ ...external }) : undefined,
    }),
    dns: prune({
      imageRepository: cc.dns.imageRepository,
      imageTag: cc.dns.imageTag,
      disabled: v4 ? cc.dns.disabled : undefined,
    }),
  };
  return { apiVersion, doc: prune(doc) ?? {}, losses };
}

/** The InitConfiguration that makes `kubeadm init phase certs apiserver` issue for one node. */
export function nodeInitConfiguration(
  apiVersion: RenderedClusterConfiguration['apiVersion'],
  node: { name: string; advertiseAddress: string; port: number; criSocket?: string },
): Record<string, unknown> {
  return {
    apiVersion,
    kind: 'InitConfiguration',
    localAPIEndpoint: { advertiseAddress: node.advertiseAddress, bindPort: node.port },
    nodeRegistration: prune({ name: node.name, criSocket: node.criSocket }),
  };
}

export function yamlDocs(docs: Record<string, unknown>[]): string {
  return docs.map((d) => stringify(d, { lineWidth: 0 })).join('---\n');
}

function prune<T extends Record<string, unknown>>(o: T): T | undefined {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined || v === null) continue;
    if (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0) continue;
    out[k] = v;
  }
  return Object.keys(out).length > 0 ? (out as T) : undefined;
}

/**
 * Adds SANs to apiServer.certSANs of a ClusterConfiguration *text*, keeping everything else as
 * written (fields ferry does not model, comments): the lossless path, used whenever the snapshot
 * has the cluster's own text (the kubeadm-config ConfigMap or kubeadm-config.yaml).
 * Returns undefined when the text holds no ClusterConfiguration.
 */
export function editClusterConfigurationText(
  text: string,
  certSANs: string[],
  comment?: string,
): string | undefined {
  for (const doc of parseAllDocuments(text)) {
    if (!isDocument(doc) || doc.errors.length > 0) continue;
    if (doc.get('kind') !== 'ClusterConfiguration') continue;
    const current = doc.getIn(['apiServer', 'certSANs']);
    const have = isSeq(current) ? current.items.map((i) => String(isScalar(i) ? i.value : i)) : [];
    const add = certSANs.filter((s) => !have.includes(s));
    if (isSeq(current)) for (const s of add) current.add(doc.createNode(s));
    else doc.setIn(['apiServer', 'certSANs'], doc.createNode(uniq([...have, ...add])));
    const seq = doc.getIn(['apiServer', 'certSANs'], true);
    if (comment && isSeq(seq)) seq.commentBefore = ` ${comment}`;
    doc.commentBefore = null;
    const out = doc.toString({ lineWidth: 0 });
    return out.endsWith('\n') ? out : `${out}\n`;
  }
  return undefined;
}

function uniq(values: string[]): string[] {
  return [...new Set(values)];
}
