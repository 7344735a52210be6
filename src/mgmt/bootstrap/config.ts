/**
 * `mgmt.yaml`: what `ferry mgmt bootstrap` builds. Every field is checked here, once; the stages read
 * only the typed result. Secrets are never inline: the Proxmox token secret (and the vSphere
 * password) come from a file or an environment variable, read only when a stage needs them.
 */
import { dirname, resolve } from 'node:path';
import { walkConfigDocument } from '../../snapshot/yaml-walk.js';
import { readTextFile } from '../../util/input-file.js';
import type { Walk } from '../../util/walk.js';

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
  const w = walkConfigDocument(text, file, {
    apiVersion: MGMT_API_VERSION,
    kind: MGMT_KIND,
    example: 'examples/mgmt/mgmt.yaml',
    allowed: [
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
  });

  w.at('kindCluster')
    .given()
    ?.object({ allowed: ['name', 'image'] });
  const kindName =
    w
      .at('kindCluster', 'name')
      .given()
      ?.string({ nonBlank: true, pattern: DNS_NAME, hint: 'a lowercase DNS label, e.g. ferry-bootstrap' }) ??
    DEFAULTS.kindName;
  const kindImage = w
    .at('kindCluster', 'image')
    .given()
    ?.string({ nonBlank: true, hint: 'a node image, e.g. kindest/node:v1.36.1' });

  const infrastructure = parseInfra(w.at('infrastructure'), baseDir);
  const providers = parseProviders(w.at('providers'), infrastructure.kind);
  const cluster = parseCluster(w.at('cluster'), infrastructure);

  const cniW = w.at('cni');
  cniW.given()?.object({ allowed: ['name', 'version', 'chart', 'repo'] });
  cniW
    .at('name')
    .given()
    ?.oneOf(['cilium'] as const, { expected: 'one of cilium' });
  const cni = { kind: 'cilium' as const, ...chart(cniW, DEFAULTS.cilium) };
  const ccmW = w.at('ccm');
  ccmW.given()?.object({ allowed: ['name', 'version', 'chart', 'repo'] });
  const ccmName =
    ccmW
      .at('name')
      .given()
      ?.oneOf(['talos-ccm', 'none'] as const) ?? 'talos-ccm';
  const ccm: MgmtConfig['ccm'] =
    ccmName === 'none' ? { kind: 'none' } : { kind: 'talos-ccm', ...chart(ccmW, DEFAULTS.talosCcm) };
  w.at('certManager')
    .given()
    ?.object({ allowed: ['version', 'chart', 'repo'] });
  w.at('operator')
    .given()
    ?.object({ allowed: ['version', 'chart', 'repo'] });
  w.at('images')
    .given()
    ?.object({ allowed: ['repository'] });
  const imageRepository = w
    .at('images', 'repository')
    .given()
    ?.string({
      nonBlank: true,
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
    certManager: chart(w.at('certManager'), DEFAULTS.certManager),
    operator: chart(w.at('operator'), DEFAULTS.operator),
    ...(imageRepository !== undefined ? { imageRepository } : {}),
  };
}

function chart(w: Walk, dflt: { version: string; chart: string; repo?: string }): Chart {
  const chartW = w.at('chart');
  const chartName = chartW.given()?.string({ nonBlank: true }) ?? dflt.chart;
  const repo =
    w
      .at('repo')
      .given()
      ?.string({ nonBlank: true, pattern: /^https?:\/\//, hint: 'a Helm repository URL' }) ??
    (chartW.absent ? dflt.repo : undefined);
  if (!chartName.startsWith('oci://') && repo === undefined)
    chartW.invalid(
      `chart "${chartName}" is neither an oci:// reference nor given with a repo`,
      `write an oci:// chart, or add ${w.field}.repo: URL`,
    );
  return {
    version:
      w
        .at('version')
        .given()
        ?.string({ nonBlank: true, pattern: CHART_VERSION, hint: 'a chart version, e.g. 1.19.6' }) ??
      dflt.version,
    chart: chartName,
    ...(repo !== undefined ? { repo } : {}),
  };
}

function secretSource(w: Walk, baseDir: string, what: string): SecretSource {
  if (typeof w.value === 'string')
    w.invalid(
      `${what} must not be written into the file`,
      `store it in a file (chmod 600) and write ${w.field}: {file: PATH}, or name an environment variable: {env: NAME}`,
    );
  w.object({ allowed: ['file', 'env'] });
  const file = w.at('file').given()?.string({ nonBlank: true });
  const env = w
    .at('env')
    .given()
    ?.string({ nonBlank: true, pattern: ENV_NAME, hint: 'an environment variable name' });
  if ((file === undefined) === (env === undefined))
    w.invalid(`${w.field} needs exactly one of file or env`, `write {file: PATH} or {env: NAME}`);
  return file !== undefined
    ? { kind: 'file', path: resolve(baseDir, file), shown: file }
    : { kind: 'env', name: env as string };
}

function parseInfra(w: Walk, baseDir: string): Infrastructure {
  const infra = w.object({ allowed: ['proxmox', 'vsphere'] });
  const names = Object.keys(infra);
  if (names.length !== 1)
    w.invalid('infrastructure must name exactly one of proxmox, vsphere', 'keep one of them');
  if (names[0] === 'proxmox') {
    const p = w.at('proxmox');
    p.object({
      allowed: [
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
      ],
    });
    const url = p.at('url').string({
      nonBlank: true,
      pattern: /^https:\/\/[^/\s]+(:\d+)?\/?$/,
      hint: 'the Proxmox API, e.g. https://pve.example.com:8006',
    });
    const vlan = p.at('vlan').given()?.int({ min: 1, max: 4094 });
    const storage = p.at('storage').given()?.string({ nonBlank: true });
    return {
      kind: 'proxmox',
      url: url.replace(/\/$/, ''),
      tokenId: p.at('tokenId').string({
        nonBlank: true,
        pattern: /^[^@\s!]+@[^@\s!]+![A-Za-z][A-Za-z0-9._-]*$/,
        hint: 'user@realm!tokenid, e.g. capi@pve!capi (pveum user token add capi@pve capi)',
      }),
      tokenSecret: secretSource(p.at('tokenSecret'), baseDir, 'the Proxmox token secret'),
      insecure: p.at('insecure').given()?.bool() ?? false,
      node: p.at('node').string({ nonBlank: true, hint: 'the Proxmox node the template lives on' }),
      templateId: p.at('templateId').int({ min: 100, max: 999_999_999 }),
      bridge: p.at('bridge').given()?.string({ nonBlank: true }) ?? 'vmbr0',
      ...(vlan !== undefined ? { vlan } : {}),
      ...(storage !== undefined ? { storage } : {}),
      isoStorage: p.at('isoStorage').given()?.string({ nonBlank: true }) ?? 'local',
      bootDisk:
        p
          .at('bootDisk')
          .given()
          ?.string({ nonBlank: true, pattern: /^(scsi|virtio|sata)\d+$/, hint: 'e.g. scsi0' }) ?? 'scsi0',
    };
  }
  const v = w.at('vsphere');
  v.object({
    allowed: [
      'server',
      'thumbprint',
      'username',
      'password',
      'datacenter',
      'datastore',
      'network',
      'template',
    ],
  });
  return {
    kind: 'vsphere',
    server: v.at('server').string({ nonBlank: true }),
    thumbprint: v.at('thumbprint').string({
      nonBlank: true,
      pattern: /^([0-9A-Fa-f]{2}:){19}[0-9A-Fa-f]{2}$/,
      hint: "the vCenter certificate's SHA-1 fingerprint, colon-separated (openssl x509 -noout -fingerprint -sha1)",
    }),
    username: v.at('username').string({ nonBlank: true }),
    password: secretSource(v.at('password'), baseDir, 'the vSphere password'),
    datacenter: v.at('datacenter').string({ nonBlank: true }),
    datastore: v.at('datastore').string({ nonBlank: true }),
    network: v.at('network').string({ nonBlank: true }),
    template: v.at('template').string({ nonBlank: true }),
  };
}

function parseProviders(w: Walk, infra: Infrastructure['kind']): ProviderVersions {
  w.given()?.object({
    allowed: ['core', 'bootstrapTalos', 'controlPlaneTalos', 'infrastructure', 'ipamInCluster'],
  });
  const v = (k: string, dflt: string) =>
    w.at(k).given()?.string({ nonBlank: true, pattern: VERSION, hint: 'a release tag, e.g. v1.14.0' }) ??
    dflt;
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

function machine(w: Walk, dflt: MachineShape): MachineShape {
  w.given()?.object({ allowed: ['cores', 'memoryMiB', 'diskGb'] });
  const memoryMiB = w.at('memoryMiB').given()?.int({ min: 2048, max: 4_194_304 }) ?? dflt.memoryMiB;
  // CAPMOX: memoryMiB must be a multiple of 8 (capi.md §7).
  if (memoryMiB % 8 !== 0)
    w.at('memoryMiB').invalid(
      `memoryMiB must be a multiple of 8; got ${memoryMiB}`,
      'round it to a multiple of 8',
    );
  return {
    cores: w.at('cores').given()?.int({ min: 2, max: 512 }) ?? dflt.cores,
    memoryMiB,
    diskGb: w.at('diskGb').given()?.int({ min: 10, max: 65_536 }) ?? dflt.diskGb,
  };
}

function parseCluster(c: Walk, infra: Infrastructure): ClusterShape {
  c.object({
    allowed: [
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
    ],
  });
  const name = c
    .at('name')
    .string({ nonBlank: true, pattern: DNS_NAME, hint: 'a lowercase DNS label, e.g. kmgt' });
  const controlPlanes = c.at('controlPlanes').given()?.int({ min: 1, max: 7 }) ?? 3;
  // The Cluster API controllers run on the nodes they upgrade: they need a quorum that survives
  // one node being replaced, and a node beside each of their HA replicas (mgmt.md §9, §10).
  if (controlPlanes < 3)
    c.at('controlPlanes').invalid(
      `controlPlanes must be at least 3: the management cluster upgrades itself, and with ${controlPlanes} a node being replaced takes etcd's quorum or the controllers' second replica with it; got ${controlPlanes}`,
      'use 3 (the default) or 5',
    );
  if (controlPlanes % 2 === 0)
    c.at('controlPlanes').invalid(
      `controlPlanes must be odd (etcd quorum); got ${controlPlanes}`,
      'use 3 (the default) or 5',
    );

  const e = c.at('endpoint');
  e.object({ allowed: ['vip', 'host', 'port'] });
  const port = e.at('port').given()?.int({ min: 1, max: 65_535 }) ?? 6443;
  const hasVip = !e.at('vip').absent;
  if (hasVip === !e.at('host').absent)
    e.invalid(
      'cluster.endpoint needs exactly one of vip or host',
      'vip: an unused address Talos shares between the control planes; host: a load balancer or DNS name in front of them',
    );
  const endpoint: Endpoint = hasVip
    ? {
        kind: 'vip',
        vip: e.at('vip').string({ nonBlank: true, pattern: IPV4, hint: 'an IPv4 address' }),
        port,
      }
    : { kind: 'host', host: e.at('host').string({ nonBlank: true }), port };

  const n = c.at('network');
  n.object({ allowed: ['dhcp', 'pool', 'dns'] });
  const dns = n
    .at('dns')
    .items({ min: 1, hint: 'list the DNS servers the nodes use' })
    .map((x) => x.string({ nonBlank: true, pattern: IPV4, hint: 'list the DNS servers the nodes use' }));
  const dhcp = n.at('dhcp').given()?.bool() ?? false;
  let addressing: Addressing;
  if (dhcp) {
    if (!n.at('pool').absent)
      n.at('pool').invalid('network.dhcp and network.pool exclude each other', 'keep one');
    // CAPMOX always assigns addresses from its in-cluster IPAM pool: ipv4Config is required (capi.md §7).
    if (infra.kind === 'proxmox')
      n.at('dhcp').invalid(
        'Proxmox (CAPMOX) machines take their addresses from an IP pool, not DHCP',
        'set network.pool',
      );
    addressing = { kind: 'dhcp' };
  } else {
    const pl = n.at('pool');
    pl.object({ allowed: ['addresses', 'prefix', 'gateway'] });
    const hint = 'addresses, ranges (10.0.0.100-10.0.0.120) or CIDRs';
    addressing = {
      kind: 'pool',
      addresses: pl
        .at('addresses')
        .items({ min: 1, hint })
        .map((x) => x.string({ nonBlank: true, pattern: IPV4_RANGE, hint })),
      prefix: pl.at('prefix').int({ min: 1, max: 32 }),
      gateway: pl.at('gateway').string({ nonBlank: true, pattern: IPV4, hint: 'an IPv4 address' }),
    };
  }
  if (endpoint.kind === 'vip' && addressing.kind === 'pool' && addressing.addresses.includes(endpoint.vip))
    e.at('vip').invalid(
      `the VIP ${endpoint.vip} is also in network.pool.addresses: a machine could be given it`,
      'take the VIP out of the pool',
    );
  const version = (k: string, dflt: string) =>
    c
      .at(k)
      .given()
      ?.string({ nonBlank: true, pattern: VERSION, hint: `e.g. ${dflt}` }) ?? dflt;
  const talosVersion = version('talosVersion', 'v1.13.7');
  const kubernetesVersion = version('kubernetesVersion', 'v1.36.2');
  const cidr = (k: string, dflt: string) =>
    c.at(k).given()?.string({ nonBlank: true, pattern: CIDR, hint: 'a CIDR' }) ?? dflt;
  return {
    name,
    namespace:
      c
        .at('namespace')
        .given()
        ?.string({ nonBlank: true, pattern: DNS_NAME, hint: 'a lowercase DNS label' }) ?? name,
    talosVersion,
    kubernetesVersion,
    controlPlanes,
    workers: c.at('workers').given()?.int({ min: 0, max: 100 }) ?? 0,
    endpoint,
    addressing,
    dns,
    podSubnet: cidr('podSubnet', '10.244.0.0/16'),
    serviceSubnet: cidr('serviceSubnet', '10.96.0.0/12'),
    controlPlane: machine(c.at('controlPlane'), { cores: 2, memoryMiB: 4096, diskGb: 20 }),
    worker: machine(c.at('worker'), { cores: 2, memoryMiB: 4096, diskGb: 20 }),
  };
}

/** The endpoint as host:port and as the URL the kubeconfig will carry. */
export function endpointHost(c: ClusterShape): string {
  return c.endpoint.kind === 'vip' ? c.endpoint.vip : c.endpoint.host;
}
