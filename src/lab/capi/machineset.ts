/**
 * The lab's MachineSet preflight (capi.md H5) — a lab, not Cluster API: scaling a
 * MachineDeployment up creates its Machines only when the preflight checks pass. While the
 * control plane "is provisioning" (the TalosControlPlane has no status.version: none of its
 * Machines exists yet, as after an adoption) new Machines are on hold, unless the MachineDeployment
 * carries the skip annotation with ControlPlaneIsStable or All.
 */
import type { KubeRequester } from '../../adapters/kube/request.js';
import { CLUSTER_NAME_LABEL, SKIP_PREFLIGHT_ANNOTATION } from '../../capi/view.js';
import type { KubeObject } from '../../snapshot/model.js';

export type ScaleOutcome =
  | { kind: 'scaled'; created: string[] }
  | { kind: 'held'; why: string }
  | { kind: 'nothing-to-do' };

const CAPI = '/apis/cluster.x-k8s.io/v1beta2';
const TCP = '/apis/controlplane.cluster.x-k8s.io/v1alpha3';
const DEPLOYMENT_LABEL = 'cluster.x-k8s.io/deployment-name';

function skipsControlPlaneCheck(md: KubeObject): boolean {
  const v = md.metadata.annotations?.[SKIP_PREFLIGHT_ANNOTATION] ?? '';
  return v.split(',').some((x) => x.trim() === 'ControlPlaneIsStable' || x.trim() === 'All');
}

/**
 * Why the preflight holds new Machines of `md`, or undefined when it lets them be created: the
 * control plane "is provisioning" (its TalosControlPlane has no status.version) and `md` does not
 * skip that check.
 */
export async function preflightHold(
  api: KubeRequester,
  namespace: string,
  md: KubeObject,
): Promise<string | undefined> {
  if (skipsControlPlaneCheck(md)) return undefined;
  const cluster = String(md.spec?.['clusterName'] ?? '');
  const c = (await api.request('GET', `${CAPI}/namespaces/${namespace}/clusters/${cluster}`)) as KubeObject;
  const tcpName = (c.spec?.['controlPlaneRef'] as { name?: string } | undefined)?.name ?? '';
  const tcp = (await api.request(
    'GET',
    `${TCP}/namespaces/${namespace}/taloscontrolplanes/${tcpName}`,
  )) as KubeObject;
  if (typeof tcp.status?.['version'] !== 'string')
    return `ControlPlaneIsProvisioning: TalosControlPlane ${tcpName} has no status.version`;
  return undefined;
}

export async function reconcileMachineDeployment(
  api: KubeRequester,
  namespace: string,
  name: string,
): Promise<ScaleOutcome> {
  const md = (await api.request(
    'GET',
    `${CAPI}/namespaces/${namespace}/machinedeployments/${name}`,
  )) as KubeObject;
  const cluster = String(md.spec?.['clusterName'] ?? '');
  const have = (
    (await api.request('GET', `${CAPI}/namespaces/${namespace}/machines`, {
      query: { labelSelector: `${DEPLOYMENT_LABEL}=${name}` },
    })) as { items: KubeObject[] }
  ).items;
  const want = Number(md.spec?.['replicas'] ?? 0);
  if (have.length >= want) return { kind: 'nothing-to-do' };
  const hold = await preflightHold(api, namespace, md);
  if (hold) return { kind: 'held', why: hold };
  const template = md.spec?.['template'] as { spec: Record<string, unknown> };
  const created: string[] = [];
  for (let i = have.length; i < want; i++) {
    const mName = `${name}-${i}`;
    await api.request('POST', `${CAPI}/namespaces/${namespace}/machines`, {
      body: {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Machine',
        metadata: {
          name: mName,
          namespace,
          labels: { [CLUSTER_NAME_LABEL]: cluster, [DEPLOYMENT_LABEL]: name },
        },
        spec: { ...template.spec, clusterName: cluster, bootstrap: { dataSecretName: mName } },
      },
    });
    created.push(mName);
  }
  return { kind: 'scaled', created };
}
