/**
 * Test support: a management cluster on a lab API server serving the Cluster API CRDs, the lab
 * kit (capi/testing-kit.ts) and a stand-in for the controllers — a test-side loop doing what the
 * TalosControlPlane and MachineSet controllers would: while the TalosControlPlane is unpaused and
 * asks for more replicas than it has Machines, or a MachineDeployment does, it creates a Machine;
 * then (unless told to hold them in Provisioned without a providerID) it registers the Machine's
 * Node in the workload cluster (same server) and sets its nodeRef. `audit` reproduces H1 while the
 * TalosControlPlane is unpaused: members no control-plane Machine names are removed from `etcd`.
 */

import { labKitObjects } from '../../capi/testing-kit.js';
import { nodeRefName } from '../../capi/view.js';
import { capiNamesOf } from '../../kit/capi-names.js';
import { type LabApiFixture, startLabApi } from '../../lab/apiserver/testing.js';
import { installCapiCrds, labKube } from '../../mgmt/testing-fleet.js';
import type { EtcdMemberInfo, EtcdView } from '../../ports/run.js';
import type { KubeObject } from '../../snapshot/model.js';
import { createRequester, type KubeRequester } from '../kube/request.js';
import { DEPLOYMENT_NAME_LABEL, MgmtApi } from './mgmt-api.js';

export interface TestMgmt {
  lab: LabApiFixture;
  req: KubeRequester;
  kit: KubeObject[];
  api: MgmtApi;
  stop(): Promise<void>;
}

export async function startTestMgmt(host: string, namespace = 'lab'): Promise<TestMgmt> {
  const lab = await startLabApi({ host });
  await installCapiCrds(labKube(lab.kc, lab.server.url));
  const req = createRequester({
    kc: lab.kc,
    file: 'lab',
    context: lab.kc.getCurrentContext(),
    server: lab.server.url,
  });
  const kit = labKitObjects(namespace);
  const names = capiNamesOf(
    kit.filter((o) => o.kind !== 'Secret').map((value, i) => ({ value, line: i + 1 })),
    'capi/cluster.yaml',
  );
  return { lab, req, kit, api: MgmtApi.fromKit(req, names, kit), stop: () => lab.stop() };
}

/** An etcd member list a test changes; what the handlers and the provisioner observe. */
export class TestEtcd {
  members: EtcdMemberInfo[];
  failObserve = false;
  constructor(names: string[]) {
    this.members = names.map((name, i) => ({
      id: String(1000 + i),
      name,
      peerURLs: [],
      clientURLs: [],
      isLearner: false,
    }));
  }
  add(name: string): void {
    this.members.push({
      id: String(2000 + this.members.length),
      name,
      peerURLs: [],
      clientURLs: [],
      isLearner: false,
    });
  }
  async observe(): Promise<EtcdView> {
    if (this.failObserve) throw new Error('etcd: connection refused');
    return { members: [...this.members], statuses: [], leaderId: this.members[0]?.id, healthy: [] };
  }
}

type Mode = 'nodes' | 'stuck-provisioned';

/** The controllers' stand-in; `stop()` ends the loop. */
export function standInControllers(
  m: TestMgmt,
  o: { etcd?: TestEtcd; audit?: boolean; mode?: Mode; intervalMs?: number } = {},
) {
  const { req, api } = m;
  const ns = api.names.namespace;
  const capi = `/apis/cluster.x-k8s.io/v1beta2/namespaces/${ns}`;
  let stopped = false;
  let n = 0;
  const log: string[] = [];
  const machine = async (name: string, labels: Record<string, string>) => {
    await req.request('POST', `${capi}/machines`, {
      body: {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: {
          name,
          namespace: ns,
          labels: { 'cluster.x-k8s.io/cluster-name': api.names.cluster, ...labels },
        },
        spec: {
          clusterName: api.names.cluster,
          bootstrap: { dataSecretName: `${name}-bootstrap` },
          infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'ProxmoxMachine', name },
        },
      },
    });
    log.push(`created Machine ${name}`);
  };
  const pass = async () => {
    const tcp = (await req.request(
      'GET',
      `/apis/controlplane.cluster.x-k8s.io/v1alpha3/namespaces/${ns}/taloscontrolplanes/${api.names.controlPlane}`,
    )) as KubeObject;
    const unpaused = tcp.metadata.annotations?.['cluster.x-k8s.io/paused'] === undefined;
    const cps = await api.machines({ controlPlane: true });
    if (unpaused && o.audit && o.etcd && cps.length > 0 && cps.every((x) => nodeRefName(x))) {
      const named = new Set(cps.map((x) => nodeRefName(x)!.toLowerCase()));
      const gone = o.etcd.members.filter((x) => !named.has(x.name.toLowerCase()));
      o.etcd.members = o.etcd.members.filter((x) => named.has(x.name.toLowerCase()));
      for (const g of gone) log.push(`audit removed ${g.name}`);
    }
    if (unpaused && ((tcp.spec?.['replicas'] as number) ?? 0) > cps.length)
      await machine(`${api.names.controlPlane}-${String(++n).padStart(5, 'x')}`, {
        'cluster.x-k8s.io/control-plane': '',
      });
    for (const md of api.names.machineDeployments) {
      const want = (await api.machineDeploymentReplicas(md.name)) ?? 0;
      const have = await api.machines({ machineDeployment: md.name });
      if (want > have.length)
        await machine(`${md.name}-${String(++n).padStart(5, 'y')}`, { [DEPLOYMENT_NAME_LABEL]: md.name });
    }
    const all = [...(await api.machines({ controlPlane: true }))];
    for (const md of api.names.machineDeployments)
      all.push(...(await api.machines({ machineDeployment: md.name })));
    for (const x of all) {
      if (nodeRefName(x)) continue;
      const name = x.metadata.name;
      const status = `${capi}/machines/${name}/status`;
      if (o.mode === 'stuck-provisioned') {
        if (x.status?.['phase'] !== 'Provisioned')
          await req.request('PATCH', status, {
            body: { status: { phase: 'Provisioned' } },
            contentType: 'application/merge-patch+json',
          });
        continue;
      }
      const cp = x.metadata.labels?.['cluster.x-k8s.io/control-plane'] !== undefined;
      await req.request('POST', '/api/v1/nodes', {
        body: {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name, labels: cp ? { 'node-role.kubernetes.io/control-plane': '' } : {} },
          status: {
            addresses: [
              { type: 'Hostname', address: name },
              { type: 'InternalIP', address: `10.20.0.${100 + all.indexOf(x)}` },
            ],
            nodeInfo: { osImage: 'Talos (v1.12.0)' },
          },
        },
      });
      if (cp) o.etcd?.add(name);
      await req.request('PATCH', status, {
        body: { status: { phase: 'Running', nodeRef: { name } } },
        contentType: 'application/merge-patch+json',
      });
      log.push(`Node ${name} registered`);
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await pass().catch((e: unknown) => log.push(`error ${(e as Error).message}`));
      await new Promise((r) => setTimeout(r, o.intervalMs ?? 30));
    }
  })();
  return {
    log,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
