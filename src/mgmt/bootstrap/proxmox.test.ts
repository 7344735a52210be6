import { describe, expect, it } from 'vitest';
import { rejected } from '../../testing-errors.js';
import { parseMgmtConfig } from './config.js';
import { pveumCommands, QEMU_GUEST_AGENT, schematicId, templateCommands } from './proxmox.js';
import { checkTemplate, proxmoxApi } from './proxmox-api.js';
import { GOOD_TEMPLATE, startProxmox } from './testing-proxmox-server.js';

const CONFIG = `apiVersion: ferry.dev/v1alpha1
kind: ManagementCluster
infrastructure:
  proxmox: {url: 'https://pve:8006', tokenId: 'capi@pve!capi', tokenSecret: {env: S}, node: pve1, templateId: 9000, vlan: 20, storage: ceph}
cluster:
  name: kmgt
  endpoint: {vip: 10.20.0.10}
  network: {pool: {addresses: [10.20.0.100-10.20.0.120], prefix: 24, gateway: 10.20.0.1}, dns: [10.20.0.1]}
`;
const c = parseMgmtConfig(CONFIG, 'mgmt.yaml', '/');
const p = c.infrastructure.kind === 'proxmox' ? c.infrastructure : (undefined as never);

describe('the Proxmox side', () => {
  it('schematic IDs as the Image Factory computes them (mgmt.md §4, tested against the factory)', () => {
    expect(schematicId([QEMU_GUEST_AGENT])).toBe(
      'ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515',
    );
    expect(schematicId(['siderolabs/vmtoolsd-guest-agent'])).toBe(
      '903b2da78f99adef03cbbd4df6714563823f63218508800751560d3bc3557e40',
    );
  });

  it('pveum: least privilege — VM rights on the capi pool only, propagation only on /nodes, a token without privsep', () => {
    const cmds = pveumCommands(c, p);
    expect(cmds.filter((l) => l.includes('PVEVMAdmin'))).toEqual([
      'pveum acl modify /pool/capi --users capi@pve --roles PVEVMAdmin --propagate 0',
    ]);
    expect(cmds.filter((l) => l.includes('--propagate 1'))).toEqual([
      'pveum acl modify /nodes --users capi@pve --roles CapiSysAudit --propagate 1',
    ]);
    expect(cmds).toContain(
      'pveum acl modify /sdn/zones/localnetwork/vmbr0/20 --users capi@pve --roles PVESDNUser --propagate 0',
    );
    expect(cmds).toContain(
      'pveum acl modify /storage/ceph --users capi@pve --roles CapiDatastoreAllocateSpace --propagate 0',
    );
    expect(cmds.at(-1)).toBe("pveum user token add capi@pve capi --privsep 0 --comment 'ferry mgmt kmgt'");
    expect(cmds.join('\n')).not.toMatch(/Administrator|PVEAdmin\b|acl modify \/ .*PVE/);
  });

  it('the template: nocloud image of the qemu-guest-agent schematic, agent on, ide0 left free', () => {
    const t = templateCommands(c, p).join('\n');
    expect(t).toContain(
      'https://factory.talos.dev/image/ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515/v1.13.7/nocloud-amd64.raw.xz',
    );
    expect(t).toMatch(/qm create 9000 .*--agent enabled=1/);
    expect(t).toMatch(/--scsihw virtio-scsi-pci/);
    expect(t).not.toMatch(/ide0|cloudinit/);
  });

  it('checkTemplate names each misfit', () => {
    expect(checkTemplate(GOOD_TEMPLATE)).toEqual({ ok: true, problems: [], name: 'talos-v1.13.7' });
    const bad = checkTemplate({
      ...GOOD_TEMPLATE,
      template: 0,
      agent: '0',
      scsihw: 'virtio-scsi-single',
      ide0: 'local:iso/x.iso,media=cdrom',
      ide2: 'local-lvm:vm-9000-cloudinit,media=cdrom',
      balloon: 1024,
    });
    expect(bad.problems).toEqual([
      'it is not a template (qm template ID)',
      'the guest agent is off: CAPMOX waits for qemu-guest-agent (qm set ID --agent enabled=1)',
      'VirtIO SCSI single hangs Talos (talos#11173): use --scsihw virtio-scsi-pci',
      'ide0 is in use: CAPMOX puts its NoCloud ISO there (qm set ID --delete ide0)',
      "ide2 is a cloud-init drive: Talos gets its config from CAPMOX's ISO (qm set ID --delete ide2)",
      'memory ballooning is on: Talos wants fixed memory (qm set ID --balloon 0)',
    ]);
  });

  it('reads the template back with the token in the Authorization header; 401 and a missing VM are clear errors', async () => {
    const secret = 'c0ffee00-aaaa-4bbb-8ccc-proxmoxsecret1';
    const pve = await startProxmox({
      tls: false,
      authorization: `PVEAPIToken=capi@pve!capi=${secret}`,
      vms: { 'pve1/9000': GOOD_TEMPLATE },
    });
    try {
      const api = proxmoxApi({ url: pve.url, tokenId: 'capi@pve!capi', secret, insecure: false });
      expect(await api.vmConfig('pve1', 9000)).toEqual(GOOD_TEMPLATE);
      expect(pve.requests[0]?.url).toBe('/api2/json/nodes/pve1/qemu/9000/config');
      expect(pve.requests.every((r) => !r.url.includes(secret))).toBe(true);
      const missing = await rejected(api.vmConfig('pve1', 9001), 2);
      expect(missing.message).toMatch(/Proxmox has no VM 9001 on node pve1 \(HTTP 500/);
      const wrong = proxmoxApi({
        url: pve.url,
        tokenId: 'capi@pve!capi',
        secret: 'wrong-secret-123',
        insecure: false,
      });
      expect((await rejected(wrong.vmConfig('pve1', 9000), 2)).message).toMatch(
        /refused the token capi@pve!capi \(401\)/,
      );
    } finally {
      await pve.close();
    }
  });
});
