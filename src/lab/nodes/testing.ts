/** Object builders for the pure tests of the nodes controller. */
import type { KObj } from '../apiserver/object.js';
import type { World } from './world.js';

export function node(
  name: string,
  opts: {
    cpu?: string;
    memory?: string;
    pods?: string;
    labels?: Record<string, string>;
    taints?: unknown[];
    unschedulable?: boolean;
    ready?: boolean;
    podCIDR?: string;
    ip?: string;
  } = {},
): KObj {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      uid: `uid-${name}`,
      labels: { 'kubernetes.io/hostname': name, ...(opts.labels ?? {}) },
    },
    spec: {
      ...(opts.taints && { taints: opts.taints }),
      ...(opts.unschedulable && { unschedulable: true }),
      ...(opts.podCIDR && { podCIDR: opts.podCIDR }),
    },
    status: {
      allocatable: { cpu: opts.cpu ?? '2', memory: opts.memory ?? '4Gi', pods: opts.pods ?? '110' },
      addresses: [{ type: 'InternalIP', address: opts.ip ?? '127.0.30.9' }],
      conditions:
        opts.ready === false
          ? [{ type: 'Ready', status: 'False' }]
          : opts.ready
            ? [{ type: 'Ready', status: 'True' }]
            : [],
    },
  };
}

export function pod(
  name: string,
  opts: {
    ns?: string;
    node?: string;
    cpu?: string;
    memory?: string;
    labels?: Record<string, string>;
    owner?: KObj;
    ownerKind?: string;
    phase?: string;
    ready?: boolean;
    spec?: Record<string, unknown>;
    deletionTimestamp?: string;
    created?: string;
  } = {},
): KObj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: opts.ns ?? 'default',
      uid: `uid-${name}`,
      creationTimestamp: opts.created ?? '2026-01-01T00:00:00Z',
      labels: opts.labels ?? {},
      ...(opts.owner && {
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: opts.ownerKind ?? 'ReplicaSet',
            name: opts.owner.metadata.name ?? '',
            uid: opts.owner.metadata.uid ?? '',
            controller: true,
          },
        ],
      }),
      ...(opts.deletionTimestamp && { deletionTimestamp: opts.deletionTimestamp }),
    },
    spec: {
      containers: [
        {
          name: 'c',
          image: 'img',
          resources: {
            requests: { ...(opts.cpu && { cpu: opts.cpu }), ...(opts.memory && { memory: opts.memory }) },
          },
        },
      ],
      ...(opts.node && { nodeName: opts.node }),
      ...(opts.spec ?? {}),
    },
    status: {
      phase: opts.phase ?? 'Pending',
      ...(opts.ready !== undefined && {
        conditions: [{ type: 'Ready', status: opts.ready ? 'True' : 'False' }],
      }),
    },
  };
}

export function world(parts: Partial<World> = {}): World {
  return {
    now: Date.parse('2026-01-01T00:10:00Z'),
    nodes: [],
    pods: [],
    deployments: [],
    replicasets: [],
    statefulsets: [],
    daemonsets: [],
    leases: [],
    ...parts,
  };
}

/** A lab API server on a MemoryStore with an admin client: for controller tests without etcd. */
export async function memoryApi(host: string): Promise<{
  server: import('../apiserver/server.js').LabApiServer;
  client: import('./client.js').LabKubeClient;
  dispose(): Promise<void>;
}> {
  const { createCA } = await import('../../pki/forge.js');
  const { LabApiServer, MemoryStore, issueClientCert, issueServingCert } = await import(
    '../apiserver/index.js'
  );
  const { LabKubeClient } = await import('./client.js');
  const ca = await createCA({ commonName: 'kubernetes', key: { algorithm: 'ECDSA', curve: 'P-256' } });
  const [serving, admin] = await Promise.all([
    issueServingCert(ca, { ipAddresses: [host] }),
    issueClientCert(ca, 'kubernetes-admin', ['system:masters']),
  ]);
  const server = await LabApiServer.start({
    host,
    port: 0,
    store: new MemoryStore(),
    tls: { certPem: serving.certPem, keyPem: serving.keyPem, clientCaPem: ca.certPem },
  });
  const client = new LabKubeClient({
    server: server.url,
    ca: ca.certPem,
    cert: admin.certPem,
    key: admin.keyPem,
  });
  return {
    server,
    client,
    async dispose() {
      client.close();
      await server.stop();
    },
  };
}
