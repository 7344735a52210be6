import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { memoryIo } from '../../cli/io.js';
import { runMgmtBootstrap } from '../../cli/mgmt-bootstrap.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { rejected } from '../../testing-errors.js';
import { Standins } from '../tools/testing-standins.js';
import { loadMgmtConfig } from './config.js';
import { managementManifests } from './manifests.js';
import { schematicId } from './proxmox.js';
import { readSecret } from './secrets.js';
import { happyRules, VSPHERE_PASSWORD, writeVsphereConfig } from './testing-scenario.js';
import { CAPV_PRIVILEGES, VMTOOLSD_GUEST_AGENT } from './vsphere.js';

// vSphere through the same stages as Proxmox: the production adapter runs stand-in tools on PATH.
const REPO = resolve(import.meta.dirname, '..', '..', '..');
let dir: string;
let tools: Standins;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ferry-mgmt-vsphere-'));
  tools = new Standins(dir);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const state = () => join(dir, '.ferry-mgmt-kmgt');
const io = (env: Record<string, string>) => Object.assign(memoryIo({ cwd: dir }), { env: tools.env(env) });
const FLAGS = ['--poll-interval', '0.01'];

describe('ferry mgmt bootstrap on vSphere', () => {
  it('--dry-run: govc role and template, clusterctl init with CAPV, the identity Secret from a file or process substitution; no password', async () => {
    const out = io({ VSPHERE_PW: VSPHERE_PASSWORD });
    const code = await runMgmtBootstrap(['--config', writeVsphereConfig(dir), '--dry-run'], out);
    expect(code).toBe(0);
    expect(tools.calls()).toHaveLength(0);
    expect(existsSync(state())).toBe(false);
    const text = out.out;
    expect(text).not.toContain(VSPHERE_PASSWORD);
    expect(text).not.toMatch(/GOVC_PASSWORD=/);
    expect(text).toContain(`govc role.create ferry-capv ${CAPV_PRIVILEGES.join(' ')}`);
    expect(text).toContain(
      "govc permissions.set -principal capv@vsphere.local -role ferry-capv -propagate=false '/dc1/network/VM Network'",
    );
    const id = schematicId([VMTOOLSD_GUEST_AGENT]);
    // The Image Factory ID of the vmtoolsd schematic, as the knowledge note records it.
    expect(id.startsWith('903b2da7')).toBe(true);
    expect(text).toContain(`https://factory.talos.dev/image/${id}/v1.13.7/vmware-amd64.ova`);
    expect(text).toContain(
      'govc import.ova -ds=ds1 -name=talos-v1.13.7 /var/tmp/talos-v1.13.7-vmware-amd64.ova',
    );
    expect(text).toContain('govc vm.markastemplate talos-v1.13.7');
    expect(text).toContain('--infrastructure vsphere:v1.16.1 --ipam in-cluster:v1.1.0');
    // The password comes from the variable at the operator's shell, never from the printed line.
    expect(text).toContain(
      `--namespace capv-system create secret generic kmgt-vsphere-credentials --from-literal=username=capv@vsphere.local --from-file=password=<(printf '%s' "$VSPHERE_PW")`,
    );
    const ccYaml = text.split(`cat > ${join(state(), 'clusterctl.yaml')} <<'EOF'\n`)[1]?.split('\nEOF')[0];
    const cc = parse(ccYaml ?? '') as Record<string, unknown>;
    expect(cc).toMatchObject({
      VSPHERE_SERVER: 'vc.example.test',
      VSPHERE_TLS_THUMBPRINT: 'AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01',
      VSPHERE_USERNAME: '',
      VSPHERE_PASSWORD: '',
    });
    expect(text).toContain('VSphereClusterIdentity, VSphereCluster, InClusterIPPool, VSphereMachineTemplate');
  });

  it('examples/mgmt/mgmt-vsphere.yaml: --dry-run accepts it and prints the whole plan', async () => {
    const out = io({});
    const example = join(REPO, 'examples/mgmt/mgmt-vsphere.yaml');
    expect(await runMgmtBootstrap(['--config', example, '--state-dir', state(), '--dry-run'], out)).toBe(0);
    expect(out.out).toContain('# [16/16] delete-kind');
    expect(out.out).toContain(`--from-file=password=<(printf '%s' "$CAPV_VSPHERE_PASSWORD")`);
    expect(out.out).toContain('govc import.ova -ds=datastore1 -name=talos-v1.13.7 ');
  });

  it('--dry-run with the password in a file names the file', async () => {
    const cfg = writeVsphereConfig(dir, (t) => t.replace('{env: VSPHERE_PW}', '{file: ./vsphere-password}'));
    const out = io({});
    expect(await runMgmtBootstrap(['--config', cfg, '--dry-run'], out)).toBe(0);
    expect(out.out).toContain(`--from-file=password=${join(dir, 'vsphere-password')} `);
  });

  it('runs through the stages: identity Secret in capv-system on stdin only, CAPV manifests applied, the operator keeps CAPV in capv-system', async () => {
    tools.script(happyRules(['vsphere', 'v1.16.1']));
    const out = io({ VSPHERE_PW: VSPHERE_PASSWORD });
    const code = await runMgmtBootstrap(['--config', writeVsphereConfig(dir), ...FLAGS], out);
    expect(code).toBe(0);
    const init = tools.called('clusterctl', /^init /)[0];
    expect(init?.args.join(' ')).toContain('--infrastructure vsphere:v1.16.1');
    const cc = parse(readFileSync(join(state(), 'clusterctl.yaml'), 'utf8')) as Record<string, unknown>;
    expect(cc['VSPHERE_PASSWORD']).toBe('');

    const withPassword = tools.calls().filter((c) => c.stdin.includes(VSPHERE_PASSWORD));
    expect(withPassword).toHaveLength(1);
    const secret = JSON.parse(withPassword[0]?.stdin ?? '{}');
    expect(withPassword[0]?.args).toEqual(expect.arrayContaining(['apply', '-f', '-']));
    expect(secret).toMatchObject({
      kind: 'Secret',
      metadata: {
        name: 'kmgt-vsphere-credentials',
        namespace: 'capv-system',
        labels: { 'clusterctl.cluster.x-k8s.io/move': '' },
      },
      stringData: { username: 'capv@vsphere.local', password: VSPHERE_PASSWORD },
    });
    for (const c of tools.calls()) {
      expect(c.args.join(' ')).not.toContain(VSPHERE_PASSWORD);
      expect(Object.values(c.env).join('\n')).not.toContain(VSPHERE_PASSWORD);
    }
    expect(out.out + out.err).not.toContain(VSPHERE_PASSWORD);

    const applied = parseAllDocuments(readFileSync(join(state(), 'kmgt.capi.yaml'), 'utf8')).map(
      (d) => d.toJS() as { kind: string; spec: Record<string, unknown> },
    );
    const identity = applied.find((o) => o.kind === 'VSphereClusterIdentity');
    expect(identity?.spec).toEqual({
      secretName: 'kmgt-vsphere-credentials',
      allowedNamespaces: { selector: { matchLabels: { 'kubernetes.io/metadata.name': 'kmgt' } } },
    });
    expect(applied.find((o) => o.kind === 'VSphereCluster')?.spec['identityRef']).toEqual({
      kind: 'VSphereClusterIdentity',
      name: 'kmgt',
    });
    expect(tools.called('kubectl', / apply -f \S+kmgt\.capi\.yaml$/)).toHaveLength(1);
    const values = parse(tools.called('helm', /^upgrade --install capi-operator /)[0]?.stdin ?? '');
    expect(values.infrastructure.vsphere).toMatchObject({
      version: 'v1.16.1',
      createNamespace: true,
      namespace: 'capv-system',
      deployment: {
        replicas: 2,
        containers: [{ name: 'manager', args: { '--leader-elect': 'true' } }],
      },
    });
    expect(
      values.infrastructure.vsphere.deployment.affinity.podAntiAffinity
        .requiredDuringSchedulingIgnoredDuringExecution,
    ).toEqual([
      {
        topologyKey: 'kubernetes.io/hostname',
        labelSelector: { matchLabels: { 'cluster.x-k8s.io/provider': 'infrastructure-vsphere' } },
      },
    ]);
  });
});

describe('the vSphere manifests', () => {
  it('are CRD-valid, unpaused, with the pool, full clones and the replicas of mgmt.yaml', async () => {
    const c = await loadMgmtConfig(join(REPO, 'examples/mgmt/mgmt-vsphere.yaml'), 'mgmt-vsphere.yaml');
    const objs = managementManifests(c) as unknown as {
      kind: string;
      metadata: { annotations?: unknown };
      spec: Record<string, unknown>;
    }[];
    const v = CrdValidator.fromSchemas();
    expect(objs.flatMap((o) => v.validate(o))).toEqual([]);
    for (const o of objs) expect(o.metadata.annotations).toBeUndefined();
    expect(objs.map((o) => o.kind)).toEqual(expect.arrayContaining(['InClusterIPPool', 'VSphereCluster']));
    expect(objs.find((o) => o.kind === 'TalosControlPlane')?.spec['replicas']).toBe(3);
    const tmpl = objs.find((o) => o.kind === 'VSphereMachineTemplate')?.spec as {
      template: { spec: Record<string, unknown> };
    };
    expect(tmpl.template.spec).toMatchObject({
      template: 'talos-v1.13.7',
      datacenter: 'dc1',
      datastore: 'datastore1',
      cloneMode: 'fullClone',
    });
  });

  it('DHCP: no pool, dhcp4 on the device', async () => {
    const cfg = writeVsphereConfig(dir, (t) =>
      t
        .replace(/ {4}pool: .*\n/, '    dhcp: true\n')
        .replace('{vip: 10.30.0.10}', '{host: mgmt.example.test}'),
    );
    const objs = managementManifests(await loadMgmtConfig(cfg, 'mgmt.yaml'));
    expect(objs.map((o) => o.kind)).not.toContain('InClusterIPPool');
    expect(JSON.stringify(objs)).toContain('"dhcp4":true');
    const v = CrdValidator.fromSchemas();
    expect(objs.flatMap((o) => v.validate(o))).toEqual([]);
  });
});

describe('the vSphere password', () => {
  it('too short: the remediation speaks of the vSphere password, not of a Proxmox token', async () => {
    const e = await rejected(
      readSecret({ kind: 'env', name: 'VP' }, { VP: 'short' }, 'infrastructure.vsphere.password'),
      2,
    );
    expect(e.remediation).toMatch(/vSphere user's whole password/);
  });
});
