/**
 * What a fleet reads of a management cluster: its Cluster API Clusters, and a workload cluster's
 * kubeconfig from the `<cluster>-kubeconfig` Secret Cluster API keeps (held in memory only).
 */
import { KUBECONFIG_SECRET_KEY, kubeconfigSecretName, kubeconfigSecretUnusable } from '../../capi/view.js';
import { isKubeApiError } from '../../ports/kube.js';
import { gateError } from '../../ports/stop.js';
import type { KubeObject } from '../../snapshot/model.js';
import type { KubeClient } from '../kube/client.js';
import { kubeconfigFromText, type LoadedKubeconfig } from '../kube/kubeconfig.js';

const CAPI = '/apis/cluster.x-k8s.io/v1beta2';

/** The Clusters of one namespace, or of all; a server that serves no Cluster kind says so. */
export async function listCapiClusters(
  client: KubeClient,
  o: { namespace?: string; selector?: string },
): Promise<KubeObject[]> {
  const path = `${CAPI}${o.namespace ? `/namespaces/${encodeURIComponent(o.namespace)}` : ''}/clusters`;
  try {
    return await client.list(path, { query: { labelSelector: o.selector } });
  } catch (err) {
    if (isKubeApiError(err, 404))
      throw gateError(
        `${client.address} serves no cluster.x-k8s.io/v1beta2 Clusters: is Cluster API (v1.11 or later) installed there?`,
        "check the management entry's kubeconfig and context name the management cluster (kubectl get clusters.cluster.x-k8s.io -A)",
        err,
      );
    throw err;
  }
}

/** The workload cluster's kubeconfig, as Cluster API holds it for its own controllers. */
export async function workloadKubeconfig(
  client: KubeClient,
  namespace: string,
  cluster: string,
): Promise<LoadedKubeconfig> {
  const name = kubeconfigSecretName(cluster);
  const shown = `Secret ${namespace}/${name}`;
  const secret = await client.get(
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`,
  );
  if (!secret)
    throw gateError(
      `${shown} does not exist: Cluster API writes it once the Cluster's control plane is initialized`,
      `look at the Cluster (kubectl -n ${namespace} describe clusters.cluster.x-k8s.io ${cluster}); a cluster ferry adopted gets it from \`ferry capi adopt\``,
    );
  const why = kubeconfigSecretUnusable(secret);
  if (why)
    throw gateError(
      `${shown} is no kubeconfig ferry can use: ${why}`,
      `look at ${shown} on the management cluster`,
    );
  const value = (secret as KubeObject & { data: Record<string, string> }).data[KUBECONFIG_SECRET_KEY]!;
  return kubeconfigFromText(Buffer.from(value, 'base64').toString('utf8'), shown);
}
