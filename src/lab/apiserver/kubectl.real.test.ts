/**
 * The lab API server through kubectl, when the machine has it: listing nodes and pods with
 * server-side printing, and a drain that a PodDisruptionBudget blocks with the real message.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, PatchStrategy, PolicyV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectlMissing, skipFor } from '../testing-binaries.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from './testing.js';

const run = promisify(execFile);
const noKubectl = await kubectlMissing();

let lab: LabApiFixture;
let dir: string;
let kubeconfig: string;

const kubectl = (...args: string[]) =>
  run('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 20_000 });

beforeAll(async () => {
  if (noKubectl) return;
  lab = await startLabApi();
  dir = await mkdtemp(join(tmpdir(), 'ferry-lab-kubectl-'));
  kubeconfig = join(dir, 'admin.conf');
  await writeAdminKubeconfig(lab, kubeconfig);
  const core = lab.kc.makeApiClient(CoreV1Api);
  await core.createNode({
    body: { metadata: { name: 'cp-1', labels: { 'node-role.kubernetes.io/control-plane': '' } } },
  });
  await core.patchNodeStatus(
    {
      name: 'cp-1',
      body: {
        status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kubeletVersion: 'v1.32.4' } },
      },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  for (const name of ['web-a', 'web-b']) {
    await core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name, labels: { app: 'web' } },
        spec: { nodeName: 'cp-1', containers: [{ name: 'c', image: 'nginx:1.27' }] },
      },
    });
    await core.replaceNamespacedPodStatus({
      namespace: 'default',
      name,
      body: {
        metadata: { name },
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True' }],
          containerStatuses: [{ name: 'c', ready: true, restartCount: 0, image: 'nginx:1.27', imageID: '' }],
        },
      },
    });
  }
  await lab.kc.makeApiClient(PolicyV1Api).createNamespacedPodDisruptionBudget({
    namespace: 'default',
    body: { metadata: { name: 'web' }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } } },
  });
});
afterAll(async () => {
  await lab?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(skipFor(noKubectl))('kubectl against the lab API server', () => {
  it('lists nodes and pods', async () => {
    const nodes = (await kubectl('get', 'nodes')).stdout;
    expect(nodes).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\n/);
    expect(nodes).toMatch(/cp-1\s+Ready\s+control-plane\s+\d+s\s+v1\.32\.4/);
    const pods = (await kubectl('get', 'pods', '-A', '-o', 'wide')).stdout;
    expect(pods).toMatch(/default\s+web-a\s+1\/1\s+Running\s+0\s+\d+s\s+<none>\s+cp-1/);
    const json = JSON.parse((await kubectl('get', 'pod', 'web-b', '-o', 'json')).stdout) as {
      kind: string;
      metadata: { name: string };
    };
    expect(json).toMatchObject({ kind: 'Pod', metadata: { name: 'web-b' } });
  });

  it('drain is held by the PodDisruptionBudget with the real eviction message', async () => {
    const err = await kubectl('drain', 'cp-1', '--force', '--timeout=2s').then(
      () => undefined,
      (e: { stderr?: string; stdout?: string }) => `${e.stdout ?? ''}${e.stderr ?? ''}`,
    );
    expect(err).toContain("Cannot evict pod as it would violate the pod's disruption budget.");
    expect((await kubectl('get', 'node', 'cp-1', '-o', 'jsonpath={.spec.unschedulable}')).stdout).toBe(
      'true',
    );
  });
});
