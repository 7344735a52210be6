/**
 * kubeadm configuration: a multi-document YAML (kubeadm-config.yaml, or the ConfigMap
 * kube-system/kubeadm-config) normalized from v1beta2, v1beta3 and v1beta4 into one shape.
 * The differences that matter: v1beta2/3 extraArgs are string maps, v1beta4's are lists of
 * {name, value} that may repeat a flag; dns.type exists only in v1beta2; timeoutForControlPlane
 * moved out of apiServer in v1beta4. Secrets (bootstrap token secrets, certificateKey) are never read.
 */
import { inputError, type Location } from '../errors.js';
import { formatPath } from '../util/walk.js';
import type {
  ClusterConfiguration,
  ComponentConfig,
  ControlPlaneComponentConfig,
  Flag,
  HostPathMount,
  KubeadmApiVersion,
  KubeadmConfig,
  KubeadmNodeConfiguration,
  NodeRegistration,
  SourceRef,
  Taint,
} from './model.js';
import { describeSource } from './model.js';
import { describeValue, isRecord } from './validate.js';
import { componentConfigProblem, flagProblem } from './value-kinds.js';
import { type ValueKind, valueProblem } from './values.js';
import { type FieldPath, type ParsedDoc, parseYamlDocuments } from './yaml.js';

export const SUPPORTED_KUBEADM_API_VERSIONS: readonly KubeadmApiVersion[] = [
  'kubeadm.k8s.io/v1beta2',
  'kubeadm.k8s.io/v1beta3',
  'kubeadm.k8s.io/v1beta4',
];

/** kubeadm kinds that carry nothing ferry needs; accepted and skipped. */
const IGNORED_KUBEADM_KINDS = new Set(['ResetConfiguration', 'UpgradeConfiguration', 'ClusterStatus']);

const EXPECTED_KINDS =
  'ClusterConfiguration, InitConfiguration, JoinConfiguration (kubeadm.k8s.io), KubeletConfiguration (kubelet.config.k8s.io), KubeProxyConfiguration (kubeproxy.config.k8s.io)';

export interface KubeadmOrigin {
  file?: string;
  object?: SourceRef;
}

export function parseKubeadmDocuments(
  text: string,
  origin: KubeadmOrigin,
): { kubeadm: KubeadmConfig; kubelet?: ComponentConfig; kubeProxy?: ComponentConfig } {
  const objectName = origin.object ? describeSource(origin.object) : undefined;
  const textOrigin: { file?: string; object?: string } = {};
  if (origin.file !== undefined) textOrigin.file = origin.file;
  if (objectName !== undefined) textOrigin.object = objectName;
  const docs = parseYamlDocuments(text, textOrigin);

  const kubeadm: KubeadmConfig = { nodeConfigurations: [] };
  const out: { kubeadm: KubeadmConfig; kubelet?: ComponentConfig; kubeProxy?: ComponentConfig } = { kubeadm };
  for (const doc of docs) {
    const d = new Doc(doc, origin, objectName);
    const { apiVersion, kind } = d.typeMeta();
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    if (group === 'kubeadm.k8s.io') {
      if (!(SUPPORTED_KUBEADM_API_VERSIONS as readonly string[]).includes(apiVersion)) {
        d.fail(
          ['apiVersion'],
          `unsupported kubeadm apiVersion ${apiVersion}: ferry reads ${SUPPORTED_KUBEADM_API_VERSIONS.join(', ')}`,
          'convert the configuration with `kubeadm config migrate --old-config OLD --new-config NEW` (kubeadm 1.15-1.21 turns v1beta1 into v1beta2)',
        );
      }
      const version = apiVersion as KubeadmApiVersion;
      if (kind === 'ClusterConfiguration') {
        if (kubeadm.clusterConfiguration) {
          d.fail(['kind'], 'a second ClusterConfiguration', 'keep exactly one ClusterConfiguration document');
        }
        kubeadm.clusterConfiguration = normalizeCluster(d, version);
      } else if (kind === 'InitConfiguration' || kind === 'JoinConfiguration') {
        kubeadm.nodeConfigurations.push(normalizeNode(d, version, kind));
      } else if (!IGNORED_KUBEADM_KINDS.has(kind)) {
        d.fail(['kind'], `unexpected kind ${kind} for ${apiVersion}`, `use one of ${EXPECTED_KINDS}`);
      }
    } else if (group === 'kubelet.config.k8s.io' && kind === 'KubeletConfiguration') {
      // v1beta1 is the only KubeletConfiguration version Kubernetes has served.
      if (apiVersion !== 'kubelet.config.k8s.io/v1beta1')
        d.fail(
          ['apiVersion'],
          `unsupported KubeletConfiguration apiVersion ${apiVersion}: ferry reads kubelet.config.k8s.io/v1beta1`,
          'copy the kubelet configuration again from the kubelet-config ConfigMap or /var/lib/kubelet/config.yaml',
        );
      if (out.kubelet) d.fail(['kind'], 'a second KubeletConfiguration', 'keep one KubeletConfiguration');
      out.kubelet = d.componentConfig(apiVersion, kind);
    } else if (group === 'kubeproxy.config.k8s.io' && kind === 'KubeProxyConfiguration') {
      if (out.kubeProxy)
        d.fail(['kind'], 'a second KubeProxyConfiguration', 'keep one KubeProxyConfiguration');
      out.kubeProxy = d.componentConfig(apiVersion, kind);
    } else {
      d.fail(
        ['kind'],
        `${apiVersion} ${kind} is not a kubeadm configuration document`,
        `keep only ${EXPECTED_KINDS} in the kubeadm configuration`,
      );
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

const REMEDIATION = 'fix the field so it matches the kubeadm configuration reference for this apiVersion';

/** One document being read: typed accessors that fail with file, line, column and field. */
class Doc {
  readonly value: Record<string, unknown>;
  kind = '';

  constructor(
    readonly doc: ParsedDoc,
    readonly origin: KubeadmOrigin,
    readonly objectName: string | undefined,
  ) {
    if (!isRecord(doc.value)) {
      this.value = {};
      this.fail([], 'expected a mapping with apiVersion and kind', `use one of ${EXPECTED_KINDS}`);
    }
    this.value = doc.value;
  }

  typeMeta(): { apiVersion: string; kind: string } {
    const apiVersion = this.value.apiVersion;
    const kind = this.value.kind;
    if (typeof apiVersion !== 'string' || apiVersion === '') {
      this.fail(
        ['apiVersion'],
        'the document has no apiVersion',
        `give each document an apiVersion and a kind: ${EXPECTED_KINDS}`,
      );
    }
    if (typeof kind !== 'string' || kind === '') {
      this.fail(
        ['kind'],
        'the document has no kind',
        `give each document an apiVersion and a kind: ${EXPECTED_KINDS}`,
      );
    }
    this.kind = kind;
    return { apiVersion, kind };
  }

  source(): SourceRef {
    if (this.origin.object) return { ...this.origin.object };
    return { kind: 'file', path: this.origin.file ?? '<text>', line: this.doc.line };
  }

  fail(path: FieldPath, message: string, remediation: string = REMEDIATION): never {
    const loc: Location = {};
    if (this.origin.file !== undefined) loc.file = this.origin.file;
    const pos = this.doc.locate(path) ?? (path.length > 1 ? this.doc.locate(path.slice(0, -1)) : undefined);
    loc.line = pos?.line ?? this.doc.line;
    if (pos) loc.column = pos.column;
    const what = this.kind || 'kubeadm configuration document';
    loc.object = this.objectName ? `${what} in ${this.objectName}` : what;
    if (path.length > 0) loc.field = formatPath(path);
    throw inputError(message, loc, remediation);
  }

  get(path: FieldPath): unknown {
    let cur: unknown = this.value;
    for (const p of path) {
      if (cur === null || cur === undefined) return undefined;
      if (typeof p === 'number') cur = Array.isArray(cur) ? cur[p] : undefined;
      else cur = isRecord(cur) ? cur[p] : undefined;
    }
    return cur;
  }

  str(path: FieldPath): string | undefined {
    const v = this.get(path);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string')
      this.fail(path, `expected a string, found ${typeof v} ${JSON.stringify(v)}`, quoteHint());
    return v;
  }

  bool(path: FieldPath): boolean | undefined {
    const v = this.get(path);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') this.fail(path, `expected true or false, found ${JSON.stringify(v)}`);
    return v;
  }

  int(path: FieldPath): number | undefined {
    const v = this.get(path);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v))
      this.fail(path, `expected an integer, found ${JSON.stringify(v)}`);
    return v;
  }

  record(path: FieldPath): Record<string, unknown> | undefined {
    const v = this.get(path);
    if (v === undefined || v === null) return undefined;
    if (!isRecord(v)) this.fail(path, 'expected a mapping');
    return v;
  }

  list(path: FieldPath): unknown[] | undefined {
    const v = this.get(path);
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) this.fail(path, 'expected a list');
    return v;
  }

  strings(path: FieldPath): string[] {
    const l = this.list(path) ?? [];
    return l.map((_, i) => this.str([...path, i]) ?? '');
  }

  /** A string holding a value of `kind` (a CIDR, an endpoint, …); a bad one fails at its line. */
  valueOf(path: FieldPath, kind: ValueKind): string | undefined {
    const s = this.str(path);
    if (s !== undefined && s !== '') this.check(path, kind, s);
    return s;
  }

  /** A list of strings, each a value of `kind`. */
  valuesOf(path: FieldPath, kind: ValueKind): string[] {
    return this.strings(path).map((s, i) => {
      this.check([...path, i], kind, s);
      return s;
    });
  }

  check(path: FieldPath, kind: ValueKind, s: string): void {
    const problem = valueProblem(kind, s);
    if (problem) this.fail(path, `${JSON.stringify(s)} is ${problem}`, VALUE_REMEDIATION);
  }

  componentConfig(apiVersion: string, kind: string): ComponentConfig {
    const { apiVersion: _a, kind: _k, ...spec } = this.value;
    const bad = componentConfigProblem(kind, spec);
    if (bad) {
      const shown = typeof bad.value === 'string' ? JSON.stringify(bad.value) : describeValue(bad.value);
      this.fail(bad.path, `${shown} is ${bad.problem}`, VALUE_REMEDIATION);
    }
    return { apiVersion, kind, source: this.source(), spec };
  }

  /**
   * extraArgs: a string map in v1beta2/3, a list of {name, value} in v1beta4. Scalars are turned
   * into strings because YAML readers give `v: 2` as a number while the flag is a string.
   */
  args(path: FieldPath, version: KubeadmApiVersion, component: string): Flag[] {
    const v = this.get(path);
    if (v === undefined || v === null) return [];
    const checked = (flag: Flag, at: FieldPath): Flag => {
      const bad = flagProblem(component, flag);
      if (bad) this.fail(at, `${JSON.stringify(flag.value)} is ${bad.problem}`, VALUE_REMEDIATION);
      return flag;
    };
    const v4 = version === 'kubeadm.k8s.io/v1beta4';
    if (v4) {
      if (!Array.isArray(v)) {
        this.fail(
          path,
          `${version} expects extraArgs as a list of {name, value}, found a ${isRecord(v) ? 'map' : typeof v}`,
          'write each argument as `- name: FLAG` / `  value: VALUE`, or set apiVersion to kubeadm.k8s.io/v1beta3 for the map form',
        );
      }
      return v.map((_, i) => {
        const name = this.str([...path, i, 'name']);
        if (!name) this.fail([...path, i, 'name'], 'an extra argument without a name');
        return checked({ name, value: this.scalar([...path, i, 'value']) }, [...path, i, 'value']);
      });
    }
    if (!isRecord(v)) {
      this.fail(
        path,
        `${version} expects extraArgs as a map of flag: value, found a ${Array.isArray(v) ? 'list' : typeof v}`,
        'write the arguments as `FLAG: VALUE`, or set apiVersion to kubeadm.k8s.io/v1beta4 for the list form',
      );
    }
    return Object.keys(v).map((name) =>
      checked({ name, value: this.scalar([...path, name]) }, [...path, name]),
    );
  }

  scalar(path: FieldPath): string {
    const v = this.get(path);
    if (v === undefined || v === null) return '';
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    return this.fail(path, 'expected a string value', quoteHint());
  }
}

function quoteHint(): string {
  return 'quote the value in the YAML (e.g. "1.30") so it is read as a string';
}

/** Records the fields of `obj` that are not in `known`, as dotted paths, so nothing vanishes silently. */
function collectUnknown(
  obj: Record<string, unknown> | undefined,
  known: readonly string[],
  prefix: string,
  out: string[],
) {
  if (!obj) return;
  for (const k of Object.keys(obj)) if (!known.includes(k)) out.push(prefix ? `${prefix}.${k}` : k);
}

const COMPONENT_KEYS = ['extraArgs', 'extraVolumes'];

/** The component whose flags a ClusterConfiguration section's extraArgs are (value-kinds.ts). */
const COMPONENT_OF = {
  apiServer: 'kube-apiserver',
  controllerManager: 'kube-controller-manager',
  scheduler: 'kube-scheduler',
} as const;

const VALUE_REMEDIATION =
  'correct the value in the kubeadm configuration (a Go duration, an IP address, a CIDR, a host or URL as the field takes it); ferry never carries a value it cannot read into the kit';

function normalizeCluster(d: Doc, version: KubeadmApiVersion): ClusterConfiguration {
  const v4 = version === 'kubeadm.k8s.io/v1beta4';
  const v2 = version === 'kubeadm.k8s.io/v1beta2';
  const unknownFields: string[] = [];
  const top = [
    'apiVersion',
    'kind',
    'clusterName',
    'kubernetesVersion',
    'controlPlaneEndpoint',
    'imageRepository',
    'certificatesDir',
    'featureGates',
    'networking',
    'apiServer',
    'controllerManager',
    'scheduler',
    'etcd',
    'dns',
  ];
  if (v4) top.push('encryptionAlgorithm');
  collectUnknown(d.value, top, '', unknownFields);

  const cc: ClusterConfiguration = {
    sourceApiVersion: version,
    source: d.source(),
    featureGates: featureGates(d),
    networking: {},
    apiServer: {
      ...component(d, 'apiServer', version, unknownFields, ['certSANs', 'timeoutForControlPlane']),
      certSANs: [],
    },
    controllerManager: component(d, 'controllerManager', version, unknownFields, []),
    scheduler: component(d, 'scheduler', version, unknownFields, []),
    etcd: {},
    dns: {},
    unknownFields,
  };
  for (const k of ['clusterName', 'imageRepository', 'certificatesDir'] as const) {
    const s = d.str([k]);
    if (s !== undefined) cc[k] = s;
  }
  const kubernetesVersion = d.valueOf(['kubernetesVersion'], 'version');
  if (kubernetesVersion !== undefined) cc.kubernetesVersion = kubernetesVersion;
  const endpoint = d.valueOf(['controlPlaneEndpoint'], 'endpoint');
  if (endpoint !== undefined) cc.controlPlaneEndpoint = endpoint;
  if (v4) {
    const alg = d.str(['encryptionAlgorithm']);
    if (alg !== undefined) cc.encryptionAlgorithm = alg;
  }

  const net = d.record(['networking']);
  collectUnknown(net, ['podSubnet', 'serviceSubnet', 'dnsDomain'], 'networking', unknownFields);
  const networkingKinds = { podSubnet: 'cidrs', serviceSubnet: 'cidrs', dnsDomain: 'dns-name' } as const;
  for (const [k, kind] of Object.entries(networkingKinds) as [keyof typeof networkingKinds, ValueKind][]) {
    const s = d.valueOf(['networking', k], kind);
    if (s !== undefined) cc.networking[k] = s;
  }

  cc.apiServer.certSANs = d.valuesOf(['apiServer', 'certSANs'], 'san');
  if (!v4) {
    const t = d.valueOf(['apiServer', 'timeoutForControlPlane'], 'duration');
    if (t !== undefined) cc.apiServer.timeoutForControlPlane = t;
  } else if (d.get(['apiServer', 'timeoutForControlPlane']) !== undefined) {
    unknownFields.push('apiServer.timeoutForControlPlane');
  }

  const etcd = d.record(['etcd']);
  collectUnknown(etcd, ['local', 'external'], 'etcd', unknownFields);
  const local = d.record(['etcd', 'local']);
  if (local) {
    const localKeys = [
      'imageRepository',
      'imageTag',
      'dataDir',
      'extraArgs',
      'serverCertSANs',
      'peerCertSANs',
    ];
    collectUnknown(local, localKeys, 'etcd.local', unknownFields);
    const l: NonNullable<ClusterConfiguration['etcd']['local']> = {
      extraArgs: d.args(['etcd', 'local', 'extraArgs'], version, 'etcd'),
      serverCertSANs: d.valuesOf(['etcd', 'local', 'serverCertSANs'], 'san'),
      peerCertSANs: d.valuesOf(['etcd', 'local', 'peerCertSANs'], 'san'),
    };
    for (const k of ['imageRepository', 'imageTag', 'dataDir'] as const) {
      const s = d.str(['etcd', 'local', k]);
      if (s !== undefined) l[k] = s;
    }
    cc.etcd.local = l;
  }
  const external = d.record(['etcd', 'external']);
  if (external) {
    collectUnknown(external, ['endpoints', 'caFile', 'certFile', 'keyFile'], 'etcd.external', unknownFields);
    const e: NonNullable<ClusterConfiguration['etcd']['external']> = {
      endpoints: d.valuesOf(['etcd', 'external', 'endpoints'], 'url'),
    };
    for (const k of ['caFile', 'certFile', 'keyFile'] as const) {
      const s = d.str(['etcd', 'external', k]);
      if (s !== undefined) e[k] = s;
    }
    cc.etcd.external = e;
  }

  const dns = d.record(['dns']);
  const dnsKeys = ['imageRepository', 'imageTag'];
  if (v4) dnsKeys.push('disabled');
  if (v2) dnsKeys.push('type');
  collectUnknown(dns, dnsKeys, 'dns', unknownFields);
  for (const k of ['imageRepository', 'imageTag'] as const) {
    const s = d.str(['dns', k]);
    if (s !== undefined) cc.dns[k] = s;
  }
  if (v4) {
    const disabled = d.bool(['dns', 'disabled']);
    if (disabled !== undefined) cc.dns.disabled = disabled;
  } else if (v2 && dns?.type !== undefined && dns.type !== 'CoreDNS') {
    // kube-dns was removed in kubeadm 1.21: keep the signal rather than drop it.
    unknownFields.push(`dns.type=${String(dns.type)}`);
  }
  return cc;
}

function featureGates(d: Doc): Record<string, boolean> {
  const fg = d.record(['featureGates']);
  const out: Record<string, boolean> = {};
  if (!fg) return out;
  for (const k of Object.keys(fg)) {
    const b = d.bool(['featureGates', k]);
    if (b !== undefined) out[k] = b;
  }
  return out;
}

function component(
  d: Doc,
  key: 'apiServer' | 'controllerManager' | 'scheduler',
  version: KubeadmApiVersion,
  unknownFields: string[],
  extraKnown: string[],
): ControlPlaneComponentConfig {
  collectUnknown(d.record([key]), [...COMPONENT_KEYS, ...extraKnown], key, unknownFields);
  return {
    extraArgs: d.args([key, 'extraArgs'], version, COMPONENT_OF[key]),
    extraVolumes: volumes(d, [key, 'extraVolumes']),
  };
}

function volumes(d: Doc, path: FieldPath): HostPathMount[] {
  const l = d.list(path) ?? [];
  return l.map((_, i) => {
    const p = [...path, i];
    d.record(p);
    const name = d.str([...p, 'name']);
    const hostPath = d.str([...p, 'hostPath']);
    const mountPath = d.str([...p, 'mountPath']);
    if (name === undefined || hostPath === undefined || mountPath === undefined) {
      d.fail(p, 'an extra volume needs name, hostPath and mountPath');
    }
    const m: HostPathMount = { name, hostPath, mountPath };
    const ro = d.bool([...p, 'readOnly']);
    if (ro !== undefined) m.readOnly = ro;
    const pt = d.str([...p, 'pathType']);
    if (pt !== undefined) m.pathType = pt;
    return m;
  });
}

// A bootstrap token is "ID.SECRET"; only a well-formed token is split, so a malformed value can
// never leak its secret half into a snapshot.
const TOKEN_RE = /^([a-z0-9]{6})\.[a-z0-9]{16}$/;

function tokenId(token: unknown): string | undefined {
  if (typeof token !== 'string') return undefined;
  return TOKEN_RE.exec(token)?.[1];
}

function normalizeNode(
  d: Doc,
  version: KubeadmApiVersion,
  kind: 'InitConfiguration' | 'JoinConfiguration',
): KubeadmNodeConfiguration {
  const nr = ['nodeRegistration'];
  const reg: NodeRegistration = {
    kubeletExtraArgs: d.args([...nr, 'kubeletExtraArgs'], version, 'kubelet'),
    ignorePreflightErrors: d.strings([...nr, 'ignorePreflightErrors']),
  };
  const name = d.str([...nr, 'name']);
  if (name !== undefined) reg.name = name;
  const cri = d.str([...nr, 'criSocket']);
  if (cri !== undefined) reg.criSocket = cri;
  // Absent taints and `taints: []` differ for kubeadm: default control-plane taint vs none.
  const taints = d.list([...nr, 'taints']);
  if (taints) reg.taints = taints.map((_, i) => taint(d, [...nr, 'taints', i]));

  const out: KubeadmNodeConfiguration = {
    kind,
    sourceApiVersion: version,
    source: d.source(),
    nodeRegistration: reg,
    bootstrapTokenIds: [],
  };
  const endpointPath =
    kind === 'InitConfiguration' ? ['localAPIEndpoint'] : ['controlPlane', 'localAPIEndpoint'];
  if (d.record(endpointPath)) {
    const ep: NonNullable<KubeadmNodeConfiguration['localAPIEndpoint']> = {};
    const addr = d.valueOf([...endpointPath, 'advertiseAddress'], 'ip');
    if (addr !== undefined) ep.advertiseAddress = addr;
    const port = d.int([...endpointPath, 'bindPort']);
    if (port !== undefined && port !== 0) d.check([...endpointPath, 'bindPort'], 'port', String(port));
    if (port !== undefined) ep.bindPort = port;
    out.localAPIEndpoint = ep;
  }
  const ids = new Set<string>();
  if (kind === 'InitConfiguration') {
    for (const t of d.list(['bootstrapTokens']) ?? []) {
      const id = tokenId(isRecord(t) ? t.token : undefined);
      if (id) ids.add(id);
    }
  } else {
    for (const p of [
      ['discovery', 'bootstrapToken', 'token'],
      ['discovery', 'tlsBootstrapToken'],
    ]) {
      const id = tokenId(d.get(p));
      if (id) ids.add(id);
    }
  }
  out.bootstrapTokenIds = [...ids];
  return out;
}

function taint(d: Doc, path: FieldPath): Taint {
  d.record(path);
  const key = d.str([...path, 'key']);
  const effect = d.str([...path, 'effect']);
  if (key === undefined || effect === undefined) d.fail(path, 'a taint needs key and effect');
  const t: Taint = { key, effect };
  const value = d.str([...path, 'value']);
  if (value !== undefined) t.value = value;
  return t;
}
