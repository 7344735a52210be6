import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rejected, thrown } from '../../testing-errors.js';
import { loadMgmtConfig, parseMgmtConfig } from './config.js';

const REPO = resolve(import.meta.dirname, '..', '..', '..');
const MINIMAL = readFileSync(join(REPO, 'src/mgmt/tools/fixtures/minimal.yaml'), 'utf8');
const parse = (text: string) => parseMgmtConfig(text, 'mgmt.yaml', '/cfg');

describe('mgmt.yaml', () => {
  it('the documented example parses, with its pins and shape', async () => {
    const c = await loadMgmtConfig(join(REPO, 'examples/mgmt/mgmt.yaml'), 'examples/mgmt/mgmt.yaml');
    expect(c.infrastructure).toMatchObject({
      kind: 'proxmox',
      node: 'pve1',
      templateId: 9000,
      insecure: false,
    });
    expect(c.providers).toEqual({
      core: 'v1.14.0',
      bootstrapTalos: 'v0.6.12',
      controlPlaneTalos: 'v0.5.13',
      infrastructure: 'v0.9.0',
      ipamInCluster: 'v1.1.0',
    });
    expect(c.cluster.endpoint).toEqual({ kind: 'vip', vip: '10.20.0.10', port: 6443 });
  });

  it('fills the defaults: 3 control planes, kind name, Cilium, talos-ccm, the secret file resolved', () => {
    const c = parse(MINIMAL);
    expect(c.cluster.controlPlanes).toBe(3);
    expect(c.cluster.namespace).toBe('kmgt');
    expect(c.kind.name).toBe('ferry-bootstrap');
    expect(c.cni).toMatchObject({ kind: 'cilium', version: '1.19.6' });
    expect(c.ccm).toMatchObject({ kind: 'talos-ccm' });
    expect(c.operator.repo).toBe('https://kubernetes-sigs.github.io/cluster-api-operator');
    expect(c.infrastructure.kind === 'proxmox' && c.infrastructure.tokenSecret).toEqual({
      kind: 'file',
      path: '/cfg/proxmox-token',
      shown: './proxmox-token',
    });
  });

  it('refuses an inline token secret, naming file, line and field', () => {
    const e = thrown(() => parse(MINIMAL.replace('{file: ./proxmox-token}', 's3cr3t-value')), 2);
    expect(e.message).toMatch(/must not be written into the file/);
    expect(e.location).toMatchObject({
      file: 'mgmt.yaml',
      line: 7,
      field: 'infrastructure.proxmox.tokenSecret',
    });
    expect(e.remediation).toMatch(/\{file: PATH\}.*\{env: NAME\}/);
  });

  it('an unknown field is an error at its line, not a silent default', () => {
    const e = thrown(() => parse(MINIMAL.replace('  name: kmgt', '  name: kmgt\n  controlPlane: 3')), 2);
    expect(e.message).toMatch(/controlPlane must be a mapping/);
    const typo = thrown(() => parse(MINIMAL.replace('    node: pve1', '    nodee: pve1')), 2);
    expect(typo.message).toBe('unknown field "nodee"');
    expect(typo.location).toMatchObject({ line: 8, field: 'infrastructure.proxmox.nodee' });
  });

  it('checks values against what the providers accept', () => {
    const cases: [string, string, RegExp][] = [
      ['tokenId: capi@pve!capi', 'tokenId: capi', /tokenId: "capi" is not valid/],
      ['url: https://127.0.0.1:8006', 'url: http://127.0.0.1:8006', /url: .* is not valid/],
      [
        'addresses: [10.20.0.100-10.20.0.120]',
        'addresses: [10.20.0.10]',
        /VIP 10.20.0.10 is also in network.pool/,
      ],
      [
        'pool: {addresses: [10.20.0.100-10.20.0.120], prefix: 24, gateway: 10.20.0.1}',
        'dhcp: true',
        /Proxmox \(CAPMOX\) machines take their addresses from an IP pool/,
      ],
      [
        'endpoint: {vip: 10.20.0.10}',
        'endpoint: {vip: 10.20.0.10, host: lb.example}',
        /exactly one of vip or host/,
      ],
      ['kind: ManagementCluster', 'kind: Cluster', /kind must be ManagementCluster/],
    ];
    for (const [from, to, msg] of cases) {
      const text = MINIMAL.replace(from, to);
      expect(text).not.toBe(MINIMAL);
      expect(thrown(() => parse(text), 2).message).toMatch(msg);
    }
  });

  it('refuses fewer than 3 control planes or an even number, with the reason and the line; takes 3, 5 and 7', () => {
    const at = (n: number) => MINIMAL.replace('name: kmgt\n', `name: kmgt\n  controlPlanes: ${n}\n`);
    for (const n of [1, 2]) {
      const e = thrown(() => parse(at(n)), 2);
      expect(e.message).toMatch(/controlPlanes must be at least 3: the management cluster upgrades itself/);
      expect(e.location).toMatchObject({ file: 'mgmt.yaml', field: 'cluster.controlPlanes' });
      expect(e.remediation).toBe('use 3 (the default) or 5');
    }
    for (const n of [4, 6])
      expect(thrown(() => parse(at(n)), 2).message).toMatch(/must be odd \(etcd quorum\)/);
    expect(thrown(() => parse(at(9)), 2).message).toMatch(/controlPlanes must be/);
    for (const n of [3, 5, 7]) expect(parse(at(n)).cluster.controlPlanes).toBe(n);
  });

  it('an environment variable as the secret source; both or neither is an error', () => {
    const c = parse(MINIMAL.replace('{file: ./proxmox-token}', '{env: PROXMOX_TOKEN_SECRET}'));
    expect(c.infrastructure.kind === 'proxmox' && c.infrastructure.tokenSecret).toEqual({
      kind: 'env',
      name: 'PROXMOX_TOKEN_SECRET',
    });
    expect(
      thrown(() => parse(MINIMAL.replace('{file: ./proxmox-token}', '{file: a, env: B}')), 2).message,
    ).toMatch(/exactly one of file or env/);
  });

  it('a missing config file is bad input naming --config', async () => {
    const e = await rejected(loadMgmtConfig('/nonexistent/mgmt.yaml', 'mgmt.yaml'), 2);
    expect(e.message).toMatch(/mgmt.yaml/);
  });
});
