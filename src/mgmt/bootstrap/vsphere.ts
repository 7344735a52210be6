/**
 * The vSphere side an operator prepares once, as printed govc commands: a least-privilege role for
 * CAPV's user and its permissions on the objects of mgmt.yaml, and the Talos template from an
 * Image Factory OVA with the vmtoolsd guest agent (CAPV learns the VM's address from VMware Tools:
 * mgmt.md §5). govc reads GOVC_USERNAME/GOVC_PASSWORD from the environment, so no password is printed
 * or typed on a command line.
 */
import type { MgmtConfig, VsphereInfra } from './config.js';
import { FACTORY, schematicId, schematicYaml } from './proxmox.js';
import { q } from './stages.js';

export const VMTOOLSD_GUEST_AGENT = 'siderolabs/vmtoolsd-guest-agent';
export const CAPV_ROLE = 'ferry-capv';
export const KNOWN_HOSTS = '/var/tmp/ferry-govc-known_hosts';

/**
 * What CAPV does with a full clone: clone the template onto the datastore and network, reconfigure
 * CPU, memory, disk size and extra VMX keys, power it on and off, delete it, keep its session.
 * (mgmt.md lists no privileges: this set follows those operations; a linked clone would also need
 * VirtualMachine.State.CreateSnapshot, ferry clones fully.)
 */
export const CAPV_PRIVILEGES = [
  'Datastore.AllocateSpace',
  'Datastore.Browse',
  'Datastore.FileManagement',
  'Network.Assign',
  'Resource.AssignVMToPool',
  'Sessions.ValidateSession',
  'VirtualMachine.Config.AddExistingDisk',
  'VirtualMachine.Config.AddNewDisk',
  'VirtualMachine.Config.AddRemoveDevice',
  'VirtualMachine.Config.AdvancedConfig',
  'VirtualMachine.Config.CPUCount',
  'VirtualMachine.Config.DiskExtend',
  'VirtualMachine.Config.EditDevice',
  'VirtualMachine.Config.Memory',
  'VirtualMachine.Config.Settings',
  'VirtualMachine.Interact.PowerOff',
  'VirtualMachine.Interact.PowerOn',
  'VirtualMachine.Inventory.CreateFromExisting',
  'VirtualMachine.Inventory.Delete',
  'VirtualMachine.Provisioning.Clone',
  'VirtualMachine.Provisioning.DeployTemplate',
] as const;

/** The govc environment: the server, and its certificate pinned to the thumbprint of mgmt.yaml. */
export function govcEnvCommands(v: VsphereInfra): string[] {
  return [
    `printf '%s %s\\n' ${q(v.server)} ${q(v.thumbprint)} > ${KNOWN_HOSTS}`,
    `export GOVC_URL=${q(`https://${v.server}/sdk`)} GOVC_DATACENTER=${q(v.datacenter)} GOVC_TLS_KNOWN_HOSTS=${KNOWN_HOSTS}`,
  ];
}

/** The role with CAPV's privileges and where it holds: the datastore, the network, VMs and hosts of the datacenter. */
export function govcRoleCommands(v: VsphereInfra): string[] {
  const dc = `/${v.datacenter}`;
  const perm = (role: string, path: string, propagate: boolean) =>
    `govc permissions.set -principal ${q(v.username)} -role ${role} -propagate=${propagate} ${q(path)}`;
  return [
    `# CAPV's user ${v.username} must exist first (vCenter, Single Sign-On users): govc sso.user.create would take its password on the command line`,
    `govc role.create ${CAPV_ROLE} ${CAPV_PRIVILEGES.join(' ')}`,
    // Read-only over the datacenter: CAPV looks objects up by name; it changes only what the role allows.
    perm('ReadOnly', dc, true),
    perm(CAPV_ROLE, `${dc}/datastore/${v.datastore}`, false),
    perm(CAPV_ROLE, `${dc}/network/${v.network}`, false),
    perm(CAPV_ROLE, `${dc}/vm`, true),
    perm(CAPV_ROLE, `${dc}/host`, true),
  ];
}

/** The Talos template: schematic with vmtoolsd → the factory's vmware OVA → imported → template. */
export function govcTemplateCommands(c: MgmtConfig, v: VsphereInfra): string[] {
  const id = schematicId([VMTOOLSD_GUEST_AGENT]);
  const ver = c.cluster.talosVersion;
  const ova = `/var/tmp/talos-${ver}-vmware-amd64.ova`;
  return [
    `printf '%s' ${q(schematicYaml([VMTOOLSD_GUEST_AGENT]))} | curl -fsS -X POST --data-binary @- ${FACTORY}/schematics`,
    `# the answer's "id" must be ${id}`,
    `curl -fL -o ${ova} ${FACTORY}/image/${id}/${ver}/vmware-amd64.ova`,
    `govc import.ova ${q(`-ds=${v.datastore}`)} ${q(`-name=${v.template}`)} ${ova}`,
    `govc vm.markastemplate ${q(v.template)}`,
  ];
}
