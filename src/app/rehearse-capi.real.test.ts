/**
 * The capi rehearsal of examples/lab-cluster on a real lab (subnet 127.0.192.x belongs to this
 * file): the lab API server is management and workload cluster, its Cluster API reconciler makes
 * the Machines, ferry adopts the cluster, adds every node through Cluster API and hands the
 * TalosControlPlane over at the end; the lab decommissions the kubeadm machines.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { KubeAdmin } from '../adapters/kube/admin.js';
import { loadKubeconfig } from '../adapters/kube/kubeconfig.js';
import { createRequester } from '../adapters/kube/request.js';
import { missingReason } from '../lab/etcd/binaries.js';
import { disposeAllLabs } from '../lab/etcd/cluster.js';
import { skipFor } from '../lab/testing-binaries.js';
import { scaled } from '../util/testing-slowness.js';
import { rehearse } from './rehearse.js';

afterAll(async () => {
  await disposeAllLabs();
});

const missing = (await missingReason('3.4')) ?? (await missingReason('3.5'));

it("rehearses examples/lab-cluster through Cluster API (default phases): all 8 nodes replaced (control planes through the paused TalosControlPlane, workers through their pools' MachineDeployments, labels kept), no failed canary request, no etcd member removed by the audit, the TalosControlPlane handed over", async ({
  skip,
}) => {
  if (skipFor(missing)) skip(missing);
  const dir = await mkdtemp(join(tmpdir(), 'ferry-rehearse-capi-'));
  const lines: string[] = [];
  try {
    const r = await rehearse({
      snapshotPath: 'examples/lab-cluster',
      dir,
      subnet: 192,
      provisioner: 'capi',
      probes: { apiTimeoutMs: scaled(2_000), requestTimeoutMs: scaled(2_000) },
      keepLab: true,
      log: (l) => lines.push(l),
    });
    try {
      expect(r.result.status, `${r.result.error?.message}\n${lines.slice(-30).join('\n')}`).toBe('completed');
      expect(r.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`)).toEqual([]);
      const names = r.checks.map((c) => c.name);
      expect(names).toContain("no etcd member removed by Cluster API's audit");
      expect(names).toContain('TalosControlPlane handed over (unpaused, ready)');
      const canary = r.probes.find((p) => p.summary.name === 'canary-request')!;
      expect(canary.summary.failures, JSON.stringify(canary.summary.errors)).toBe(0);
      expect(canary.summary.attempts).toBeGreaterThan(1_000);

      const lab = r.lab!;
      // No etcd member removed by the lab's Cluster API audit (H1).
      expect(lab.capi!.events.filter((e) => e.kind === 'etcd-audit')).toEqual([]);
      // Every node replaced: no kubeadm node remains, three Talos members, each a Node; five
      // workers from the MachineDeployments, each with its pool's label (general 2, data 3).
      const kubeadm = ['cp-1', 'cp-2', 'cp-3', 'worker-1', 'worker-2', 'worker-3', 'worker-4', 'worker-5'];
      const kube = new KubeAdmin(createRequester(loadKubeconfig(lab.kubeconfigPath)));
      const all = await kube.listNodes();
      const nodes = all.map((n) => n.name);
      expect(nodes.filter((n) => kubeadm.includes(n))).toEqual([]);
      expect(nodes).toHaveLength(8);
      const pools = all
        .filter((n) => !('node-role.kubernetes.io/control-plane' in n.labels))
        .map((n) => n.labels['lab.example/pool'])
        .sort();
      expect(pools).toEqual(['data', 'data', 'data', 'general', 'general']);
      const members = await lab.etcd.memberList();
      expect(members).toHaveLength(3);
      expect(members.filter((m) => kubeadm.includes(m.name))).toEqual([]);
      for (const m of members) expect(nodes).toContain(m.name);
    } finally {
      await r.lab?.dispose();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 900_000);
