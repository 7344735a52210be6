/**
 * The application Deployments: frontend, api and checkout in `shop`, wiki in `apps`. Two are traps:
 * checkout's PDB allows no disruption, wiki has one replica and no PDB.
 */
import type { Obj } from '../objects.js';
import { template } from '../pod-template.js';
import { addDeployment } from './deployment.js';
import { addPdb, type Budget } from './pdb.js';
import type { Workloads } from './workloads.js';

export function addApps(w: Workloads): void {
  addApp(w, {
    namespace: 'shop',
    name: 'frontend',
    partOf: 'shop',
    image: 'registry.lab.example/shop/frontend:2.14.1',
    port: 8080,
    cpu: '200m',
    memory: '256Mi',
    nodes: ['worker-1', 'worker-2', 'cp-1'],
    created: '2025-03-04T10:12:00Z',
    podsCreated: '2026-11-18T13:05:22Z',
    revision: 14,
    oldRevisions: 1,
    container: { volumeMounts: [{ mountPath: '/var/cache/frontend', name: 'cache' }] },
    volumes: [{ emptyDir: { sizeLimit: '1Gi' }, name: 'cache' }],
    pdb: { maxUnavailable: 1 },
  });
  addApp(w, {
    namespace: 'shop',
    name: 'api',
    partOf: 'shop',
    image: 'registry.lab.example/shop/api:3.8.0',
    port: 8080,
    cpu: '500m',
    memory: '512Mi',
    nodes: ['worker-2', 'worker-3', 'cp-2'],
    created: '2025-03-04T10:12:00Z',
    podsCreated: '2026-11-18T13:09:47Z',
    revision: 21,
    container: {
      env: [
        { name: 'DATABASE_HOST', value: 'postgres-0.postgres.shop.svc.cluster.local' },
        { name: 'CHECKOUT_URL', value: 'http://checkout.shop.svc.cluster.local:8080' },
      ],
    },
    pdb: { minAvailable: 2 },
  });
  // The trap: minAvailable equals replicas, so no voluntary eviction is ever allowed and drains hang.
  addApp(w, {
    namespace: 'shop',
    name: 'checkout',
    partOf: 'shop',
    image: 'registry.lab.example/shop/checkout:1.22.3',
    port: 8080,
    cpu: '250m',
    memory: '384Mi',
    nodes: ['worker-1', 'worker-4'],
    created: '2025-05-19T08:40:00Z',
    podsCreated: '2026-11-20T16:44:03Z',
    revision: 9,
    pdb: { minAvailable: 2 },
  });
  // The trap: one replica and no PDB, so draining its node is an outage.
  addApp(w, {
    namespace: 'apps',
    name: 'wiki',
    partOf: 'wiki',
    image: 'ghcr.io/requarks/wiki:2.5.303',
    port: 3000,
    cpu: '100m',
    memory: '512Mi',
    nodes: ['cp-3'],
    created: '2025-06-02T11:00:00Z',
    podsCreated: '2026-11-02T07:15:31Z',
    revision: 5,
    container: {
      env: [
        { name: 'DB_TYPE', value: 'postgres' },
        { name: 'DB_HOST', value: 'postgres-0.postgres.shop.svc.cluster.local' },
        { name: 'DB_NAME', value: 'wiki' },
      ],
    },
  });
}

interface AppDef {
  namespace: string;
  name: string;
  /** `app.kubernetes.io/part-of`. */
  partOf: string;
  image: string;
  port: number;
  cpu: string;
  memory: string;
  /** One replica per entry, on that node. */
  nodes: string[];
  created: string;
  podsCreated: string;
  revision: number;
  oldRevisions?: number;
  /** Extra fields of the app container (env, volumeMounts). */
  container?: Obj;
  volumes?: Obj[];
  /** A PDB over all replicas, created with the Deployment. */
  pdb?: Budget;
}

/** A Deployment of one hardened HTTP container, and its PDB if it has one. */
function addApp(w: Workloads, d: AppDef): void {
  const labels = { 'app.kubernetes.io/name': d.name, 'app.kubernetes.io/part-of': d.partOf };
  const selector = { 'app.kubernetes.io/name': d.name };
  addDeployment(w, {
    namespace: d.namespace,
    name: d.name,
    labels,
    selector,
    nodes: d.nodes,
    created: d.created,
    podsCreated: d.podsCreated,
    revision: d.revision,
    oldRevisions: d.oldRevisions,
    template: template(labels, {
      containers: [appContainer(d)],
      ...(d.volumes ? { volumes: d.volumes } : {}),
    }),
  });
  if (d.pdb) {
    const { namespace, name, created } = d;
    addPdb(w, { namespace, name, selector, budget: d.pdb, expected: d.nodes.length, created });
  }
}

function appContainer(d: AppDef): Obj {
  return {
    image: d.image,
    livenessProbe: { httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' }, periodSeconds: 10 },
    name: d.name,
    ports: [{ containerPort: d.port, name: 'http' }],
    readinessProbe: { httpGet: { path: '/ready', port: 'http', scheme: 'HTTP' }, periodSeconds: 5 },
    resources: { limits: { memory: d.memory }, requests: { cpu: d.cpu, memory: d.memory } },
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: 10001,
    },
    ...d.container,
  };
}
