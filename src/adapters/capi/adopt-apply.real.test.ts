/**
 * adopt() against the lab API server serving every Cluster API CRD of schemas/capi (loopback
 * 127.0.151.x, this engineer's range): the kit's objects arrive in the safe order, each verified;
 * the TalosControlPlane is bootstrapped before any MachineDeployment exists and stays paused; the
 * `<cluster>-kubeconfig` Secret, the initialized status and the Cluster's touch are there; a
 * second run changes nothing and says so; an object its CRD rejects stops it before any request.
 */
import { readdir, readFile } from 'node:fs/promises';
import { ApiextensionsV1Api, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { labKitObjects } from '../../capi/testing-kit.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { type LabApiFixture, startLabApi } from '../../lab/apiserver/testing.js';
import type { LoadedKubeconfig } from '../kube/kubeconfig.js';
import { createRequester } from '../kube/request.js';
import { adopt } from './adopt-apply.js';

const SPECS = new URL('../../../schemas/capi/', import.meta.url);
const crds = CrdValidator.fromSchemas();
let lab: LabApiFixture;
let loaded: LoadedKubeconfig;

beforeAll(async () => {
  lab = await startLabApi({ host: '127.0.151.1' });
  const ext = lab.kc.makeApiClient(ApiextensionsV1Api);
  for (const f of (await readdir(SPECS)).filter((x) => x.endsWith('.yaml'))) {
    const body = parse(await readFile(new URL(f, SPECS), 'utf8')) as V1CustomResourceDefinition;
    await ext.createCustomResourceDefinition({ body });
  }
  loaded = { kc: lab.kc, file: 'lab', context: lab.kc.getCurrentContext(), server: lab.server.url };
});
afterAll(async () => {
  await lab?.stop();
});

describe('adopt on the lab API server', () => {
  it('applies in the safe order, verifies each step, and a second run is a no-op', async () => {
    const req = createRequester(loaded);
    const kit = labKitObjects();
    const first = await adopt(req, kit, { kubeadmMembersRemain: true, crds });
    expect(first.nothingToDo).toBe(false);
    const i = (re: RegExp) => first.applied.findIndex((s) => re.test(s));
    expect(i(/status\.bootstrapped: true/)).toBeGreaterThan(i(/^TalosControlPlane .*replicas 0/));
    expect(i(/status\.bootstrapped: true/)).toBeLessThan(i(/^MachineDeployment /));
    expect(i(/^Secret lab\/lab-talos/)).toBeLessThan(i(/^Cluster lab\/lab /));
    // What the paused provider would write, then the Cluster unpaused and asked to reconcile last.
    expect(i(/^Secret lab\/lab-kubeconfig .*CN=ferry-capi-adopt/)).toBeLessThan(i(/^Secrets .* owned by/));
    expect(i(/status\.initialized: true/)).toBeLessThan(i(/Cluster lab\/lab unpaused/));
    expect(first.applied.at(-2)).toMatch(/Cluster lab\/lab unpaused/);
    expect(first.applied.at(-1)).toMatch(/Cluster lab\/lab asked to reconcile/);

    // biome-ignore lint/suspicious/noExplicitAny: objects read back are walked freely in assertions
    const get = (path: string) => req.request('GET', path) as Promise<Record<string, any>>;
    const tcp = await get(
      '/apis/controlplane.cluster.x-k8s.io/v1alpha3/namespaces/lab/taloscontrolplanes/lab-control-plane',
    );
    expect(tcp['status'].bootstrapped).toBe(true);
    expect(tcp['spec'].replicas).toBe(0);
    // kubeadm members remain: the TCP stays paused although the Cluster is not.
    expect(tcp['metadata'].annotations['cluster.x-k8s.io/paused']).toBe('true');
    const cluster = await get('/apis/cluster.x-k8s.io/v1beta2/namespaces/lab/clusters/lab');
    expect(cluster['spec'].paused).toBe(false);
    const talos = await get('/api/v1/namespaces/lab/secrets/lab-talos');
    expect(talos['metadata'].ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Cluster', name: 'lab', uid: cluster['metadata'].uid }),
    ]);
    expect(tcp['status'].initialized).toBe(true);
    expect(cluster['metadata'].annotations['ferry.dev/reconcile-requested']).toBe(
      tcp['metadata'].resourceVersion,
    );
    const kubeconfig = await get('/api/v1/namespaces/lab/secrets/lab-kubeconfig');
    expect(kubeconfig).toMatchObject({
      type: 'cluster.x-k8s.io/secret',
      metadata: { labels: { 'cluster.x-k8s.io/cluster-name': 'lab' } },
    });
    expect(kubeconfig['data'].value).toEqual(expect.any(String));
    expect(kubeconfig['metadata'].ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Cluster', name: 'lab', uid: cluster['metadata'].uid }),
    ]);

    const again = await adopt(req, kit, { kubeadmMembersRemain: true, crds });
    expect(again).toMatchObject({ nothingToDo: true, applied: [] });

    // The last kubeadm member gone: only the TCP is unpaused now.
    const last = await adopt(req, kit, { kubeadmMembersRemain: false, crds });
    expect(last.applied).toEqual(['TalosControlPlane lab/lab-control-plane unpaused']);
  });

  it('an object its CRD rejects stops adoption before anything is sent', async () => {
    const req = createRequester(loaded);
    const kit = labKitObjects('other').map((o) =>
      o.kind === 'MachineDeployment' ? { ...o, spec: { ...o.spec, replicaz: 1 } } : o,
    );
    await expect(adopt(req, kit, { kubeadmMembersRemain: true, crds })).rejects.toThrow(
      /do not match their CRDs.*replicaz/,
    );
    await expect(req.request('GET', '/api/v1/namespaces/other')).rejects.toMatchObject({ status: 404 });
  });
});
