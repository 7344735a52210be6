/**
 * `ferry capi adopt` through the CLI against lab API servers: 127.0.155.1 serves every Cluster API
 * CRD of schemas/capi (the management cluster), 127.0.156.1 serves none (a workload cluster given
 * by mistake), nothing listens on 127.0.157.1. The kubectl commands `--dry-run` prints are run as
 * written by a shell with the real kubectl, and adopt then finds nothing to do.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { labKitObjects } from '../capi/testing-kit.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../lab/apiserver/testing.js';
import { kubectlMissing, skipFor } from '../lab/testing-binaries.js';
import { installCapiCrds, labKube } from '../mgmt/testing-fleet.js';
import { memoryIo } from './io.js';
import { runCli } from './run-cli.js';

const run = promisify(execFile);
const noKubectl = await kubectlMissing();

let mgmt: LabApiFixture;
let workload: LabApiFixture;
let dir: string;

async function ferry(...argv: string[]) {
  const io = memoryIo({ cwd: dir });
  const code = await runCli(argv, io);
  return { out: io.out, err: io.err, code };
}

/** A requester to the management lab API server, for what the tests set up or read behind ferry. */
async function mgmtRequester() {
  const { createRequester } = await import('../adapters/kube/request.js');
  return createRequester({
    kc: mgmt.kc,
    file: 'lab',
    context: mgmt.kc.getCurrentContext(),
    server: mgmt.server.url,
  });
}

async function writeKit(name: string, namespace: string, provisioner = 'capi'): Promise<string> {
  const objs = labKitObjects(namespace);
  await mkdir(join(dir, name, 'capi'), { recursive: true });
  const docs = (xs: unknown[]) => xs.map((o) => stringify(o)).join('---\n');
  await writeFile(join(dir, name, 'capi/secrets.yaml'), docs(objs.filter((o) => o.kind === 'Secret')), {
    mode: 0o600,
  });
  await writeFile(join(dir, name, 'capi/cluster.yaml'), docs(objs.filter((o) => o.kind !== 'Secret')));
  await writeFile(
    join(dir, name, 'provenance.json'),
    JSON.stringify({
      kind: 'FerryKitProvenance',
      target: { provisioner, infra: 'proxmox' },
      files: [
        { path: 'capi/secrets.yaml', step: 40, secret: true },
        { path: 'capi/cluster.yaml', step: 41, secret: false },
      ],
    }),
  );
  return name;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-capi-cli-'));
  [mgmt, workload] = await Promise.all([
    startLabApi({ host: '127.0.155.1' }),
    startLabApi({ host: '127.0.156.1' }),
  ]);
  await installCapiCrds(labKube(mgmt.kc, mgmt.server.url));
  await writeAdminKubeconfig(mgmt, join(dir, 'mgmt.kubeconfig'));
  await writeAdminKubeconfig(workload, join(dir, 'workload.kubeconfig'));
  await writeAdminKubeconfig(
    { ca: mgmt.ca, server: { url: 'https://127.0.157.1:6443' } } as unknown as LabApiFixture,
    join(dir, 'nobody.kubeconfig'),
  );
});
afterAll(async () => {
  await Promise.all([mgmt?.stop(), workload?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('ferry capi adopt', () => {
  it('adopts, printing each verified step, and a second run has nothing to do', async () => {
    const kit = await writeKit('kit-a', 'alpha');
    const first = await ferry('capi', 'adopt', kit, '--mgmt-kubeconfig', 'mgmt.kubeconfig');
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    expect(first.out).toMatch(
      /applied, verified: TalosControlPlane alpha\/lab-control-plane status\.bootstrapped: true/,
    );
    expect(first.out).toMatch(/applied, verified: Cluster alpha\/lab unpaused/);
    expect(first.out).toMatch(/Cluster alpha\/lab: adopted .*stays paused/);
    // Secret data never reaches the output.
    expect(first.out).not.toContain(Buffer.from('bundle').toString('base64'));
    const again = await ferry('capi', 'adopt', kit, '--mgmt-kubeconfig', 'mgmt.kubeconfig', '-o', 'json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.out)).toMatchObject({ nothingToDo: true, applied: [] });
    const text = await ferry('capi', 'adopt', kit, '--mgmt-kubeconfig', 'mgmt.kubeconfig');
    expect(text.out).toBe('Cluster alpha/lab: already adopted, nothing to do\n');
  });

  it.skipIf(skipFor(noKubectl))(
    '--dry-run changes nothing; its kubectl commands, typed as printed, adopt',
    async () => {
      const kit = await writeKit('kit-b', 'beta');
      const dry = await ferry('capi', 'adopt', kit, '--mgmt-kubeconfig', 'mgmt.kubeconfig', '--dry-run');
      expect(dry.code).toBe(0);
      expect(dry.out).toMatch(/adoption plan \(dry run, nothing changed\)/);
      expect(dry.out).toContain('--subresource=status');
      expect(dry.out).not.toContain(Buffer.from('bundle').toString('base64'));
      const req = labKube(mgmt.kc, mgmt.server.url).req;
      await expect(req.request('GET', '/api/v1/namespaces/beta')).rejects.toMatchObject({ status: 404 });

      // The one change: the lab API server publishes no OpenAPI document, which kubectl's client-side
      // validation downloads first (a real API server has one); ferry validated these objects already.
      const script = dry.out
        .slice(dry.out.indexOf('The same with kubectl'))
        .replaceAll(' create -f ', ' create --validate=false -f ');
      await run('bash', ['-xeuo', 'pipefail', '-c', script.split('\n').slice(1).join('\n')], {
        cwd: dir,
        timeout: 60_000,
      }).catch((err: { stderr?: string }) => {
        throw new Error(`the printed kubectl commands failed:\n${err.stderr}`);
      });
      const after = await ferry('capi', 'adopt', kit, '--mgmt-kubeconfig', 'mgmt.kubeconfig');
      expect(after.out).toBe('Cluster beta/lab: already adopted, nothing to do\n');
    },
  );

  it('a bad kit, a cluster without Cluster API, an unreachable API server: exit 2 with the reason', async () => {
    const manual = await writeKit('kit-manual', 'gamma', 'manual');
    const bad = await ferry('capi', 'adopt', manual, '--mgmt-kubeconfig', 'mgmt.kubeconfig');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/generated for provisioner manual, not capi/);
    const missing = await ferry('capi', 'adopt', 'no-such-kit', '--mgmt-kubeconfig', 'mgmt.kubeconfig');
    expect(missing.code).toBe(2);

    const kit = await writeKit('kit-c', 'delta');
    const wrong = await ferry('capi', 'adopt', kit, '--mgmt-kubeconfig', 'workload.kubeconfig');
    expect(wrong.code).toBe(2);
    expect(wrong.err).toMatch(/serves no .*--mgmt-kubeconfig/s);
    const down = await ferry('capi', 'adopt', kit, '--mgmt-kubeconfig', 'nobody.kubeconfig');
    expect(down.code).toBe(2);
    expect(down.err).toMatch(/cannot reach/);
    const usage = await ferry('capi', 'adopt', kit);
    expect(usage.code).toBe(2);
    expect(usage.err).toMatch(/missing --mgmt-kubeconfig/);
  });
});

describe('ferry capi add-control-plane', () => {
  it('adds one Machine with the TalosControlPlane paused; again: nothing; refuses more than one, an unpaused TCP, bad --replicas', async () => {
    const { installLabCapiCrds } = await import('../lab/capi/crds.js');
    const req = await mgmtRequester();
    await installLabCapiCrds(req);
    const kit = await writeKit('kit-cp', 'epsilon');
    expect((await ferry('capi', 'adopt', kit, '--mgmt-kubeconfig', 'mgmt.kubeconfig')).code).toBe(0);
    const add = (n: string) =>
      ferry('capi', 'add-control-plane', kit, '--mgmt-kubeconfig', 'mgmt.kubeconfig', '--replicas', n);
    const tcpPath =
      '/apis/controlplane.cluster.x-k8s.io/v1alpha3/namespaces/epsilon/taloscontrolplanes/lab-control-plane';
    const machines = async () =>
      (
        (await req.request('GET', '/apis/cluster.x-k8s.io/v1beta2/namespaces/epsilon/machines')) as {
          items: { metadata: { name: string } }[];
        }
      ).items.map((x) => x.metadata.name);

    const first = await add('1');
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/kept paused: replicas 0 → 1[\s\S]*created with the TalosControlPlane paused/);
    expect(await machines()).toEqual([expect.stringMatching(/^lab-control-plane-[a-z0-9]{5}$/)]);
    const again = await add('1');
    expect(again.code).toBe(0);
    expect(again.out).toMatch(/nothing to do/);
    expect(await machines()).toHaveLength(1);

    const leap = await add('3');
    expect(leap.code).toBe(3);
    expect(leap.err).toMatch(/more than one[\s\S]*--replicas 2/);
    const bad = await add('0');
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--replicas must be a whole number/);

    await req.request('PATCH', tcpPath, {
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { 'cluster.x-k8s.io/paused': null } } },
    });
    const unpaused = await add('2');
    expect(unpaused.code).toBe(3);
    expect(unpaused.err).toMatch(/is not paused[\s\S]*cluster\.x-k8s\.io\/paused=true/);
    expect(await machines()).toHaveLength(1);
  });

  it('one control plane at a time: the next waits for the Node of the one before, unless --no-wait', async () => {
    const req = await mgmtRequester();
    const kit = await writeKit('kit-order', 'eta');
    expect((await ferry('capi', 'adopt', kit, '--mgmt-kubeconfig', 'mgmt.kubeconfig')).code).toBe(0);
    const add = (...more: string[]) =>
      ferry('capi', 'add-control-plane', kit, '--mgmt-kubeconfig', 'mgmt.kubeconfig', ...more);
    const machines = async () =>
      (
        (await req.request('GET', '/apis/cluster.x-k8s.io/v1beta2/namespaces/eta/machines')) as {
          items: { metadata: { name: string } }[];
        }
      ).items.map((x) => x.metadata.name);
    const first = await add('--replicas', '1');
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/check that its etcd member is a voter/);
    const [one] = await machines();
    const second = await add('--replicas', '2');
    expect(second.code).toBe(3);
    expect(second.err).toContain(`control-plane Machine ${one} has no Node yet`);
    expect(second.err).toMatch(/--no-wait/);
    expect(await machines()).toHaveLength(1);
    const forced = await add('--replicas', '2', '--no-wait');
    expect(forced.code).toBe(0);
    expect(await machines()).toHaveLength(2);
  });

  it('a management cluster that serves no ProxmoxMachine: exit 2 before the first write, naming the kind; replicas untouched', async () => {
    const { installLabCapiCrds } = await import('../lab/capi/crds.js');
    const req = await mgmtRequester();
    const kit = await writeKit('kit-nocrd', 'theta');
    expect((await ferry('capi', 'adopt', kit, '--mgmt-kubeconfig', 'mgmt.kubeconfig')).code).toBe(0);
    const crd =
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/proxmoxmachines.infrastructure.cluster.x-k8s.io';
    await req.request('DELETE', crd);
    try {
      const r = await ferry(
        'capi',
        'add-control-plane',
        kit,
        '--mgmt-kubeconfig',
        'mgmt.kubeconfig',
        '--replicas',
        '1',
      );
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/serves no ProxmoxMachine \(infrastructure\.cluster\.x-k8s\.io\/v1alpha\d\)/);
      expect(r.err).toContain('ferry capi add-control-plane kit-nocrd');
      const tcp = (await req.request(
        'GET',
        '/apis/controlplane.cluster.x-k8s.io/v1alpha3/namespaces/theta/taloscontrolplanes/lab-control-plane',
      )) as { spec: { replicas?: number } };
      expect(tcp.spec.replicas ?? 0).toBe(0);
      const ms = (await req.request('GET', '/apis/cluster.x-k8s.io/v1beta2/namespaces/theta/machines')) as {
        items: unknown[];
      };
      expect(ms.items).toEqual([]);
    } finally {
      await installLabCapiCrds(req);
    }
  });

  it.skipIf(skipFor(noKubectl))(
    'a Cluster paused by its annotation alone is refused, and the printed command unpauses it as written',
    async () => {
      const req = await mgmtRequester();
      const kit = await writeKit('kit-paused', 'zeta');
      expect((await ferry('capi', 'adopt', kit, '--mgmt-kubeconfig', 'mgmt.kubeconfig')).code).toBe(0);
      const clusterPath = '/apis/cluster.x-k8s.io/v1beta2/namespaces/zeta/clusters/lab';
      await req.request('PATCH', clusterPath, {
        contentType: 'application/merge-patch+json',
        body: { metadata: { annotations: { 'cluster.x-k8s.io/paused': '' } } },
      });
      const refused = await ferry(
        'capi',
        'add-control-plane',
        kit,
        '--mgmt-kubeconfig',
        'mgmt.kubeconfig',
        '--replicas',
        '1',
      );
      expect(refused.code).toBe(3);
      expect(refused.err).toMatch(/Cluster zeta\/lab is paused/);
      const command =
        /(kubectl --kubeconfig \S+ -n zeta patch clusters\.cluster\.x-k8s\.io lab --type=merge -p '[^']+')/.exec(
          refused.err,
        )?.[1];
      expect(command, refused.err).toBeDefined();
      await run('bash', ['-euo', 'pipefail', '-c', command!], { cwd: dir });
      const cluster = (await req.request('GET', clusterPath)) as {
        metadata: { annotations?: Record<string, string> };
        spec?: { paused?: boolean };
      };
      expect(cluster.metadata.annotations?.['cluster.x-k8s.io/paused']).toBeUndefined();
      expect(cluster.spec?.paused).not.toBe(true);
    },
  );
});
