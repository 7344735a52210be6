/**
 * examples/lab-cluster served by a real lab API server: a MemoryStore behind a LabApiServer on
 * 127.0.0.1, loaded through the API with the objects of the files directory the way a cluster
 * would hold them (server-set fields stripped, owners re-pointed at the new uids, statuses posted
 * afterwards as kubelets and controllers would), plus an admin kubeconfig from the lab CA.
 *
 * The control planes' apiservers advertise 10.20.0.x addresses that exist nowhere here; each gets a
 * loopback TLS stand-in, and `fetchPeerCertificate` below maps the advertised address to it and
 * refuses anything off 127.0.0.0/8, so a snapshot test never dials the example's real addresses.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { isIPv4 } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as tls from 'node:tls';
import { parse as parseYaml } from 'yaml';
import { deriveFacts } from '../facts/derive.js';
import type { Issued } from '../pki/forge.js';
import { RESOURCE_TYPES, type ResourceKind, resourcePath } from '../ports/kube-kinds.js';
import { loadSnapshot } from '../snapshot/load.js';
import type { KubeObject, Snapshot } from '../snapshot/model.js';
import { type FetchPeerCertificate, fetchPeerCertificate, joinHostPort } from '../snapshot/tls.js';
import { issueClientCert, issueServingCert, writeKubeconfig } from './apiserver/credentials.js';
import { MemoryStore } from './apiserver/memory-store.js';
import type { KObj } from './apiserver/object.js';
import { LabApiServer } from './apiserver/server.js';
import {
  CompactedError,
  type ListOptions,
  type ListResult,
  type Store,
  type StoredObject,
  type StoreWatch,
  type WatchListener,
  type WriteResult,
} from './apiserver/store.js';
import { labCA } from './apiserver/testing.js';
import { LabApiError, LabKubeClient } from './nodes/client.js';

export const REPO = resolve(import.meta.dirname, '..', '..');
export const EXAMPLE = 'examples/lab-cluster';

/** A Secret in kube-system that is not a bootstrap token: its value must never reach a snapshot. */
export const OPAQUE_SECRET_VALUE = 'lab-opaque-secret-value-6f1d';

const ADVERTISE_ANNOTATION = 'kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint';

/** One list call the API server made on its store: where, and whether it was a continuation. */
export interface StoreListCall {
  prefix: string;
  continued: boolean;
  outcome: 'ok' | 'compacted';
}

/**
 * A Store that records list calls and can run a hook before one (to compact the store between
 * two pages of a client's list, as kube-apiserver's periodic compaction would).
 */
export class ObservedStore implements Store {
  readonly kind = 'memory' as const;
  readonly lists: StoreListCall[] = [];
  beforeList: ((prefix: string, continued: boolean) => Promise<void>) | undefined;

  constructor(readonly inner: MemoryStore) {}

  get(key: string): Promise<StoredObject | undefined> {
    return this.inner.get(key);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const continued = opts.startAfter !== undefined;
    await this.beforeList?.(prefix, continued);
    try {
      const r = await this.inner.list(prefix, opts);
      this.lists.push({ prefix, continued, outcome: 'ok' });
      return r;
    } catch (err) {
      if (err instanceof CompactedError) this.lists.push({ prefix, continued, outcome: 'compacted' });
      throw err;
    }
  }

  create(key: string, value: KObj): Promise<WriteResult> {
    return this.inner.create(key, value);
  }

  update(key: string, value: KObj, expectedModRevision: number): Promise<WriteResult> {
    return this.inner.update(key, value, expectedModRevision);
  }

  delete(key: string, expectedModRevision: number): Promise<WriteResult> {
    return this.inner.delete(key, expectedModRevision);
  }

  watch(prefix: string, afterRevision: number, listener: WatchListener): Promise<StoreWatch> {
    return this.inner.watch(prefix, afterRevision, listener);
  }

  revision(): Promise<number> {
    return this.inner.revision();
  }

  compact(revision: number): Promise<void> {
    return this.inner.compact(revision);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

export interface LabFilesCluster {
  dir: string;
  /** The files snapshot of examples/lab-cluster, as `ferry facts examples/lab-cluster` reads it. */
  files: Snapshot;
  server: LabApiServer;
  store: ObservedStore;
  /** Admin API client (the loader's), for writes a test makes while a snapshot runs. */
  client: LabKubeClient;
  ca: Issued;
  servingCertPem: string;
  /** Admin kubeconfig (client certificate from the lab CA), mode 0600. */
  kubeconfig: string;
  context: string;
  /** The bootstrap token's secret half, as loaded into the lab (and never to be seen again). */
  tokenSecret: string;
  /** Advertised apiserver address (host:port) → the certificate its loopback stand-in serves. */
  standInCerts: Map<string, string>;
  /** Every address the collector asked to handshake with, as asked. */
  dials: string[];
  /** Every address a handshake actually went to. */
  connections: string[];
  fetchPeerCertificate: FetchPeerCertificate;
  close(): Promise<void>;
}

export async function startLabFilesCluster(): Promise<LabFilesCluster> {
  const files = await loadSnapshot(EXAMPLE, { cwd: REPO });
  const dir = mkdtempSync(join(tmpdir(), 'ferry-lab-files-'));
  const ca = await labCA();
  const serving = await issueServingCert(ca, { ipAddresses: ['127.0.0.1'] });
  const store = new ObservedStore(new MemoryStore());
  // What /version answers comes from the cluster, as LabCluster does it.
  const kubernetesVersion = deriveFacts(files).cluster.kubernetesVersion.value;
  if (!kubernetesVersion) throw new Error(`${EXAMPLE}: no Kubernetes version to serve on /version`);
  // Compaction only when a test asks for it.
  const server = await LabApiServer.start({
    host: '127.0.0.1',
    port: 0,
    store,
    tls: { certPem: serving.certPem, keyPem: serving.keyPem, clientCaPem: ca.certPem },
    compactionIntervalMs: 0,
    kubernetesVersion,
  });
  const admin = await issueClientCert(ca, 'kubernetes-admin', ['kubeadm:cluster-admins']);
  const kubeconfig = join(dir, 'admin.conf');
  await writeKubeconfig(kubeconfig, {
    server: server.url,
    caPem: ca.certPem,
    certPem: admin.certPem,
    keyPem: admin.keyPem,
    clusterName: 'lab',
    userName: 'kubernetes-admin',
  });
  const client = new LabKubeClient({
    server: server.url,
    ca: ca.certPem,
    cert: admin.certPem,
    key: admin.keyPem,
  });
  const stopStandIns: (() => Promise<void>)[] = [];
  try {
    const tokenSecretObject = rawObject('resources/bootstrap-token.yaml');
    const tokenSecret = Buffer.from(String(tokenSecretObject.data?.['token-secret']), 'base64').toString(
      'utf8',
    );
    if (tokenSecret.length < 16)
      throw new Error('examples/lab-cluster: no token-secret in bootstrap-token.yaml');
    await loadIntoLab(client, objectsToLoad(files, tokenSecretObject));

    // A loopback TLS server for each advertised apiserver address, with a certificate for that address.
    const standIns = new Map<string, { host: string; port: number }>();
    const standInCerts = new Map<string, string>();
    for (const pod of files.resources.pods) {
      const advertised = pod.metadata.annotations?.[ADVERTISE_ANNOTATION];
      if (!advertised || standIns.has(advertised)) continue;
      const host = advertised.replace(/:\d+$/, '');
      const cert = await issueServingCert(ca, {
        ipAddresses: [host],
        dnsNames: [String(pod.spec?.nodeName)],
      });
      const tlsServer = tls.createServer({ cert: cert.certPem, key: cert.keyPem }, (s) => s.end());
      await new Promise<void>((r) => tlsServer.listen(0, '127.0.0.1', r));
      stopStandIns.push(() => new Promise<void>((r) => tlsServer.close(() => r())));
      standIns.set(advertised, { host: '127.0.0.1', port: (tlsServer.address() as AddressInfo).port });
      standInCerts.set(advertised, cert.certPem);
    }

    const dials: string[] = [];
    const connections: string[] = [];
    const loopbackOnly: FetchPeerCertificate = (host, port, opts) => {
      const asked = joinHostPort(host, port);
      dials.push(asked);
      const target = standIns.get(asked) ?? { host, port };
      if (!isIPv4(target.host) || !target.host.startsWith('127.')) {
        return Promise.reject(new Error(`test: refusing to dial ${asked}, which is not on 127.0.0.0/8`));
      }
      connections.push(joinHostPort(target.host, target.port));
      return fetchPeerCertificate(target.host, target.port, opts);
    };

    return {
      dir,
      files,
      server,
      store,
      client,
      ca,
      servingCertPem: serving.certPem,
      kubeconfig,
      context: 'kubernetes-admin@lab',
      tokenSecret,
      standInCerts,
      dials,
      connections,
      fetchPeerCertificate: loopbackOnly,
      async close() {
        client.resetConnections();
        await server.stop();
        await Promise.all(stopStandIns.map((stop) => stop()));
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await server.stop();
    await Promise.all(stopStandIns.map((stop) => stop()));
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

function rawObject(rel: string): KubeObject {
  return parseYaml(readFileSync(join(REPO, EXAMPLE, rel), 'utf8')) as KubeObject;
}

interface Load {
  kind: ResourceKind;
  object: KubeObject;
}

/**
 * Owners before what they own (Node → mirror pod, Deployment → ReplicaSet → Pod, CronJob → Job →
 * Pod, Service → EndpointSlice), namespaces first.
 */
const LOAD_ORDER: readonly ResourceKind[] = [
  'namespaces',
  'nodes',
  'configmaps',
  'secrets',
  'services',
  'endpointslices',
  'csidrivers',
  'storageclasses',
  'persistentvolumes',
  'poddisruptionbudgets',
  'deployments',
  'statefulsets',
  'daemonsets',
  'cronjobs',
  'replicasets',
  'jobs',
  'pods',
  'clusterrolebindings',
  'rolebindings',
];

/**
 * What goes into the lab: every object of the files snapshot, the bootstrap-token Secret as the
 * file holds it (with its token-secret, twice: it was `kubectl apply`-ed), and two objects a real
 * cluster has that the collector must leave out: an ordinary Secret in kube-system and a binding
 * without anonymous subjects.
 */
function objectsToLoad(files: Snapshot, tokenSecret: KubeObject): Load[] {
  const r = files.resources;
  const byKind: Partial<Record<ResourceKind, KubeObject[]>> = {
    namespaces: r.namespaces,
    nodes: r.nodes,
    configmaps: r.configmaps,
    secrets: [
      appliedWithKubectl(tokenSecret),
      {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'Opaque',
        metadata: { name: 'cloud-credentials', namespace: 'kube-system' },
        data: { password: Buffer.from(OPAQUE_SECRET_VALUE).toString('base64') },
      },
    ],
    services: r.services,
    endpointslices: r.endpointslices,
    csidrivers: r.csidrivers,
    storageclasses: r.storageclasses,
    persistentvolumes: r.persistentvolumes,
    poddisruptionbudgets: r.poddisruptionbudgets,
    deployments: r.deployments,
    statefulsets: r.statefulsets,
    daemonsets: r.daemonsets,
    cronjobs: r.cronjobs,
    replicasets: r.replicasets,
    jobs: r.jobs,
    pods: r.pods,
    clusterrolebindings: [
      ...r.anonymousBindings.filter((b) => b.kind === 'ClusterRoleBinding'),
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'kubeadm:cluster-admins' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'kubeadm:cluster-admins' }],
      },
    ],
    rolebindings: r.anonymousBindings.filter((b) => b.kind === 'RoleBinding'),
  };
  return LOAD_ORDER.flatMap((kind) => (byKind[kind] ?? []).map((object) => ({ kind, object })));
}

/** The object with the annotation `kubectl apply` leaves: a full copy of what was applied. */
function appliedWithKubectl(o: KubeObject): KubeObject {
  const { uid: _u, resourceVersion: _r, creationTimestamp: _c, ...meta } = o.metadata;
  const applied = JSON.stringify({ ...o, metadata: meta });
  return {
    ...o,
    metadata: {
      ...o.metadata,
      annotations: { ...o.metadata.annotations, 'kubectl.kubernetes.io/last-applied-configuration': applied },
    },
  };
}

const SERVER_SET = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'generation',
  'managedFields',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
];

/** Kinds whose status is written through /status by whoever owns it (kubelet, controllers). */
const STATUS_WRITTEN: ReadonlySet<ResourceKind> = new Set([
  'nodes',
  'pods',
  'services',
  'persistentvolumes',
  'poddisruptionbudgets',
  'deployments',
  'replicasets',
  'statefulsets',
  'daemonsets',
  'jobs',
  'cronjobs',
]);

async function loadIntoLab(client: LabKubeClient, loads: Load[]): Promise<void> {
  const newUid = new Map<string, string>();
  for (const { kind, object } of loads) {
    const ns = RESOURCE_TYPES[kind].namespaced ? object.metadata.namespace : undefined;
    const collection = resourcePath(kind, ns === undefined ? {} : { namespace: ns });
    const at = resourcePath(kind, { ...(ns !== undefined && { namespace: ns }), name: object.metadata.name });
    const body = structuredClone(object) as KObj;
    for (const f of SERVER_SET) delete body.metadata[f];
    delete body.status;
    const owners = body.metadata.ownerReferences;
    if (Array.isArray(owners)) {
      body.metadata.ownerReferences = owners.map((o) => ({
        ...o,
        uid: newUid.get(o.uid) ?? o.uid,
      }));
    }
    let current: KObj;
    try {
      current = await client.create<KObj>(collection, body);
    } catch (err) {
      // The server creates default, kube-system, kube-public and kube-node-lease itself at start.
      if (!(kind === 'namespaces' && err instanceof LabApiError && err.status === 409)) throw err;
      current = await client.get<KObj>(at);
    }
    if (object.metadata.uid) newUid.set(object.metadata.uid, String(current.metadata.uid));
    // Admission gives a new Node the not-ready taint; the node lifecycle controller lifts it.
    if (kind === 'nodes') current = await client.replace<KObj>(at, { ...current, spec: object.spec ?? {} });
    if (STATUS_WRITTEN.has(kind) && object.status !== undefined) {
      await client.replace(`${at}/status`, { ...current, status: object.status });
    }
  }
}
