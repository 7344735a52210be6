/**
 * Reads a Cluster API management cluster for the snapshot's `mgmt` part: the CRDs of the
 * *.cluster.x-k8s.io groups, every object of each at its storage version, the Secrets of the
 * namespaces that hold Clusters (values dropped by snapshot/mgmt.ts before anything is kept) and
 * the controllers' Deployments (summarised by snapshot/mgmt-controllers.ts).
 * Fail closed: a list the server refuses stops the collection — a part missing its
 * TalosControlPlanes would let the audit pass what it never saw.
 */

import { FerryError } from '../../errors.js';
import { KubeApiError } from '../../ports/kube.js';
import { crdSummary, isCapiGroup, mgmtSnapshot } from '../../snapshot/mgmt.js';
import { controllerSummary } from '../../snapshot/mgmt-controllers.js';
import type { KubeObject, MgmtControllers, MgmtSnapshot } from '../../snapshot/model.js';
import { requireFileSync } from '../../util/input-file.js';
import { CRD_PATH, KubeClient } from '../kube/client.js';
import { loadKubeconfig } from '../kube/kubeconfig.js';
import { createRequester, type KubeRequester } from '../kube/request.js';

/** Objects per list request: a management cluster of many clusters is read in pages, not one answer. */
export const MGMT_PAGE_SIZE = 500;

async function list(
  t: KubeClient,
  path: string,
  what: string,
  pageSize: number,
): Promise<Record<string, unknown>[]> {
  try {
    return (await t.list(path, { pageSize })) as unknown as Record<string, unknown>[];
  } catch (cause) {
    throw new FerryError(
      'unreachable',
      `cannot list ${what} in the management cluster (${t.address} ${path})`,
      {
        remediation:
          'give --mgmt-kubeconfig a kubeconfig that may list the Cluster API objects and Secrets (cluster-admin on the management cluster)',
        cause,
      },
    );
  }
}

/** Every Cluster API object, CRDs and Secrets of the management cluster behind `req`. */
export async function readMgmt(
  req: KubeRequester,
  server: string,
  opts: { pageSize?: number } = {},
): Promise<MgmtSnapshot> {
  const t = KubeClient.of(req);
  const pageSize = opts.pageSize ?? MGMT_PAGE_SIZE;
  const crds = (await list(t, CRD_PATH, 'CustomResourceDefinitions', pageSize))
    .map((c) => ({ raw: c, summary: crdSummary(c) }))
    .filter((c) => c.summary && isCapiGroup(c.summary.group));
  const items: KubeObject[] = crds.map(
    (c) =>
      ({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        ...c.raw,
      }) as unknown as KubeObject,
  );
  for (const c of crds) {
    const s = c.summary!;
    const version = s.versions.find((v) => v.storage)?.name ?? s.versions.find((v) => v.served)?.name;
    const plural = ((c.raw['spec'] as { names?: { plural?: string } }).names?.plural ?? '').trim();
    if (!version || plural === '') continue;
    for (const o of await list(t, `/apis/${s.group}/${version}/${plural}`, `${s.kind} objects`, pageSize))
      items.push({ apiVersion: `${s.group}/${version}`, kind: s.kind, ...o } as unknown as KubeObject);
  }
  const namespaces = [
    ...new Set(
      items
        .filter((o) => o.kind === 'Cluster' && o.apiVersion.startsWith('cluster.x-k8s.io/'))
        .map((o) => o.metadata.namespace ?? 'default'),
    ),
  ].sort();
  for (const ns of namespaces)
    for (const o of await list(
      t,
      `/api/v1/namespaces/${encodeURIComponent(ns)}/secrets`,
      `Secrets in ${ns}`,
      pageSize,
    ))
      items.push({ apiVersion: 'v1', kind: 'Secret', ...o } as unknown as KubeObject);
  return mgmtSnapshot(items, { kind: 'api', server, path: '/apis' }, await controllers(t, pageSize));
}

const DEPLOYMENTS_PATH = '/apis/apps/v1/deployments';

/**
 * The controllers' Deployments, every namespace (the operator and each provider pick their own).
 * A list refused (403) or not served (404) is recorded as not observed, so that the audit skips
 * instead of reporting no single-replica controller; any other failure stops the collection.
 */
async function controllers(t: KubeClient, pageSize: number): Promise<MgmtControllers> {
  try {
    const items = await t.list(DEPLOYMENTS_PATH, { pageSize });
    return {
      kind: 'observed',
      deployments: items.flatMap((o) => {
        const c = controllerSummary({ ...o, apiVersion: 'apps/v1', kind: 'Deployment' });
        return c ? [c] : [];
      }),
    };
  } catch (cause) {
    if (cause instanceof KubeApiError && (cause.status === 403 || cause.status === 404))
      return {
        kind: 'not-observed',
        reason: cause.status === 403 ? 'forbidden' : 'not-served',
        message: `list deployments.apps: ${cause.serverMessage}`,
      };
    throw new FerryError(
      'unreachable',
      `cannot list Deployments in the management cluster (${t.address} ${DEPLOYMENTS_PATH})`,
      {
        remediation: 'give --mgmt-kubeconfig a kubeconfig that may list Deployments in every namespace',
        cause,
      },
    );
  }
}

/** `--mgmt-kubeconfig FILE [--mgmt-context NAME]`: the management cluster, read once. */
export async function readMgmtFromKubeconfig(file: string, context?: string): Promise<MgmtSnapshot> {
  requireFileSync(file, {
    flag: '--mgmt-kubeconfig',
    provide: 'pass --mgmt-kubeconfig the kubeconfig of the Cluster API management cluster',
  });
  const loaded = loadKubeconfig(file, context);
  // The collection's deadlines (adapters/kube/reader.ts): a list of many clusters is slow, not dead.
  return readMgmt(
    createRequester(loaded, { connectTimeoutMs: 5_000, idleTimeoutMs: 30_000, timeoutMs: 120_000 }),
    loaded.server,
  );
}
