/**
 * `ferry upgrade plan` through the CLI against a lab API server serving the Cluster API CRDs (the
 * management cluster, 127.0.70.1) holding the lab Cluster as adoption leaves it once running
 * (unpaused, Machines with Nodes); the workload cluster as a saved snapshot. Nothing listens on
 * 127.0.70.3: an unreachable management cluster is bad input, never an empty one.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeRequester } from '../adapters/kube/request.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../lab/apiserver/testing.js';
import { installCapiCrds, labKube } from '../mgmt/testing-fleet.js';
import type { KubeObject } from '../snapshot/model.js';
import { saveSnapshot } from '../snapshot/store.js';
import { labMgmtObjects, labWorkload } from '../upgrade/testing.js';
import { memoryIo } from './io.js';
import { runCli } from './run-cli.js';

let mgmt: LabApiFixture;
let workload: LabApiFixture;
let dir: string;

async function ferry(...argv: string[]) {
  const io = memoryIo({ cwd: dir });
  const code = await runCli(argv, io);
  return { out: io.out, err: io.err, code };
}

const plural = (kind: string) => `${kind.toLowerCase()}s`;

function pathOf(o: KubeObject): string {
  const base = o.apiVersion.includes('/') ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
  return `${base}/namespaces/${o.metadata.namespace}/${plural(o.kind)}`;
}

async function load(req: KubeRequester, objects: KubeObject[]) {
  await req.request('POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lab' } },
  });
  for (const o of objects) {
    const { status, ...rest } = o;
    await req.request('POST', pathOf(o), { body: rest });
    if (status)
      await req.request('PATCH', `${pathOf(o)}/${o.metadata.name}/status`, {
        body: { status },
        contentType: 'application/merge-patch+json',
      });
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-upgrade-cli-'));
  [mgmt, workload] = await Promise.all([
    startLabApi({ host: '127.0.70.1' }),
    startLabApi({ host: '127.0.70.2' }),
  ]);
  const kube = labKube(mgmt.kc, mgmt.server.url);
  await installCapiCrds(kube);
  await load(kube.req, labMgmtObjects());
  await writeAdminKubeconfig(mgmt, join(dir, 'mgmt.kubeconfig'));
  await writeAdminKubeconfig(workload, join(dir, 'workload.kubeconfig'));
  const wreq = labKube(workload.kc, workload.server.url).req;
  for (const n of labWorkload().resources.nodes) await wreq.request('POST', '/api/v1/nodes', { body: n });
  await writeAdminKubeconfig(
    { ca: mgmt.ca, server: { url: 'https://127.0.70.3:6443' } } as unknown as LabApiFixture,
    join(dir, 'nobody.kubeconfig'),
  );
  await saveSnapshot(labWorkload(), join(dir, 'workload'));
  await saveSnapshot(labWorkload({ minAvailable: 4 }), join(dir, 'tight'));
}, 120_000);

afterAll(async () => {
  await Promise.all([mgmt?.stop(), workload?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const base = ['upgrade', 'plan', '--mgmt-kubeconfig', 'mgmt.kubeconfig', '--cluster', 'lab/lab'];

describe('ferry upgrade plan', () => {
  it('a Kubernetes skip: consecutive stages, each pool after the control plane, written as Markdown', async () => {
    const r = await ferry(...base, '--kubernetes', 'v1.34.2', '--snapshot', 'workload', '-o', 'plan.md');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      'md upgrade plan written to plan.md: Cluster lab/lab to Kubernetes v1.34.2 in 2 stage(s)',
    );
    const md = await readFile(join(dir, 'plan.md'), 'utf8');
    expect(md).toContain('## Stage 1: Kubernetes v1.32.4 → v1.33.6');
    expect(md).toContain('## Stage 2: Kubernetes v1.33.6 → v1.34.2');
    expect(md).toContain('patch TalosControlPlane lab/lab-control-plane (merge)');
    expect(md).toContain('| lab-workers | 4 | 1 | 0 |');
  });

  it('a Talos upgrade as JSON: the new templates, then the TalosControlPlane, then the pool', async () => {
    const r = await ferry(
      ...base,
      '--talos',
      'v1.13.9',
      '--template-id',
      '9113',
      '--snapshot',
      'workload',
      '-o',
      'plan.json',
    );
    expect(r.code).toBe(0);
    const plan = JSON.parse(await readFile(join(dir, 'plan.json'), 'utf8'));
    expect(plan).toMatchObject({ kind: 'FerryUpgradePlan', current: { talos: 'v1.12.11' }, blockers: [] });
    const writes = plan.stages[0].writes as { kind: string; object?: KubeObject; target?: string }[];
    expect(writes.map((w) => w.object?.kind ?? w.target ?? w.kind)).toEqual([
      'ProxmoxMachineTemplate',
      'ProxmoxMachineTemplate',
      'TalosConfigTemplate',
      'TalosControlPlane lab/lab-control-plane',
      'Machine lab/lab-control-plane-a',
      'wait',
      'Machine lab/lab-control-plane-b',
      'wait',
      'Machine lab/lab-control-plane-c',
      'wait',
      'MachineDeployment lab/lab-workers',
      'wait',
    ]);
  });

  it('without --template-id: refused (exit 1) with the Image Factory commands, nothing written', async () => {
    const r = await ferry(...base, '--talos', 'v1.13.9', '-o', 'none.json');
    expect(r.code).toBe(1);
    expect(r.err).toContain('blocker template-id-missing');
    expect(r.err).toContain('factory.talos.dev/image/');
    await expect(stat(join(dir, 'none.json'))).rejects.toThrow();
  });

  it('a budget that allows no disruption: refused, naming --surge-replicas; with it, planned', async () => {
    const r = await ferry(...base, '--kubernetes', 'v1.33.2', '--snapshot', 'tight', '-o', 'tight.md');
    expect(r.code).toBe(1);
    expect(r.err).toContain('blocker pdb-blocks-drain');
    expect(r.err).toContain('--surge-replicas');
    const ok = await ferry(
      ...base,
      '--kubernetes',
      'v1.33.2',
      '--snapshot',
      'tight',
      '--surge-replicas',
      '-o',
      'tight.md',
    );
    expect(ok.code).toBe(0);
    expect(await readFile(join(dir, 'tight.md'), 'utf8')).toContain('scale Deployment shop/web to 5');
  });

  it('bad input is exit 2: a template id in use, a downgrade, a cluster that is not there, malformed versions', async () => {
    const inUse = await ferry(...base, '--talos', 'v1.13.9', '--template-id', '9000');
    expect(inUse.code).toBe(2);
    expect(inUse.err).toContain('template-id-in-use');
    const down = await ferry(...base, '--kubernetes', 'v1.31.0');
    expect(down.code).toBe(2);
    expect(down.err).toContain('blocker downgrade');
    const missing = await ferry(
      'upgrade',
      'plan',
      '--mgmt-kubeconfig',
      'mgmt.kubeconfig',
      '--cluster',
      'lab/nope',
      '--kubernetes',
      'v1.33.2',
    );
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('cluster-not-found');
    for (const v of ['v1.33', '1.33.x', 'v1.33.0-rc.1']) {
      const bad = await ferry(...base, '--kubernetes', v);
      expect(bad.code, v).toBe(2);
      expect(bad.err).toContain('is not a Kubernetes release');
    }
    const talos = await ferry(...base, '--talos', 'v1.99.0');
    expect(talos.code).toBe(2);
    const both = await ferry(...base, '--kubernetes', 'v1.33.2', '--talos', 'v1.13.9');
    expect(both.code).toBe(2);
  });

  it('the workload cluster read live (--kubeconfig): the Talos release from its Nodes', async () => {
    const r = await ferry(
      ...base,
      '--kubernetes',
      'v1.33.2',
      '--kubeconfig',
      'workload.kubeconfig',
      '-o',
      'live.json',
    );
    expect(r.code, r.err).toBe(0);
    const plan = JSON.parse(await readFile(join(dir, 'live.json'), 'utf8'));
    expect(plan.current).toMatchObject({ kubernetes: 'v1.32.4', talos: 'v1.12.11' });
    expect(plan.stages[0].pools[0].nodes).toHaveLength(4);
  });

  it('a workload list the server refuses is not observed: exit 2 naming it, never an empty list', async () => {
    workload.server.setForbidden([{ group: 'policy', resource: 'poddisruptionbudgets' }]);
    try {
      const r = await ferry(
        ...base,
        '--kubernetes',
        'v1.33.2',
        '--kubeconfig',
        'workload.kubeconfig',
        '-o',
        'refused.json',
      );
      expect(r.code).toBe(2);
      expect(r.err).toContain('blocker not-observed');
      expect(r.err).toContain('list poddisruptionbudgets.policy');
      await expect(stat(join(dir, 'refused.json'))).rejects.toThrow();
    } finally {
      workload.server.setForbidden([]);
    }
  });

  it('a management list the server refuses stops the plan (exit 2)', async () => {
    mgmt.server.setForbidden([{ group: 'cluster.x-k8s.io', resource: 'machines' }]);
    try {
      const r = await ferry(...base, '--kubernetes', 'v1.33.2');
      expect(r.code).toBe(2);
      expect(r.err).toContain('cannot list Machine objects');
    } finally {
      mgmt.server.setForbidden([]);
    }
  });

  it('an unreachable management cluster is exit 2, not an empty one', async () => {
    const r = await ferry(
      'upgrade',
      'plan',
      '--mgmt-kubeconfig',
      'nobody.kubeconfig',
      '--cluster',
      'lab/lab',
      '--kubernetes',
      'v1.33.2',
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain('cannot list');
  });
});
