/** What a running lab serves right now, for `ferry lab status`: /readyz and node readiness. */
import type { KObj } from './apiserver/object.js';
import type { LabInfo } from './cluster.js';
import { probeReadyz } from './lb/index.js';
import { credentialsFromKubeconfig, LabKubeClient } from './nodes/client.js';
import { isNodeReady } from './nodes/world.js';

export type LiveStatus = {
  endpoint: string;
  apiServers: { node: string; url: string; readyz: string }[];
  nodes: string;
};

/** /readyz of the endpoint and of each instance, and node readiness, as the lab serves them now. */
export async function liveStatus(lab: LabInfo): Promise<LiveStatus> {
  const client = await LabKubeClient.fromKubeconfig(lab.kubeconfig, { timeoutMs: 3_000 }).catch(
    () => undefined,
  );
  const tls = { caPem: await caOf(lab) };
  const addr = (url: string) => new URL(url).host;
  const show = (r: { ok: boolean; detail: string }) => (r.ok ? 'ok' : `failing (${r.detail})`);
  const endpoint = show(await probeReadyz(addr(lab.endpoint.url), tls, 2_000));
  const apiServers = await Promise.all(
    lab.apiServers.map(async (a) => ({ ...a, readyz: show(await probeReadyz(addr(a.url), tls, 2_000)) })),
  );
  let nodes = 'unknown';
  if (client) {
    try {
      const list = await client.list<KObj>('/api/v1/nodes');
      nodes = `${list.filter(isNodeReady).length}/${list.length} Ready`;
    } catch (err) {
      nodes = `cannot list: ${(err as Error).message}`;
    } finally {
      client.close();
    }
  }
  return { endpoint, apiServers, nodes };
}

/** The cluster CA, from the admin kubeconfig. */
async function caOf(lab: LabInfo): Promise<string> {
  try {
    return (await credentialsFromKubeconfig(lab.kubeconfig)).ca.toString();
  } catch {
    return '';
  }
}
