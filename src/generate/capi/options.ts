/**
 * Operator input for `--provisioner capi --infra proxmox`: what ferry cannot read from the cluster
 * (where the Proxmox VMs come from, their network) as flags; VM sizes default to the sizes of the
 * kubeadm nodes they replace (sizes.ts). The CLI wires CAPI_FLAG_OPTIONS and capiOptionsFromFlags.
 */
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

export interface CapiOptions {
  /** Namespace of the Cluster API objects in the management cluster; default "default". */
  namespace?: string;
  proxmox?: ProxmoxOptions;
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
} as const;

export const CAPI_FLAGS_USAGE = `Cluster API flags (--provisioner capi --infra proxmox):
  --capi-namespace NS              namespace of the Cluster API objects (default ${CAPI_DEFAULT_NAMESPACE})
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
  const size = (role: 'cp' | 'worker'): VmSize => {
    const s: VmSize = {};
    const cores = int(`proxmox-${role}-cores`, values[`proxmox-${role}-cores`]);
    const mem = int(`proxmox-${role}-memory-mib`, values[`proxmox-${role}-memory-mib`]);
    const disk = int(`proxmox-${role}-disk-gb`, values[`proxmox-${role}-disk-gb`]);
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
  const out: CapiOptions = { proxmox: p };
  const ns = str(values['capi-namespace']);
  if (ns !== undefined) out.namespace = ns;
  return out;
}
