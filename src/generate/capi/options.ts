/**
 * Operator input for `--provisioner capi --infra proxmox|vsphere`: what ferry cannot read from the
 * cluster (where the VMs come from, their network, the Talos node settings the field reports
 * needed) as flags; VM sizes default to the sizes of the kubeadm nodes they replace (sizes.ts).
 * The CLI wires CAPI_FLAG_OPTIONS and capiOptionsFromFlags.
 */
import { isIP } from 'node:net';
import { usageError } from '../../errors.js';

export interface VmSize {
  sockets?: number;
  cores?: number;
  memoryMiB?: number;
  diskGb?: number;
}

export interface ProxmoxOptions {
  sourceNode?: string;
  templateId?: number;
  bridge?: string;
  vlan?: number;
  /** Addresses CAPMOX may give VMs: "10.20.0.100-10.20.0.120", "10.20.0.128/28" or single IPs. */
  ipv4Addresses?: string[];
  ipv4Prefix?: number;
  ipv4Gateway?: string;
  dnsServers?: string[];
  allowedNodes?: string[];
  /** Secret with url/token/secret for the Proxmox API (CAPMOX credentialsRef). */
  credentialsSecret?: string;
  bootDisk?: string;
  storage?: string;
  controlPlane?: VmSize;
  worker?: VmSize;
}

export interface VsphereOptions {
  /** vCenter address (VSphereCluster.spec.server). */
  server?: string;
  /** Colon-separated SHA-1 of the vCenter certificate. */
  thumbprint?: string;
  /** Secret in capv-system with username/password, referenced by the VSphereClusterIdentity. */
  credentialsSecret?: string;
  datacenter?: string;
  datastore?: string;
  folder?: string;
  resourcePool?: string;
  /** The VM template (Talos vmware OVA with vmtoolsd) to clone. */
  template?: string;
  /** The port group of the VMs' NIC. */
  network?: string;
  /** Static addresses (an InClusterIPPool); absent: DHCP. */
  ipv4Addresses?: string[];
  ipv4Prefix?: number;
  ipv4Gateway?: string;
  dnsServers?: string[];
  controlPlane?: VmSize;
  worker?: VmSize;
}

/** Talos settings of the machines Cluster API creates (capi.md §8 field notes, mgmt.md §6). */
export interface TalosNodeOptions {
  /** Install disk, e.g. /dev/sda. */
  installDisk?: string;
  /** Interface name the VIP and DHCP settings attach to, e.g. eth0. */
  link?: string;
  /** DHCP on `link` (otherwise the platform's network metadata configures it). */
  dhcp?: boolean;
  /** Shared control-plane address Talos announces (Layer2VIPConfig) on `link`. */
  vip?: string;
}

export interface CapiOptions {
  /** Namespace of the Cluster API objects in the management cluster; default "default". */
  namespace?: string;
  talos?: TalosNodeOptions;
  proxmox?: ProxmoxOptions;
  vsphere?: VsphereOptions;
}

export const CAPI_DEFAULT_NAMESPACE = 'default';

export const CAPI_FLAG_OPTIONS = {
  'capi-namespace': { type: 'string' },
  'proxmox-source-node': { type: 'string' },
  'proxmox-template-id': { type: 'string' },
  'proxmox-bridge': { type: 'string' },
  'proxmox-vlan': { type: 'string' },
  'proxmox-ipv4-addresses': { type: 'string' },
  'proxmox-ipv4-prefix': { type: 'string' },
  'proxmox-ipv4-gateway': { type: 'string' },
  'proxmox-dns-servers': { type: 'string' },
  'proxmox-allowed-nodes': { type: 'string' },
  'proxmox-credentials-secret': { type: 'string' },
  'proxmox-boot-disk': { type: 'string' },
  'proxmox-storage': { type: 'string' },
  'proxmox-cp-cores': { type: 'string' },
  'proxmox-cp-memory-mib': { type: 'string' },
  'proxmox-cp-disk-gb': { type: 'string' },
  'proxmox-worker-cores': { type: 'string' },
  'proxmox-worker-memory-mib': { type: 'string' },
  'proxmox-worker-disk-gb': { type: 'string' },
  'capi-install-disk': { type: 'string' },
  'capi-link': { type: 'string' },
  'capi-dhcp': { type: 'boolean' },
  'capi-vip': { type: 'string' },
  'vsphere-server': { type: 'string' },
  'vsphere-thumbprint': { type: 'string' },
  'vsphere-credentials-secret': { type: 'string' },
  'vsphere-datacenter': { type: 'string' },
  'vsphere-datastore': { type: 'string' },
  'vsphere-folder': { type: 'string' },
  'vsphere-resource-pool': { type: 'string' },
  'vsphere-template': { type: 'string' },
  'vsphere-network': { type: 'string' },
  'vsphere-ipv4-addresses': { type: 'string' },
  'vsphere-ipv4-prefix': { type: 'string' },
  'vsphere-ipv4-gateway': { type: 'string' },
  'vsphere-dns-servers': { type: 'string' },
  'vsphere-cp-cores': { type: 'string' },
  'vsphere-cp-memory-mib': { type: 'string' },
  'vsphere-cp-disk-gb': { type: 'string' },
  'vsphere-worker-cores': { type: 'string' },
  'vsphere-worker-memory-mib': { type: 'string' },
  'vsphere-worker-disk-gb': { type: 'string' },
} as const;

export const CAPI_FLAGS_USAGE = `Cluster API flags (--provisioner capi --infra proxmox|vsphere):
  --capi-namespace NS              namespace of the Cluster API objects (default ${CAPI_DEFAULT_NAMESPACE})
  --capi-install-disk DEV          Talos install disk, e.g. /dev/sda
  --capi-link NAME                 interface the settings below attach to, e.g. eth0
  --capi-dhcp                      DHCP on that interface (default: the platform's network metadata)
  --capi-vip IP                    control-plane VIP Talos announces on that interface
  --proxmox-source-node NODE       Proxmox node holding the Talos VM template
  --proxmox-template-id ID         VM template to clone (Talos nocloud image)
  --proxmox-bridge BRIDGE          bridge of net0, e.g. vmbr0 [--proxmox-vlan N]
  --proxmox-ipv4-addresses LIST    addresses for the VMs: ranges a-b, CIDRs or IPs, comma-separated
  --proxmox-ipv4-prefix N          prefix length of that network
  --proxmox-ipv4-gateway IP        default gateway
  --proxmox-dns-servers LIST       DNS servers, comma-separated
  --proxmox-allowed-nodes LIST     Proxmox nodes VMs may run on (default: any)
  --proxmox-credentials-secret S   Secret with url/token/secret (default: CAPMOX's own credentials)
  --proxmox-boot-disk D            boot disk device (default scsi0) [--proxmox-storage S]
  --proxmox-{cp,worker}-{cores,memory-mib,disk-gb} N
                                   VM size (default: the size of the kubeadm nodes replaced)
  --vsphere-server HOST            vCenter [--vsphere-thumbprint SHA1]
  --vsphere-credentials-secret S   Secret in capv-system with username/password (VSphereClusterIdentity)
  --vsphere-datacenter DC --vsphere-datastore DS --vsphere-folder F --vsphere-resource-pool RP
  --vsphere-template T             VM template to clone (Talos vmware OVA with vmtoolsd)
  --vsphere-network PG             port group of the VMs' NIC
  --vsphere-ipv4-addresses LIST    static addresses (an in-cluster IPAM pool; default DHCP), with
  --vsphere-ipv4-prefix N --vsphere-ipv4-gateway IP --vsphere-dns-servers LIST
  --vsphere-{cp,worker}-{cores,memory-mib,disk-gb} N
                                   VM size (default: the size of the kubeadm nodes replaced)`;

function int(flag: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (typeof v !== 'string' || !Number.isInteger(n) || n <= 0)
    throw usageError(`--${flag} must be a positive integer; got "${String(v)}"`);
  return n;
}

function list(v: unknown): string[] | undefined {
  if (typeof v !== 'string') return undefined;
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return items.length > 0 ? items : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/** CapiOptions from parsed flag values (node:util parseArgs `values`); bad numbers are usage errors. */
export function capiOptionsFromFlags(values: Record<string, unknown>): CapiOptions {
  const size = (role: 'cp' | 'worker', infra: 'proxmox' | 'vsphere' = 'proxmox'): VmSize => {
    const s: VmSize = {};
    const cores = int(`${infra}-${role}-cores`, values[`${infra}-${role}-cores`]);
    const mem = int(`${infra}-${role}-memory-mib`, values[`${infra}-${role}-memory-mib`]);
    const disk = int(`${infra}-${role}-disk-gb`, values[`${infra}-${role}-disk-gb`]);
    if (cores !== undefined) s.cores = cores;
    if (mem !== undefined) s.memoryMiB = mem;
    if (disk !== undefined) s.diskGb = disk;
    return s;
  };
  const p: ProxmoxOptions = { controlPlane: size('cp'), worker: size('worker') };
  const set = <K extends keyof ProxmoxOptions>(k: K, v: ProxmoxOptions[K] | undefined) => {
    if (v !== undefined) p[k] = v;
  };
  set('sourceNode', str(values['proxmox-source-node']));
  set('templateId', int('proxmox-template-id', values['proxmox-template-id']));
  set('bridge', str(values['proxmox-bridge']));
  set('vlan', int('proxmox-vlan', values['proxmox-vlan']));
  set('ipv4Addresses', list(values['proxmox-ipv4-addresses']));
  set('ipv4Prefix', int('proxmox-ipv4-prefix', values['proxmox-ipv4-prefix']));
  set('ipv4Gateway', str(values['proxmox-ipv4-gateway']));
  set('dnsServers', list(values['proxmox-dns-servers']));
  set('allowedNodes', list(values['proxmox-allowed-nodes']));
  set('credentialsSecret', str(values['proxmox-credentials-secret']));
  set('bootDisk', str(values['proxmox-boot-disk']));
  set('storage', str(values['proxmox-storage']));
  const out: CapiOptions = { proxmox: p, talos: talosNodeOptions(values), vsphere: vsphereOptions(values) };
  const ns = str(values['capi-namespace']);
  if (ns !== undefined) out.namespace = ns;
  return out;

  function vsphereOptions(v: Record<string, unknown>): VsphereOptions {
    const o: VsphereOptions = { controlPlane: size('cp', 'vsphere'), worker: size('worker', 'vsphere') };
    const put = <K extends keyof VsphereOptions>(k: K, x: VsphereOptions[K] | undefined) => {
      if (x !== undefined) o[k] = x;
    };
    put('server', str(v['vsphere-server']));
    put('thumbprint', str(v['vsphere-thumbprint']));
    put('credentialsSecret', str(v['vsphere-credentials-secret']));
    put('datacenter', str(v['vsphere-datacenter']));
    put('datastore', str(v['vsphere-datastore']));
    put('folder', str(v['vsphere-folder']));
    put('resourcePool', str(v['vsphere-resource-pool']));
    put('template', str(v['vsphere-template']));
    put('network', str(v['vsphere-network']));
    put('ipv4Addresses', list(v['vsphere-ipv4-addresses']));
    put('ipv4Prefix', int('vsphere-ipv4-prefix', v['vsphere-ipv4-prefix']));
    put('ipv4Gateway', str(v['vsphere-ipv4-gateway']));
    put('dnsServers', list(v['vsphere-dns-servers']));
    return o;
  }
}

function talosNodeOptions(v: Record<string, unknown>): TalosNodeOptions {
  const o: TalosNodeOptions = {};
  const disk = str(v['capi-install-disk']);
  if (disk !== undefined) {
    if (!disk.startsWith('/dev/'))
      throw usageError(`--capi-install-disk must be a device path like /dev/sda; got "${disk}"`);
    o.installDisk = disk;
  }
  const link = str(v['capi-link']);
  if (link !== undefined) o.link = link;
  if (v['capi-dhcp'] === true) o.dhcp = true;
  const vip = str(v['capi-vip']);
  if (vip !== undefined) {
    if (isIP(vip) === 0) throw usageError(`--capi-vip must be an IP address; got "${vip}"`);
    o.vip = vip;
  }
  if ((o.dhcp || o.vip) && !o.link)
    throw usageError('--capi-dhcp and --capi-vip need --capi-link NAME: the interface they apply to');
  return o;
}
