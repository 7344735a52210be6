import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { MemoryStore } from '../src/lab/apiserver/memory-store.js';
import type { KObj } from '../src/lab/apiserver/object.js';
import { BUILTIN_RESOURCES, objectKey } from '../src/lab/apiserver/resources.js';
import { startLabApi, writeAdminKubeconfig } from '../src/lab/apiserver/testing.js';
import { type Bench, mib, ms } from './lib/bench.js';
import { buildFerry, measure, median, type Sample } from './lib/child-measure.js';
import { generateCluster } from './lib/synthetic-cluster.js';

/** bench/collect's loopback address (127.0.130.x–127.0.139.x belong to live collection). */
const HOST = '127.0.130.1';
const ADVERTISE = 'kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint';

/** What ferry lists cluster-wide (collect.ts LISTS); its kube-system Secret and ConfigMap reads are a handful of small requests kubectl is not asked for. */
const KINDS = [
  'namespaces',
  'nodes',
  'pods',
  'deployments.apps',
  'replicasets.apps',
  'statefulsets.apps',
  'daemonsets.apps',
  'jobs.batch',
  'cronjobs.batch',
  'poddisruptionbudgets.policy',
  'services',
  'endpointslices.discovery.k8s.io',
  'persistentvolumes',
  'csidrivers.storage.k8s.io',
  'storageclasses.storage.k8s.io',
  'clusterrolebindings.rbac.authorization.k8s.io',
  'rolebindings.rbac.authorization.k8s.io',
];

/**
 * fieldsV1 the way a server records it: one `f:` entry per field the manager set. Real clusters
 * store these on every object (a few KB a pod); the lab's create path drops them, so they are
 * seeded straight into the store, and both clients receive them.
 */
function fieldsOf(v: unknown): unknown {
  if (Array.isArray(v)) return Object.fromEntries(v.map((x, i) => [`k:{"i":${i}}`, fieldsOf(x)]));
  if (v === null || typeof v !== 'object') return {};
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [`f:${k}`, fieldsOf(x)]));
}

function withManagedFields(o: KObj): KObj {
  const meta = o.metadata as Record<string, unknown>;
  const at = String(meta.creationTimestamp ?? '2026-06-01T08:00:00Z');
  meta.managedFields = [
    {
      manager: 'kube-controller-manager',
      operation: 'Update',
      apiVersion: o.apiVersion,
      time: at,
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': fieldsOf({ labels: meta.labels, ownerReferences: 1 }),
        'f:spec': fieldsOf(o.spec),
      },
    },
    ...(o.status === undefined
      ? []
      : [
          {
            manager: 'kubelet',
            operation: 'Update',
            apiVersion: o.apiVersion,
            time: at,
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:status': fieldsOf(o.status) },
            subresource: 'status',
          },
        ]),
  ];
  return o;
}

export async function seed(
  store: MemoryStore,
  size: { nodes: number; pods: number; namespaces: number },
  endpoint: string,
) {
  const writes: Promise<unknown>[] = [];
  const counts = generateCluster({ ...size, controlPlanes: ['cp-1', 'cp-2', 'cp-3'] }, (_key, obj) => {
    const o = obj as unknown as KObj;
    const d = BUILTIN_RESOURCES.find(
      (r) => r.kind === o.kind && `${r.group ? `${r.group}/` : ''}${r.version}` === o.apiVersion,
    );
    if (!d) throw new Error(`no lab resource for ${String(o.apiVersion)} ${String(o.kind)}`);
    const meta = o.metadata as { name: string; namespace?: string; annotations?: Record<string, string> };
    // The synthetic apiservers advertise 10.x pod addresses; ferry dials each one's TLS port, and a
    // benchmark talks only to loopback: they advertise the lab server instead.
    if (meta.annotations?.['kubernetes.io/config.mirror'] && meta.name.startsWith('kube-apiserver-'))
      meta.annotations[ADVERTISE] = endpoint;
    writes.push(store.create(objectKey(d, meta.namespace, meta.name), withManagedFields(o)));
  });
  await Promise.all(writes);
  return counts;
}

export const bench: Bench = {
  name: 'collect',
  summary:
    'ferry snapshot --kubeconfig vs kubectl get -A -o json, 1,000 nodes / 30,000 pods (time, peak RSS)',
  async run(argv) {
    const { values } = parseArgs({
      args: argv,
      options: {
        nodes: { type: 'string', default: '1000' },
        pods: { type: 'string', default: '30000' },
        namespaces: { type: 'string', default: '100' },
        rounds: { type: 'string', default: '3' },
        ferry: { type: 'string' },
        profile: { type: 'string' },
      },
    });
    const size = {
      nodes: Number(values.nodes),
      pods: Number(values.pods),
      namespaces: Number(values.namespaces),
    };
    const rounds = Number(values.rounds);
    const tmp = await mkdtemp(join(tmpdir(), 'ferry-bench-collect-'));
    const store = new MemoryStore();
    const lab = await startLabApi({ host: HOST, store });
    try {
      const endpoint = `${HOST}:${lab.server.port}`;
      let t = performance.now();
      const counts = await seed(store, size, endpoint);
      console.log(
        `lab API server ${lab.server.url}: ${Object.entries(counts.objects)
          .map(([k, n]) => `${n!.toLocaleString('en-US')} ${k}`)
          .join(', ')} seeded into its memory store in ${ms(performance.now() - t)}`,
      );
      const kubeconfig = join(tmp, 'kubeconfig');
      await writeAdminKubeconfig(lab, kubeconfig);
      let ferryDir = values.ferry === undefined ? undefined : resolve(values.ferry);
      if (!ferryDir) {
        ferryDir = join(tmp, 'ferry');
        await mkdir(ferryDir);
        t = performance.now();
        await buildFerry(ferryDir);
        console.log(`ferry built into ${ferryDir} in ${ms(performance.now() - t)}`);
      }
      const env = { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(tmp, 'kube-cache') };
      const ferryArgv = (r: number) => [
        process.execPath,
        join(ferryDir, 'dist', 'cli', 'main.js'),
        'snapshot',
        '--kubeconfig',
        kubeconfig,
        '-o',
        join(tmp, `snapshot-${r}`),
      ];
      const kubectlArgv = ['kubectl', 'get', KINDS.join(','), '-A', '-o', 'json'];

      // One unmeasured run of each: kubectl's discovery cache and the page cache start warm for both.
      await measure(kubectlArgv, join(tmp, 'kubectl-warm.json'), env);
      await measure(ferryArgv(0), join(tmp, 'ferry-warm.out'), env);
      const summary = (await readFile(join(tmp, 'ferry-warm.out'), 'utf8')).trim();
      console.log(`ferry: ${summary}`);
      const pods = /([\d,]+) pods/.exec(summary)?.[1]?.replaceAll(',', '');
      if (Number(pods) !== (counts.objects.pods ?? 0))
        throw new Error(`ferry's snapshot holds ${pods} pods; the lab holds ${counts.objects.pods}`);
      await rm(join(tmp, 'snapshot-0'), { recursive: true });
      await rm(join(tmp, 'kubectl-warm.json'));

      const session = values.profile === undefined ? undefined : new Session();
      if (session) {
        session.connect();
        await session.post('Profiler.enable');
        await session.post('Profiler.start');
      }
      const ferry: Sample[] = [];
      const kubectl: Sample[] = [];
      for (let r = 1; r <= rounds; r++) {
        // Alternating who goes first, so neither always runs on a machine the other just warmed.
        const order = r % 2 === 1 ? (['ferry', 'kubectl'] as const) : (['kubectl', 'ferry'] as const);
        for (const who of order) {
          if (who === 'ferry') {
            ferry.push(await measure(ferryArgv(r), join(tmp, `ferry-${r}.out`), env));
            await rm(join(tmp, `snapshot-${r}`), { recursive: true });
          } else {
            kubectl.push(await measure(kubectlArgv, join(tmp, `kubectl-${r}.json`), env));
            await rm(join(tmp, `kubectl-${r}.json`));
          }
        }
        const f = ferry.at(-1)!;
        const k = kubectl.at(-1)!;
        console.log(
          `round ${r}: ferry ${ms(f.wallMs)} ${mib(f.rssKiB * 1024)}, kubectl ${ms(k.wallMs)} ${mib(k.rssKiB * 1024)}`,
        );
      }
      if (session && values.profile !== undefined) {
        const { profile } = await session.post('Profiler.stop');
        await mkdir(values.profile, { recursive: true });
        const file = join(values.profile, 'lab-apiserver.cpuprofile');
        await writeFile(file, JSON.stringify(profile));
        session.disconnect();
        console.log(`lab API server CPU profile: ${file}`);
      }
      const fw = median(ferry.map((s) => s.wallMs));
      const kw = median(kubectl.map((s) => s.wallMs));
      const fr = median(ferry.map((s) => s.rssKiB));
      const kr = median(kubectl.map((s) => s.rssKiB));
      console.log(
        `median of ${rounds}: ferry ${ms(fw)} ${mib(fr * 1024)}, kubectl ${ms(kw)} ${mib(kr * 1024)} (target ferry ≤ 1.0× on both)`,
      );
      console.log(`ferry/kubectl wall: ${(fw / kw).toFixed(2)}×`);
      console.log(`ferry/kubectl rss: ${(fr / kr).toFixed(2)}×`);
    } finally {
      await lab.stop();
      await rm(tmp, { recursive: true, force: true });
    }
  },
};
