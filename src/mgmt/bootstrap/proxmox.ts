/**
 * The Proxmox side the field guide does by hand (mgmt.md §4): the API user, roles, pools, ACLs and
 * token with CAPMOX's least privilege, and the Talos template from an Image Factory schematic with
 * qemu-guest-agent (nocloud image), as commands an operator runs on a Proxmox node. The schematic
 * ID is computed here exactly as the factory computes it (sha256 of the canonical YAML), so the
 * operator can compare it with what the factory answers.
 */
import { createHash } from 'node:crypto';
import type { MgmtConfig, ProxmoxInfra } from './config.js';
import { CAPI_POOL, TEMPLATE_POOL } from './manifests.js';
import { q } from './stages.js';

export const QEMU_GUEST_AGENT = 'siderolabs/qemu-guest-agent';
export const FACTORY = 'https://factory.talos.dev';

/** The factory's canonical form of a schematic with official extensions (yaml.v3, 4-space indent). */
export function schematicYaml(extensions: readonly string[]): string {
  return `customization:\n    systemExtensions:\n        officialExtensions:\n${extensions.map((e) => `            - ${e}\n`).join('')}`;
}

export function schematicId(extensions: readonly string[]): string {
  return createHash('sha256').update(schematicYaml(extensions)).digest('hex');
}

const ROLE_AUDIT = 'CapiSysAudit';
const ROLE_SPACE = 'CapiDatastoreAllocateSpace';

function userOf(tokenId: string): { user: string; token: string } {
  const [user, token] = tokenId.split('!') as [string, string];
  return { user, token };
}

/** `pveum …` for the CAPMOX user: custom one-privilege roles, two pools, ACLs scoped to them. */
export function pveumCommands(c: MgmtConfig, p: ProxmoxInfra): string[] {
  const { user, token } = userOf(p.tokenId);
  const sdn = `/sdn/zones/localnetwork/${p.bridge}${p.vlan !== undefined ? `/${p.vlan}` : ''}`;
  const acl = (path: string, role: string, propagate: 0 | 1) =>
    `pveum acl modify ${path} --users ${user} --roles ${role} --propagate ${propagate}`;
  return [
    `pveum role add ${ROLE_AUDIT} --privs Sys.Audit`,
    `pveum role add ${ROLE_SPACE} --privs Datastore.AllocateSpace`,
    `pveum pool add ${CAPI_POOL} --comment ${q(`Cluster API machines of ${c.cluster.name}`)}`,
    `pveum pool add ${TEMPLATE_POOL} --comment 'Talos templates'`,
    `pveum user add ${user} --comment ${q(`Cluster API (CAPMOX) for ${c.cluster.name}`)}`,
    acl('/', ROLE_AUDIT, 0),
    acl('/nodes', ROLE_AUDIT, 1),
    acl(`/pool/${CAPI_POOL}`, 'PVEVMAdmin', 0),
    acl(`/pool/${TEMPLATE_POOL}`, 'PVETemplateUser', 0),
    acl(sdn, 'PVESDNUser', 0),
    acl(`/storage/${p.isoStorage}`, 'PVEDatastoreAdmin', 0),
    ...(p.storage !== undefined && p.storage !== p.isoStorage
      ? [acl(`/storage/${p.storage}`, ROLE_SPACE, 0)]
      : []),
    // privsep 0: the token has the user's rights; the value is printed once, store it 0600.
    `pveum user token add ${user} ${token} --privsep 0 --comment ${q(`ferry mgmt ${c.cluster.name}`)}`,
  ];
}

/** The Talos template: schematic → nocloud disk → VM as Talos on Proxmox wants it → template. */
export function templateCommands(c: MgmtConfig, p: ProxmoxInfra): string[] {
  const id = schematicId([QEMU_GUEST_AGENT]);
  const v = c.cluster.talosVersion;
  const raw = `/var/tmp/talos-${v}-nocloud-amd64.raw`;
  const store = p.storage ?? 'local-lvm';
  return [
    `printf '%s' ${q(schematicYaml([QEMU_GUEST_AGENT]))} | curl -fsS -X POST --data-binary @- ${FACTORY}/schematics`,
    `# the answer's "id" must be ${id}`,
    `curl -fL -o ${raw}.xz ${FACTORY}/image/${id}/${v}/nocloud-amd64.raw.xz`,
    `xz -d ${raw}.xz`,
    // CPU host, VirtIO SCSI (not "single": talos#11173), no ballooning, agent on; ide0 stays free for CAPMOX's ISO.
    `qm create ${p.templateId} --name talos-${v} --ostype l26 --cpu host --cores 2 --memory 4096 --balloon 0 --net0 virtio,bridge=${p.bridge} --scsihw virtio-scsi-pci --agent enabled=1 --pool ${TEMPLATE_POOL}`,
    `qm set ${p.templateId} --scsi0 ${store}:0,import-from=${raw}`,
    `qm set ${p.templateId} --boot order=scsi0`,
    `qm template ${p.templateId}`,
  ];
}
