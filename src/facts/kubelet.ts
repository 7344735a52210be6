/**
 * Kubelet settings that change behaviour when a node moves to Talos (blockers.md
 * kubelet.config-carryover). Read from the cluster-wide KubeletConfiguration; per-node flags come from
 * kubeadm Init/JoinConfigurations when the snapshot has them.
 */
import type { ComponentConfig, Flag } from '../snapshot/model.js';
import { isRecord } from '../snapshot/validate.js';
import { decide, known, missingFact } from './decide.js';
import { flagSetKey } from './kubeadm-defaults.js';
import type { Candidate, Fact, KubeletFacts } from './model.js';
import { atField } from './sources.js';
import { lastFlag, type SnapshotView } from './view.js';

const NO_KUBELET =
  'ConfigMap kube-system/kubelet-config in resources/, or a KubeletConfiguration document in kubeadm-config.yaml';
const UNSET = "not set: the kubelet's built-in default applies";
/** kubeadm fills these two from ClusterConfiguration when it writes kube-system/kubelet-config. */
const UNSET_BY_KUBEADM: Record<string, string> = {
  clusterDNS:
    'not set in this KubeletConfiguration; kubeadm fills it with the 10th address of the service CIDR when it ' +
    'writes kube-system/kubelet-config (see network.kubeDnsIPs)',
  clusterDomain:
    'not set in this KubeletConfiguration; kubeadm fills it from networking.dnsDomain when it writes ' +
    'kube-system/kubelet-config (see network.dnsDomain)',
};

type Reader<T> = (x: unknown) => T | undefined;

const str: Reader<string> = (x) => (typeof x === 'string' ? x : undefined);
const num: Reader<number> = (x) => (typeof x === 'number' ? x : undefined);
const bool: Reader<boolean> = (x) => (typeof x === 'boolean' ? x : undefined);
const strList: Reader<string[]> = (x) =>
  Array.isArray(x) && x.every((e) => typeof e === 'string') ? (x as string[]) : undefined;
const strMap: Reader<Record<string, string>> = (x) =>
  isRecord(x) && Object.values(x).every((e) => typeof e === 'string')
    ? (x as Record<string, string>)
    : undefined;
const boolMap: Reader<Record<string, boolean>> = (x) =>
  isRecord(x) && Object.values(x).every((e) => typeof e === 'boolean')
    ? (x as Record<string, boolean>)
    : undefined;

function at(spec: Record<string, unknown>, path: string): unknown {
  let cur: unknown = spec;
  for (const part of path.split('.')) {
    if (!isRecord(cur)) return undefined;
    cur = cur[part];
  }
  return cur;
}

function setting<T>(
  cfg: ComponentConfig | undefined,
  key: string,
  title: string,
  path: string,
  read: Reader<T>,
): Fact<T | null> {
  if (!cfg) return missingFact(key, title, NO_KUBELET);
  const raw = at(cfg.spec, path);
  const source = atField(cfg.source, path);
  if (raw === undefined || raw === null) {
    return known<T | null>(key, title, null, [source], UNSET_BY_KUBEADM[path] ?? UNSET);
  }
  const value = read(raw);
  if (value === undefined) {
    return missingFact(
      key,
      title,
      `a well-formed ${path} in the KubeletConfiguration (found ${JSON.stringify(raw)})`,
    );
  }
  return known<T | null>(key, title, value, [source]);
}

export function deriveKubeletFacts(v: SnapshotView): KubeletFacts {
  const cfg = v.snapshot.kubelet;
  const k = (name: string) => `kubelet.${name}`;
  return {
    clusterDNS: setting(cfg, k('clusterDNS'), 'kubelet clusterDNS', 'clusterDNS', strList),
    clusterDomain: setting(cfg, k('clusterDomain'), 'kubelet clusterDomain', 'clusterDomain', str),
    cgroupDriver: setting(cfg, k('cgroupDriver'), 'kubelet cgroupDriver', 'cgroupDriver', str),
    maxPods: setting(cfg, k('maxPods'), 'kubelet maxPods', 'maxPods', num),
    rotateCertificates: setting(
      cfg,
      k('rotateCertificates'),
      'kubelet client certificate rotation',
      'rotateCertificates',
      bool,
    ),
    serverTLSBootstrap: serverTLSBootstrap(v),
    anonymousAuth: setting(
      cfg,
      k('anonymousAuth'),
      'kubelet anonymous auth',
      'authentication.anonymous.enabled',
      bool,
    ),
    authorizationMode: setting(
      cfg,
      k('authorizationMode'),
      'kubelet authorization mode',
      'authorization.mode',
      str,
    ),
    featureGates: setting(cfg, k('featureGates'), 'kubelet feature gates', 'featureGates', boolMap),
    systemReserved: setting(cfg, k('systemReserved'), 'kubelet systemReserved', 'systemReserved', strMap),
    kubeReserved: setting(cfg, k('kubeReserved'), 'kubelet kubeReserved', 'kubeReserved', strMap),
    evictionHard: setting(cfg, k('evictionHard'), 'kubelet evictionHard', 'evictionHard', strMap),
    allowedUnsafeSysctls: setting(
      cfg,
      k('allowedUnsafeSysctls'),
      'kubelet allowedUnsafeSysctls',
      'allowedUnsafeSysctls',
      strList,
    ),
    staticPodPath: setting(cfg, k('staticPodPath'), 'kubelet staticPodPath', 'staticPodPath', str),
    shutdownGracePeriod: setting(
      cfg,
      k('shutdownGracePeriod'),
      'kubelet shutdownGracePeriod',
      'shutdownGracePeriod',
      str,
    ),
    shutdownGracePeriodCriticalPods: setting(
      cfg,
      k('shutdownGracePeriodCriticalPods'),
      'kubelet shutdownGracePeriodCriticalPods',
      'shutdownGracePeriodCriticalPods',
      str,
    ),
    extraArgs: extraArgs(v),
  };
}

/** Serving-certificate bootstrap: the config field, or the deprecated --rotate-server-certificates flag. */
function serverTLSBootstrap(v: SnapshotView): Fact<boolean | null> {
  const key = 'kubelet.serverTLSBootstrap';
  const title =
    'kubelet serving certificates from the CSR API (serverTLSBootstrap / rotate-server-certificates)';
  const base = setting(v.snapshot.kubelet, key, title, 'serverTLSBootstrap', bool);
  const fromFlags: Candidate<boolean | null>[] = [];
  for (const nc of v.snapshot.kubeadm.nodeConfigurations) {
    const flag = lastFlag(nc.nodeRegistration.kubeletExtraArgs, 'rotate-server-certificates');
    if (flag !== undefined) {
      fromFlags.push({
        value: flag !== 'false',
        source: atField(nc.source, 'nodeRegistration.kubeletExtraArgs'),
      });
    }
  }
  if (fromFlags.length === 0) return base;
  const fromConfig =
    base.value !== undefined && base.provenance[0] ? [{ value: base.value, source: base.provenance[0] }] : [];
  const candidates = [...fromConfig, ...fromFlags];
  return decide({
    key,
    title,
    candidates,
    // An unset field loses to an explicit flag: the flag is what those kubelets run with.
    believe: (cs) => cs.find((c) => c.value !== null) ?? cs[0]!,
    reason:
      'the KubeletConfiguration and kubeadm kubeletExtraArgs disagree; the flag wins on the nodes that carry it, ' +
      'so ferry believes the explicit setting',
    missing: NO_KUBELET,
  });
}

function extraArgs(v: SnapshotView): Fact<Flag[]> {
  const key = 'kubelet.extraArgs';
  const title = 'kubelet extra flags (kubeadm nodeRegistration.kubeletExtraArgs)';
  const ncs = v.snapshot.kubeadm.nodeConfigurations;
  if (ncs.length === 0) {
    return missingFact(
      key,
      title,
      'per-node kubelet flags live in /var/lib/kubelet/kubeadm-flags.env; provide the Init/JoinConfiguration used (kubeadm-config.yaml) to see them',
    );
  }
  return decide({
    key,
    title,
    candidates: ncs.map((nc) => ({
      value: nc.nodeRegistration.kubeletExtraArgs,
      source: atField(nc.source, 'nodeRegistration.kubeletExtraArgs'),
    })),
    equals: (a, b) => flagSetKey(a) === flagSetKey(b),
    reason:
      'kubeadm configurations give different kubelet flags; each node keeps its own in /var/lib/kubelet/kubeadm-flags.env. ' +
      'ferry shows the first (InitConfiguration when present); check each node',
    missing: '',
  });
}
