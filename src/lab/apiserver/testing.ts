/**
 * Test support: a lab API server with a fresh CA and an admin kubeconfig, and helpers to read
 * the Status of a failed @kubernetes/client-node call. For tests and the lab's own fixtures.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { createCA, type Issued } from '../../pki/forge.js';
import { issueClientCert, issueServingCert, renderKubeconfig, writeKubeconfig } from './credentials.js';
import type { EvictionLog } from './eviction-log.js';
import { MemoryStore } from './memory-store.js';
import { LabApiServer } from './server.js';
import type { Status } from './status.js';
import type { Store } from './store.js';

export async function labCA(): Promise<Issued> {
  return createCA({ commonName: 'kubernetes', key: { algorithm: 'ECDSA', curve: 'P-256' } });
}

/** A kubeconfig for `server` whose user has a client certificate from `ca`. */
export async function clientKubeConfig(
  server: string,
  ca: Issued,
  user = 'kubernetes-admin',
  groups = ['kubeadm:cluster-admins'],
): Promise<{ kc: KubeConfig; yaml: string }> {
  const cert = await issueClientCert(ca, user, groups);
  const yaml = renderKubeconfig({ server, caPem: ca.certPem, certPem: cert.certPem, keyPem: cert.keyPem });
  const kc = new KubeConfig();
  kc.loadFromString(yaml);
  return { kc, yaml };
}

export type LabApiFixture = {
  server: LabApiServer;
  store: Store;
  ca: Issued;
  kc: KubeConfig;
  kubeconfig: string;
  stop(): Promise<void>;
};

export async function startLabApi(
  opts: {
    host?: string;
    port?: number;
    store?: Store;
    ca?: Issued;
    name?: string;
    evictionLog?: EvictionLog;
    clock?: () => Date;
    /** More IP SANs for the serving certificate (a load balancer's address). */
    ipAddresses?: string[];
    compactionIntervalMs?: number;
    /** gitVersion /version answers (the server's default otherwise). */
    kubernetesVersion?: string;
  } = {},
): Promise<LabApiFixture> {
  const host = opts.host ?? '127.0.0.1';
  const ca = opts.ca ?? (await labCA());
  const serving = await issueServingCert(ca, { ipAddresses: [host, ...(opts.ipAddresses ?? [])] });
  const store = opts.store ?? new MemoryStore();
  const server = await LabApiServer.start({
    host,
    port: opts.port ?? 0,
    store,
    tls: { certPem: serving.certPem, keyPem: serving.keyPem, clientCaPem: ca.certPem },
    ...(opts.name !== undefined && { name: opts.name }),
    ...(opts.evictionLog !== undefined && { evictionLog: opts.evictionLog }),
    ...(opts.clock !== undefined && { clock: opts.clock }),
    ...(opts.compactionIntervalMs !== undefined && { compactionIntervalMs: opts.compactionIntervalMs }),
    ...(opts.kubernetesVersion !== undefined && { kubernetesVersion: opts.kubernetesVersion }),
  });
  const { kc, yaml } = await clientKubeConfig(server.url, ca);
  return { server, store, ca, kc, kubeconfig: yaml, stop: () => server.stop() };
}

/** Writes a kubeconfig file for the lab's admin (kubeadm's kubernetes-admin), as tools outside the process read it. */
export async function writeAdminKubeconfig(
  lab: Pick<LabApiFixture, 'server' | 'ca'>,
  path: string,
): Promise<void> {
  const admin = await issueClientCert(lab.ca, 'kubernetes-admin', ['kubeadm:cluster-admins']);
  await writeKubeconfig(path, {
    server: lab.server.url,
    caPem: lab.ca.certPem,
    certPem: admin.certPem,
    keyPem: admin.keyPem,
  });
}

/** The HTTP code and Status body of a failed client-node call (ApiException). */
export function apiStatus(err: unknown): { code: number; status: Status } {
  const e = err as { code?: number; body?: unknown };
  if (typeof e.code !== 'number') throw err;
  const status = (typeof e.body === 'string' ? JSON.parse(e.body) : e.body) as Status;
  return { code: e.code, status };
}

/** Awaits a call that must fail and returns its Status. */
export async function failure(p: Promise<unknown>): Promise<{ code: number; status: Status }> {
  try {
    await p;
  } catch (err) {
    return apiStatus(err);
  }
  throw new Error('expected the API call to fail');
}
