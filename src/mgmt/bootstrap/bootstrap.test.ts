import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { memoryIo } from '../../cli/io.js';
import { runMgmtBootstrap } from '../../cli/mgmt-bootstrap.js';
import { rejected } from '../../testing-errors.js';
import { StageJournal } from '../stage-journal.js';
import { fixture, type Rule, Standins } from '../tools/testing-standins.js';
import { STAGE_KINDS } from './stages.js';
import { GOOD_TEMPLATE, startProxmox } from './testing-proxmox-server.js';
import { happyRules, KUBECONFIG_KEY, TALOS_KEY, TOKEN_SECRET, writeConfig } from './testing-scenario.js';

// Contract tests: the production adapter runs stand-in kind/clusterctl/kubectl/helm/docker found on
// PATH (src/mgmt/tools/testing-standin.mjs), which record every call and play recorded outputs.
let dir: string;
let tools: Standins;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ferry-mgmt-boot-'));
  tools = new Standins(dir);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const FLAGS = ['--skip-template-check', '--poll-interval', '0.01'];
const state = () => join(dir, '.ferry-mgmt-kmgt');

function io(env: Record<string, string> = {}) {
  return Object.assign(memoryIo({ cwd: dir }), { env: tools.env(env) });
}

async function bootstrap(rules: Rule[], extra: string[] = [], out = io()) {
  tools.script(rules);
  const code = await runMgmtBootstrap(['--config', writeConfig(dir), ...FLAGS, ...extra], out);
  return { code, out };
}

const journal = () => StageJournal.read(join(state(), 'bootstrap.journal.sqlite'));
const lastStates = () => {
  const m = new Map<string, string>();
  for (const e of journal().events) m.set(e.stage, e.state);
  return m;
};

describe('ferry mgmt bootstrap against stand-in tools', () => {
  it('runs every stage in order: kind, pinned clusterctl init, Secret, manifests, waits, Helm, pivot, kind deleted', async () => {
    const { code, out } = await bootstrap(happyRules());
    expect(code).toBe(0);
    expect(out.out).toMatch(/management cluster kmgt runs/);
    expect(out.err).toContain(
      'tools: docker 27.3.1, kind 0.32.0, kubectl 1.36.1, helm 3.21.4, clusterctl 1.14.0',
    );
    expect([...lastStates().entries()]).toEqual(STAGE_KINDS.map((k) => [k, 'done']));

    const kindCreate = tools.called('kind', /^create cluster/)[0];
    expect(kindCreate?.args).toEqual(
      expect.arrayContaining(['--kubeconfig', join(state(), 'kind.kubeconfig'), '--config', '-']),
    );
    expect(kindCreate?.stdin).toMatch(/apiVersion: kind.x-k8s.io\/v1alpha4/);

    const init = tools.called('clusterctl', /^init /)[0];
    expect(init?.args.join(' ')).toContain(
      '--core cluster-api:v1.14.0 --bootstrap talos:v0.6.12 --control-plane talos:v0.5.13 --infrastructure proxmox:v0.9.0 --ipam in-cluster:v1.1.0 --wait-providers',
    );
    expect(init?.env['CLUSTERCTL_DISABLE_VERSIONCHECK']).toBe('true');
    const clusterctlYaml = readFileSync(join(state(), 'clusterctl.yaml'), 'utf8');
    expect(clusterctlYaml).toContain('releases/v0.9.0/infrastructure-components.yaml');
    expect(clusterctlYaml).not.toContain('latest');

    // The Secret goes on stdin with the label CAPMOX's docs give and the move label.
    const secretApply = tools.calls().find((c) => c.stdin.includes('"kind":"Secret"'));
    const secret = JSON.parse(secretApply?.stdin ?? '{}');
    expect(secret.metadata.labels).toEqual({
      'platform.ionos.com/secret-type': 'proxmox-credentials',
      'clusterctl.cluster.x-k8s.io/move': '',
    });
    expect(secret.stringData).toMatchObject({
      token: 'capi@pve!capi',
      secret: TOKEN_SECRET,
      insecure: 'false',
    });

    // The describe tree was shown while waiting, including the stall before the CNI.
    expect(out.err).toContain('NodeHealthy: Waiting for a Node with spec.providerID');
    expect(out.err).toContain('Cluster/kmgt                                       3/3');

    const kubeconfig = join(state(), 'kmgt.kubeconfig');
    expect(readFileSync(kubeconfig, 'utf8')).toBe(fixture('kubeconfig.yaml'));
    expect(statSync(kubeconfig).mode & 0o777).toBe(0o600);
    expect(statSync(join(state(), 'kmgt.talosconfig')).mode & 0o777).toBe(0o600);

    expect(
      tools.called(
        'helm',
        /^upgrade --install cilium oci:\/\/quay.io\/cilium\/charts\/cilium --version 1.19.6 /,
      ),
    ).toHaveLength(1);
    expect(tools.called('helm', /^upgrade --install capi-operator /)[0]?.stdin).toMatch(
      /controlPlane:\n {2}talos:\n {4}version: v0.5.13/,
    );
    // H14: the cluster's own secrets get the move label, others do not.
    const label = tools.called('kubectl', / label --overwrite /)[0]?.args ?? [];
    expect(label).toEqual(
      expect.arrayContaining(['secret/kmgt-talos', 'secret/kmgt-ca', 'clusterctl.cluster.x-k8s.io/move=']),
    );
    expect(label).not.toContain('secret/unrelated');

    const order = tools
      .calls()
      .map(
        (c) =>
          `${c.tool} ${c.args.slice(0, 1).join(' ')}${c.args.includes('--to-directory') ? ' to' : ''}${c.args.includes('--from-directory') ? ' from' : ''}${c.args.includes('patch') ? ' patch' : ''}`,
      )
      .filter((s) => /^(clusterctl move|kubectl --kubeconfig.*patch|kind delete)/.test(s));
    expect(order).toEqual([
      'clusterctl move to',
      'kubectl --kubeconfig patch',
      'clusterctl move from',
      'kind delete',
    ]);
    // The move directory held the cluster's Secrets: gone after the import.
    expect(existsSync(join(state(), 'move'))).toBe(false);
  });

  it('the Cluster API operator and every provider: 2 replicas, leader election, one per control plane', async () => {
    const { code } = await bootstrap(happyRules());
    expect(code).toBe(0);
    const helm = tools.called(
      'helm',
      /^upgrade --install capi-operator cluster-api-operator --version 0.28.0 /,
    );
    expect(helm).toHaveLength(1);
    const v = parse(helm[0]!.stdin);
    const onControlPlanes = (labels: Record<string, string>) => ({
      nodeSelector: { 'node-role.kubernetes.io/control-plane': '' },
      tolerations: [
        { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      ],
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: labels } },
          ],
        },
      },
    });
    expect(v).toMatchObject({
      replicaCount: 2,
      leaderElection: { enabled: true },
      ...onControlPlanes({
        'app.kubernetes.io/name': 'cluster-api-operator',
        'app.kubernetes.io/instance': 'capi-operator',
      }),
    });
    // Each provider's spec.deployment, with its own pod label and its own leader-election flag.
    const expected: [string, string, string, string, string][] = [
      ['core', 'cluster-api', 'v1.14.0', 'cluster-api', '--leader-elect'],
      ['bootstrap', 'talos', 'v0.6.12', 'bootstrap-talos', '--enable-leader-election'],
      ['controlPlane', 'talos', 'v0.5.13', 'control-plane-talos', '--enable-leader-election'],
      ['infrastructure', 'proxmox', 'v0.9.0', 'infrastructure-proxmox', '--leader-elect'],
      ['ipam', 'in-cluster', 'v1.1.0', 'ipam-in-cluster', '--leader-elect'],
    ];
    for (const [group, name, version, label, flag] of expected)
      expect(v[group][name], `${group}.${name}`).toEqual({
        version,
        createNamespace: true,
        deployment: {
          replicas: 2,
          ...onControlPlanes({ 'cluster.x-k8s.io/provider': label }),
          containers: [{ name: 'manager', args: { [flag]: 'true' } }],
        },
      });
    expect(Object.keys(v).sort()).toEqual(
      [
        'affinity',
        'bootstrap',
        'controlPlane',
        'core',
        'infrastructure',
        'ipam',
        'leaderElection',
        'nodeSelector',
        'replicaCount',
        'tolerations',
      ].sort(),
    );
  });

  it('no secret in any argument list, environment, output, journal or file but the 0600 ones', async () => {
    const { out } = await bootstrap(happyRules());
    const secrets = [TOKEN_SECRET, KUBECONFIG_KEY, TALOS_KEY];
    for (const c of tools.calls()) {
      for (const s of secrets) {
        expect(c.args.join(' ')).not.toContain(s);
        expect(Object.values(c.env).join('\n')).not.toContain(s);
      }
    }
    // The token reaches exactly one tool, on stdin.
    expect(tools.calls().filter((c) => c.stdin.includes(TOKEN_SECRET))).toHaveLength(1);
    const j = journal();
    const journalText =
      JSON.stringify(j) + readFileSync(join(state(), 'bootstrap.journal.sqlite')).toString('latin1');
    for (const s of secrets) {
      expect(out.out + out.err).not.toContain(s);
      expect(journalText).not.toContain(s);
      expect(readFileSync(join(state(), 'kmgt.capi.yaml'), 'utf8')).not.toContain(s);
    }
    // The journal does hold the tools' output (streamed, masked).
    expect(j.output.some((o) => o.tool === 'clusterctl' && o.line.includes('initialized successfully'))).toBe(
      true,
    );
  });

  it('a token in an environment variable is not passed on to the tools', async () => {
    tools.script(happyRules());
    const config = writeConfig(dir, (t) => t.replace('{file: ./proxmox-token}', '{env: PVE_TOKEN_SECRET}'));
    const code = await runMgmtBootstrap(
      ['--config', config, ...FLAGS],
      io({ PVE_TOKEN_SECRET: TOKEN_SECRET }),
    );
    expect(code).toBe(0);
    for (const c of tools.calls()) expect(Object.values(c.env).join('\n')).not.toContain(TOKEN_SECRET);
    expect(tools.calls().filter((c) => c.stdin.includes(TOKEN_SECRET))).toHaveLength(1);
  });

  it('a second run after success does nothing but the preflight', async () => {
    await bootstrap(happyRules());
    const before = tools.calls().length;
    const { code, out } = await bootstrap(happyRules());
    expect(code).toBe(0);
    expect(out.out).toMatch(/16 stage\(s\) were done by an earlier run/);
    expect(
      tools
        .calls()
        .slice(before)
        .map((c) => `${c.tool} ${c.args[0]}`),
    ).toEqual(['docker -v', 'kind version', 'kubectl version', 'helm version', 'clusterctl version']);
  });

  it('kind fails to start: exit 3 with kind’s error; the next run continues at the kind stage', async () => {
    const broken: Rule = {
      tool: 'kind',
      match: '^create cluster',
      code: 1,
      stderr: fixture('kind-create-no-docker.txt'),
    };
    const e = await rejected(bootstrap([broken, ...happyRules()]), 3);
    expect(e.message).toMatch(/kind could not create the cluster ferry-bootstrap/);
    expect(e.message).toContain('failed to get docker info');
    expect(lastStates().get('kind-cluster')).toBe('failed');
    expect(tools.called('clusterctl', /^init/)).toHaveLength(0);

    const { code } = await bootstrap(happyRules());
    expect(code).toBe(0);
    expect(tools.called('kind', /^create cluster/)).toHaveLength(2);
  });

  it('a provider that never becomes ready stops the run at the operator stage', async () => {
    const never: Rule = {
      tool: 'kubectl',
      match: ' wait --for=condition=Ready infrastructureproviders',
      code: 1,
      stderr: 'error: timed out waiting for the condition on infrastructureproviders/proxmox\n',
    };
    const e = await rejected(bootstrap([never, ...happyRules()]), 3);
    expect(e.message).toMatch(/the Cluster API operator or one of its providers did not become ready/);
    expect(e.message).toContain('infrastructureproviders/proxmox');
    const s = lastStates();
    expect(s.get('capi-operator')).toBe('failed');
    expect(s.get('cert-manager')).toBe('done');
    expect(s.has('pivot-export')).toBe(false);
  });

  it('clusterctl init that fails (a provider not ready in time) stops with its error', async () => {
    const slow: Rule = {
      tool: 'clusterctl',
      match: '^init ',
      code: 1,
      stderr: 'Error: timeout waiting for provider "infrastructure-proxmox" to become available\n',
    };
    const e = await rejected(bootstrap([slow, ...happyRules()]), 3);
    expect(e.message).toMatch(/clusterctl init failed/);
    expect(e.message).toContain('infrastructure-proxmox');
  });

  it('move refuses a paused cluster: exit 3, the unpause command in the fix, nothing imported', async () => {
    const paused: Rule = {
      tool: 'clusterctl',
      match: '^move .*--to-directory',
      code: 1,
      // Wording UNCONFIRMED; the check is checkClustersNotPaused (capi.md H13).
      stderr: 'Error: cannot start operation while Cluster kmgt/kmgt is paused\n',
    };
    const e = await rejected(bootstrap([paused, ...happyRules()]), 3);
    expect(e.message).toContain('is paused');
    expect(e.remediation).toContain(
      `patch clusters.cluster.x-k8s.io kmgt --type=merge -p '{"spec":{"paused":false},"metadata":{"annotations":{"cluster.x-k8s.io/paused":null}}}'`,
    );
    expect(tools.called('clusterctl', /--from-directory/)).toHaveLength(0);
    expect(tools.called('kind', /^delete/)).toHaveLength(0);
  });

  it('a control plane that never gets ready times out with the last describe tree', async () => {
    const stuck: Rule = { tool: 'kubectl', match: ' get taloscontrolplane ', stdout: '{"status":{}}' };
    const e = await rejected(bootstrap([stuck, ...happyRules()], ['--wait-timeout', '0.2']), 3);
    expect(e.message).toMatch(
      /timed out after 0.2 s: wait until the control plane kmgt-control-plane answers/,
    );
    expect(e.message).toContain('TalosControlPlane/kmgt-control-plane');
  });

  it('a missing tool, an unsupported version, a clusterctl of another minor: exit 2 before anything runs', async () => {
    rmSync(join(tools.bin, 'kind'));
    let e = await rejected(bootstrap(happyRules()), 2);
    expect(e.message).toBe('kind is not installed (not found on PATH)');
    expect(e.remediation).toMatch(/kind.sigs.k8s.io/);
    tools = new Standins(dir);

    e = await rejected(
      bootstrap([{ tool: 'helm', match: '^version', stdout: 'v3.7.2+g663a896\n' }, ...happyRules()]),
      2,
    );
    expect(e.message).toMatch(/helm 3.7.2 is not supported: ferry needs 3.8.0/);

    e = await rejected(
      bootstrap([{ tool: 'clusterctl', match: '^version', stdout: 'v1.13.4\n' }, ...happyRules()]),
      2,
    );
    expect(e.message).toMatch(/clusterctl 1.13.4 does not match providers.core v1.14.0/);

    e = await rejected(
      bootstrap([{ tool: 'kind', match: '^version', stdout: 'something else\n' }, ...happyRules()]),
      2,
    );
    expect(e.message).toMatch(/cannot read the version of kind/);
    expect(tools.calls().filter((c) => c.args[0] === 'create')).toHaveLength(0);
  });

  it('a journal started with another mgmt.yaml is not continued unless asked', async () => {
    const broken: Rule = { tool: 'kind', match: '^create cluster', code: 1, stderr: 'ERROR: boom\n' };
    await rejected(bootstrap([broken, ...happyRules()]), 3);
    tools.script(happyRules());
    const changed = writeConfig(dir, (t) => t.replace('templateId: 9000', 'templateId: 9001'));
    const e = await rejected(runMgmtBootstrap(['--config', changed, ...FLAGS], io()), 2);
    expect(e.message).toMatch(/holds a bootstrap started with a different/);
    expect(await runMgmtBootstrap(['--config', changed, ...FLAGS, '--accept-config-change'], io())).toBe(0);
  });

  it('--dry-run runs no tool and prints the commands, the Proxmox setup and no secret', async () => {
    const { code, out } = await bootstrap(happyRules(), ['--dry-run']);
    expect(code).toBe(0);
    expect(tools.calls()).toHaveLength(0);
    expect(existsSync(state())).toBe(false);
    expect(out.out).toContain('pveum user token add capi@pve capi --privsep 0');
    expect(out.out).toContain('ce4c980550dd2ab1b17bbf2b08801c7eb59418eafe8f279833297925d67c7515');
    expect(out.out).toContain(
      `kind create cluster --name ferry-bootstrap --kubeconfig ${join(state(), 'kind.kubeconfig')} --config - --wait 5m <<'EOF'`,
    );
    expect(out.out).toContain(`--from-file=secret=${join(dir, 'proxmox-token')}`);
    expect(out.out).toMatch(/clusterctl move --kubeconfig \S+kmgt.kubeconfig --config \S+ --from-directory/);
    expect(out.out).not.toContain(TOKEN_SECRET);
  });

  it('reads the Proxmox template back over TLS before kind starts: a misfit or an untrusted certificate stops it', async () => {
    const pve = await startProxmox({
      tls: true,
      authorization: `PVEAPIToken=capi@pve!capi=${TOKEN_SECRET}`,
      vms: {
        'pve1/9000': GOOD_TEMPLATE,
        'pve1/9001': { ...GOOD_TEMPLATE, ide0: 'local:iso/cidata.iso,media=cdrom' },
      },
    });
    const cfg = (template: number, insecure: boolean) =>
      writeConfig(dir, (t) =>
        t
          .replace('https://127.0.0.1:8006', pve.url)
          .replace('templateId: 9000', `templateId: ${template}\n    insecure: ${insecure}`),
      );
    const flags = ['--poll-interval', '0.01'];
    try {
      tools.script(happyRules());
      let e = await rejected(runMgmtBootstrap(['--config', cfg(9001, true), ...flags], io()), 2);
      expect(e.message).toMatch(/the Proxmox template 9001 on pve1 does not fit: ide0 is in use/);
      e = await rejected(runMgmtBootstrap(['--config', cfg(9000, false), ...flags], io()), 2);
      expect(e.message).toMatch(/cannot reach Proxmox at https:\/\/127.0.0.1:\d+: .*certificate/);
      expect(tools.called('kind', /^create/)).toHaveLength(0);

      const out = io();
      expect(await runMgmtBootstrap(['--config', cfg(9000, true), ...flags], out)).toBe(0);
      expect(out.err).toContain('Proxmox template 9000 (talos-v1.13.7) on pve1: fits');
      expect(pve.requests.at(-1)?.url).toBe('/api2/json/nodes/pve1/qemu/9000/config');
    } finally {
      await pve.close();
    }
  });
});
