/**
 * `mgmt.yaml`: what `ferry mgmt bootstrap` builds. Every field is checked here, once; the stages read
 * only the typed result. Secrets are never inline: the Proxmox token secret (and the vSphere
 * password) come from a file or an environment variable, read only when a stage needs them.
 */
import { dirname, resolve } from 'node:path';
import { inputError } from '../../errors.js';
import { parseYamlDocuments } from '../../snapshot/yaml.js';
import { readTextFile } from '../../util/input-file.js';
import { Fields } from './fields.js';

export const MGMT_API_VERSION = 'ferry.dev/v1alpha1';
export const MGMT_KIND = 'ManagementCluster';

/** Where a secret value lives; the value itself never sits in mgmt.yaml. */
export type SecretSource = { kind: 'file'; path: string; shown: string } | { kind: 'env'; name: string };

export interface ProxmoxInfra {
  kind: 'proxmox';
  /** https://host:8006 */
  url: string;
  /** user@realm!tokenid */
  tokenId: string;
  tokenSecret: SecretSource;
  /** Verify the Proxmox API certificate (CAPMOX defaults to insecure when unset: capi.md §7). */
  insecure: boolean;
  node: string;
  templateId: number;
  bridge: string;
  vlan?: number;
  storage?: string;
  /** Where CAPMOX uploads each machine's NoCloud ISO (mgmt.md §4). */
  isoStorage: string;
  bootDisk: string;
}

export interface VsphereInfra {
  kind: 'vsphere';
  server: string;
  thumbprint: string;
  username: string;
  password: SecretSource;
  datacenter: string;
  datastore: string;
  network: string;
  template: string;
}

export type Infrastructure = ProxmoxInfra | VsphereInfra;

export interface ProviderVersions {
  core: string;
  bootstrapTalos: string;
  controlPlaneTalos: string;
  infrastructure: string;
  ipamInCluster: string;
}

export type Endpoint =
  | { kind: 'vip'; vip: string; port: number }
  | { kind: 'host'; host: string; port: number };

export type Addressing =
  | { kind: 'pool'; addresses: string[]; prefix: number; gateway: string }
  | { kind: 'dhcp' };

export interface MachineShape {
  cores: number;
  memoryMiB: number;
  diskGb: number;
}

export interface ClusterShape {
  name: string;
  namespace: string;
  talosVersion: string;
  kubernetesVersion: string;
  controlPlanes: number;
  workers: number;
  endpoint: Endpoint;
  addressing: Addressing;
  dns: string[];
  podSubnet: string;
  serviceSubnet: string;
  controlPlane: MachineShape;
  worker: MachineShape;
}

export interface Chart {
  version: string;
  /** An oci:// reference, or a chart name in `repo`. */
  chart: string;
  repo?: string;
}

export interface MgmtConfig {
  /** The file as the operator named it, for messages. */
  file: string;
  /** Directory relative paths in the file are resolved against. */
  baseDir: string;
  kind: { name: string; image?: string };
  infrastructure: Infrastructure;
  providers: ProviderVersions;
  cluster: ClusterShape;
  cni: { kind: 'cilium' } & Chart;
  ccm: ({ kind: 'talos-ccm' } & Chart) | { kind: 'none' };
  certManager: Chart;
  operator: Chart;
  /** Registry every provider image is pulled from (clusterctl `images.all.repository`). */
  imageRepository?: string;
}

const VERSION = /^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;
const CHART_VERSION = /^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;
const DNS_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
const IPV4_RANGE =
  /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}(-(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}|\/\d{1,2})?$/;
const CIDR = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}\/\d{1,2}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Defaults that are printed by `--dry-run`; versions from mgmt.md §0 (the pinned versions). */
export const DEFAULTS = {
  kindName: 'ferry-bootstrap',
  providers: {
    core: 'v1.14.0',
    bootstrapTalos: 'v0.6.12',
    controlPlaneTalos: 'v0.5.13',
    proxmox: 'v0.9.0',
    vsphere: 'v1.16.1',
    ipamInCluster: 'v1.1.0',
  },
  cilium: { version: '1.19.6', chart: 'oci://quay.io/cilium/charts/cilium' },
  talosCcm: { version: '0.5.4', chart: 'oci://ghcr.io/siderolabs/charts/talos-cloud-controller-manager' },
  certManager: { version: 'v1.21.0', chart: 'oci://quay.io/jetstack/charts/cert-manager' },
  operator: {
    version: '0.28.0',
    chart: 'cluster-api-operator',
    repo: 'https://kubernetes-sigs.github.io/cluster-api-operator',
  },
} as const;

export async function loadMgmtConfig(path: string, shown: string): Promise<MgmtConfig> {
  const text = await readTextFile(path, {
    shown,
    flag: '--config',
    provide:
      'pass --config the mgmt.yaml that describes the management cluster (see examples/mgmt/mgmt.yaml)',
  });
  return parseMgmtConfig(text, shown, dirname(resolve(path)));
}

export function parseMgmtConfig(text: string, file: string, baseDir: string): MgmtConfig {
  const docs = parseYamlDocuments(text, { file });
  const doc = docs[0];
  if (docs.length !== 1 || !doc)
    throw inputError(
      `${file} must hold exactly one YAML document; it holds ${docs.length}`,
      { file },
      `write one ${MGMT_KIND} document (see examples/mgmt/mgmt.yaml)`,
    );
  const f = new Fields(doc, file);
  f.object(
    [],
    [
      'apiVersion',
      'kind',
      'kindCluster',
      'infrastructure',
      'providers',
      'cluster',
      'cni',
      'ccm',
      'certManager',
      'operator',
      'images',
    ],
  );
  if (f.raw(['apiVersion']) !== MGMT_API_VERSION)
    f.fail(['apiVersion'], `apiVersion must be ${MGMT_API_VERSION}`, `write apiVersion: ${MGMT_API_VERSION}`);
  if (f.raw(['kind']) !== MGMT_KIND)
    f.fail(['kind'], `kind must be ${MGMT_KIND}`, `write kind: ${MGMT_KIND}`);

  f.object(['kindCluster'], ['name', 'image'], false);
  const kindName = f.string(['kindCluster', 'name'], {
    dflt: DEFAULTS.kindName,
    pattern: DNS_NAME,
    hint: 'a lowercase DNS label, e.g. ferry-bootstrap',
  });
  const kindImage = f.optionalString(['kindCluster', 'image'], {
    hint: 'a node image, e.g. kindest/node:v1.36.1',
  });

  const infrastructure = parseInfra(f, baseDir);
  const providers = parseProviders(f, infrastructure.kind);
  const cluster = parseCluster(f, infrastructure);

  f.object(['cni'], ['name', 'version', 'chart', 'repo'], false);
  f.oneOf(['cni', 'name'], ['cilium'] as const, 'cilium');
  const cni = { kind: 'cilium' as const, ...chart(f, ['cni'], DEFAULTS.cilium) };
  f.object(['ccm'], ['name', 'version', 'chart', 'repo'], false);
  const ccmName = f.oneOf(['ccm', 'name'], ['talos-ccm', 'none'] as const, 'talos-ccm');
  const ccm: MgmtConfig['ccm'] =
    ccmName === 'none' ? { kind: 'none' } : { kind: 'talos-ccm', ...chart(f, ['ccm'], DEFAULTS.talosCcm) };
  f.object(['certManager'], ['version', 'chart', 'repo'], false);
  f.object(['operator'], ['version', 'chart', 'repo'], false);
  f.object(['images'], ['repository'], false);
  const imageRepository = f.optionalString(['images', 'repository'], {
    pattern: /^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._/-]+)?$/,
    hint: 'a registry path without tag, e.g. registry.example.com/capi',
  });
  return {
    file,
    baseDir,
    kind: kindImage === undefined ? { name: kindName } : { name: kindName, image: kindImage },
    infrastructure,
    providers,
    cluster,
    cni,
    ccm,
    certManager: chart(f, ['certManager'], DEFAULTS.certManager),
    operator: chart(f, ['operator'], DEFAULTS.operator),
    ...(imageRepository !== undefined ? { imageRepository } : {}),
  };
}

function chart(f: Fields, path: string[], dflt: { version: string; chart: string; repo?: string }): Chart {
  const chartName = f.string([...path, 'chart'], { dflt: dflt.chart });
  const repo =
    f.optionalString([...path, 'repo'], { pattern: /^https?:\/\//, hint: 'a Helm repository URL' }) ??
    (f.has([...path, 'chart']) ? undefined : dflt.repo);
  if (!chartName.startsWith('oci://') && repo === undefined)
    f.fail(
      [...path, 'chart'],
      `chart "${chartName}" is neither an oci:// reference nor given with a repo`,
      `write an oci:// chart, or add ${path.join('.')}.repo: URL`,
    );
  return {
    version: f.string([...path, 'version'], {
      dflt: dflt.version,
      pattern: CHART_VERSION,
      hint: 'a chart version, e.g. 1.19.6',
    }),
    chart: chartName,
    ...(repo !== undefined ? { repo } : {}),
  };
}

function secretSource(f: Fields, path: string[], baseDir: string, what: string): SecretSource {
  const v = f.raw(path);
  if (typeof v === 'string')
    f.fail(
      path,
      `${what} must not be written into the file`,
      `store it in a file (chmod 600) and write ${path.join('.')}: {file: PATH}, or name an environment variable: {env: NAME}`,
    );
  f.object(path, ['file', 'env']);
  const file = f.optionalString([...path, 'file']);
  const env = f.optionalString([...path, 'env'], { pattern: ENV_NAME, hint: 'an environment variable name' });
  if ((file === undefined) === (env === undefined))
    f.fail(path, `${path.join('.')} needs exactly one of file or env`, `write {file: PATH} or {env: NAME}`);
  return file !== undefined
    ? { kind: 'file', path: resolve(baseDir, file), shown: file }
    : { kind: 'env', name: env as string };
}

function parseInfra(f: Fields, baseDir: string): Infrastructure {
  const infra = f.object(['infrastructure'], ['proxmox', 'vsphere']) ?? {};
  const names = Object.keys(infra);
  if (names.length !== 1)
    f.fail(
      ['infrastructure'],
      'infrastructure must name exactly one of proxmox, vsphere',
      'keep one of them',
    );
  if (names[0] === 'proxmox') {
    const p = ['infrastructure', 'proxmox'];
    f.object(p, [
      'url',
      'tokenId',
      'tokenSecret',
      'insecure',
      'node',
      'templateId',
      'bridge',
      'vlan',
      'storage',
      'isoStorage',
      'bootDisk',
    ]);
    const url = f.string([...p, 'url'], {
      pattern: /^https:\/\/[^/\s]+(:\d+)?\/?$/,
      hint: 'the Proxmox API, e.g. https://pve.example.com:8006',
    });
    const vlan = f.has([...p, 'vlan']) ? f.int([...p, 'vlan'], { min: 1, max: 4094 }) : undefined;
    const storage = f.optionalString([...p, 'storage']);
    return {
      kind: 'proxmox',
      url: url.replace(/\/$/, ''),
      tokenId: f.string([...p, 'tokenId'], {
        pattern: /^[^@\s!]+@[^@\s!]+![A-Za-z][A-Za-z0-9._-]*$/,
        hint: 'user@realm!tokenid, e.g. capi@pve!capi (pveum user token add capi@pve capi)',
      }),
      tokenSecret: secretSource(f, [...p, 'tokenSecret'], baseDir, 'the Proxmox token secret'),
      insecure: f.bool([...p, 'insecure'], false),
      node: f.string([...p, 'node'], { hint: 'the Proxmox node the template lives on' }),
      templateId: f.int([...p, 'templateId'], { min: 100, max: 999_999_999 }),
      bridge: f.string([...p, 'bridge'], { dflt: 'vmbr0' }),
      ...(vlan !== undefined ? { vlan } : {}),
      ...(storage !== undefined ? { storage } : {}),
      isoStorage: f.string([...p, 'isoStorage'], { dflt: 'local' }),
      bootDisk: f.string([...p, 'bootDisk'], {
        dflt: 'scsi0',
        pattern: /^(scsi|virtio|sata)\d+$/,
        hint: 'e.g. scsi0',
      }),
    };
  }
  const v = ['infrastructure', 'vsphere'];
  f.object(v, [
    'server',
    'thumbprint',
    'username',
    'password',
    'datacenter',
    'datastore',
    'network',
    'template',
  ]);
  return {
    kind: 'vsphere',
    server: f.string([...v, 'server']),
    thumbprint: f.string([...v, 'thumbprint'], {
      pattern: /^([0-9A-Fa-f]{2}:){19}[0-9A-Fa-f]{2}$/,
      hint: "the vCenter certificate's SHA-1 fingerprint, colon-separated (openssl x509 -noout -fingerprint -sha1)",
    }),
    username: f.string([...v, 'username']),
    password: secretSource(f, [...v, 'password'], baseDir, 'the vSphere password'),
    datacenter: f.string([...v, 'datacenter']),
    datastore: f.string([...v, 'datastore']),
    network: f.string([...v, 'network']),
    template: f.string([...v, 'template']),
  };
}

function parseProviders(f: Fields, infra: Infrastructure['kind']): ProviderVersions {
  const p = ['providers'];
  f.object(p, ['core', 'bootstrapTalos', 'controlPlaneTalos', 'infrastructure', 'ipamInCluster'], false);
  const v = (k: string, dflt: string) =>
    f.string([...p, k], { dflt, pattern: VERSION, hint: 'a release tag, e.g. v1.14.0' });
  return {
    core: v('core', DEFAULTS.providers.core),
    bootstrapTalos: v('bootstrapTalos', DEFAULTS.providers.bootstrapTalos),
    controlPlaneTalos: v('controlPlaneTalos', DEFAULTS.providers.controlPlaneTalos),
    infrastructure: v(
      'infrastructure',
      infra === 'proxmox' ? DEFAULTS.providers.proxmox : DEFAULTS.providers.vsphere,
    ),
    ipamInCluster: v('ipamInCluster', DEFAULTS.providers.ipamInCluster),
  };
}

function machine(f: Fields, path: string[], dflt: MachineShape): MachineShape {
  f.object(path, ['cores', 'memoryMiB', 'diskGb'], false);
  const memoryMiB = f.int([...path, 'memoryMiB'], { dflt: dflt.memoryMiB, min: 2048, max: 4_194_304 });
  // CAPMOX: memoryMiB must be a multiple of 8 (capi.md §7).
  if (memoryMiB % 8 !== 0)
    f.fail(
      [...path, 'memoryMiB'],
      `memoryMiB must be a multiple of 8; got ${memoryMiB}`,
      'round it to a multiple of 8',
    );
  return {
    cores: f.int([...path, 'cores'], { dflt: dflt.cores, min: 2, max: 512 }),
    memoryMiB,
    diskGb: f.int([...path, 'diskGb'], { dflt: dflt.diskGb, min: 10, max: 65_536 }),
  };
}

function parseCluster(f: Fields, infra: Infrastructure): ClusterShape {
  const c = ['cluster'];
  f.object(c, [
    'name',
    'namespace',
    'talosVersion',
    'kubernetesVersion',
    'controlPlanes',
    'workers',
    'endpoint',
    'network',
    'podSubnet',
    'serviceSubnet',
    'controlPlane',
    'worker',
  ]);
  const name = f.string([...c, 'name'], { pattern: DNS_NAME, hint: 'a lowercase DNS label, e.g. kmgt' });
  const controlPlanes = f.int([...c, 'controlPlanes'], { dflt: 3, min: 1, max: 7 });
  if (controlPlanes % 2 === 0)
    f.fail(
      [...c, 'controlPlanes'],
      `controlPlanes must be odd (etcd quorum); got ${controlPlanes}`,
      'use 3 (the default) or 5; 1 only for a throw-away cluster',
    );

  const e = [...c, 'endpoint'];
  f.object(e, ['vip', 'host', 'port']);
  const port = f.int([...e, 'port'], { dflt: 6443, min: 1, max: 65_535 });
  const hasVip = f.has([...e, 'vip']);
  if (hasVip === f.has([...e, 'host']))
    f.fail(
      e,
      'cluster.endpoint needs exactly one of vip or host',
      'vip: an unused address Talos shares between the control planes; host: a load balancer or DNS name in front of them',
    );
  const endpoint: Endpoint = hasVip
    ? { kind: 'vip', vip: f.string([...e, 'vip'], { pattern: IPV4, hint: 'an IPv4 address' }), port }
    : { kind: 'host', host: f.string([...e, 'host']), port };

  const n = [...c, 'network'];
  f.object(n, ['dhcp', 'pool', 'dns']);
  const dns = f.strings([...n, 'dns'], { min: 1, pattern: IPV4, hint: 'list the DNS servers the nodes use' });
  const dhcp = f.bool([...n, 'dhcp'], false);
  let addressing: Addressing;
  if (dhcp) {
    if (f.has([...n, 'pool']))
      f.fail([...n, 'pool'], 'network.dhcp and network.pool exclude each other', 'keep one');
    // CAPMOX always assigns addresses from its in-cluster IPAM pool: ipv4Config is required (capi.md §7).
    if (infra.kind === 'proxmox')
      f.fail(
        [...n, 'dhcp'],
        'Proxmox (CAPMOX) machines take their addresses from an IP pool, not DHCP',
        'set network.pool',
      );
    addressing = { kind: 'dhcp' };
  } else {
    const pl = [...n, 'pool'];
    f.object(pl, ['addresses', 'prefix', 'gateway']);
    addressing = {
      kind: 'pool',
      addresses: f.strings([...pl, 'addresses'], {
        min: 1,
        pattern: IPV4_RANGE,
        hint: 'addresses, ranges (10.0.0.100-10.0.0.120) or CIDRs',
      }),
      prefix: f.int([...pl, 'prefix'], { min: 1, max: 32 }),
      gateway: f.string([...pl, 'gateway'], { pattern: IPV4, hint: 'an IPv4 address' }),
    };
  }
  if (endpoint.kind === 'vip' && addressing.kind === 'pool' && addressing.addresses.includes(endpoint.vip))
    f.fail(
      [...e, 'vip'],
      `the VIP ${endpoint.vip} is also in network.pool.addresses: a machine could be given it`,
      'take the VIP out of the pool',
    );
  const talosVersion = f.string([...c, 'talosVersion'], {
    dflt: 'v1.13.7',
    pattern: VERSION,
    hint: 'e.g. v1.13.7',
  });
  const kubernetesVersion = f.string([...c, 'kubernetesVersion'], {
    dflt: 'v1.36.2',
    pattern: VERSION,
    hint: 'e.g. v1.36.2',
  });
  return {
    name,
    namespace: f.string([...c, 'namespace'], {
      dflt: name,
      pattern: DNS_NAME,
      hint: 'a lowercase DNS label',
    }),
    talosVersion,
    kubernetesVersion,
    controlPlanes,
    workers: f.int([...c, 'workers'], { dflt: 0, min: 0, max: 100 }),
    endpoint,
    addressing,
    dns,
    podSubnet: f.string([...c, 'podSubnet'], { dflt: '10.244.0.0/16', pattern: CIDR, hint: 'a CIDR' }),
    serviceSubnet: f.string([...c, 'serviceSubnet'], { dflt: '10.96.0.0/12', pattern: CIDR, hint: 'a CIDR' }),
    controlPlane: machine(f, [...c, 'controlPlane'], { cores: 2, memoryMiB: 4096, diskGb: 20 }),
    worker: machine(f, [...c, 'worker'], { cores: 2, memoryMiB: 4096, diskGb: 20 }),
  };
}

/** The endpoint as host:port and as the URL the kubeconfig will carry. */
export function endpointHost(c: ClusterShape): string {
  return c.endpoint.kind === 'vip' ? c.endpoint.vip : c.endpoint.host;
}
