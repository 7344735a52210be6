/** The postgres StatefulSet in `shop`: three members pinned to the "data" pool by a custom node label. */
import { NODE_POOL_LABEL, nodeByName } from '../cluster.js';
import type { K8s, Obj } from '../objects.js';
import { makePod } from '../pod.js';
import { template } from '../pod-template.js';
import { plus, suffix } from '../seed.js';
import { addPdb } from './pdb.js';
import type { Workloads } from './workloads.js';

export function addPostgres(w: Workloads): void {
  const pgLabels = { 'app.kubernetes.io/name': 'postgres', 'app.kubernetes.io/part-of': 'shop' };
  const pgSelector = { 'app.kubernetes.io/name': 'postgres' };
  const pgTemplate = template(pgLabels, {
    containers: [
      {
        env: [
          { name: 'PGDATA', value: '/var/lib/postgresql/data/pgdata' },
          {
            name: 'POSTGRES_PASSWORD',
            valueFrom: { secretKeyRef: { key: 'password', name: 'postgres-superuser' } },
          },
        ],
        image: 'docker.io/library/postgres:16.4',
        name: 'postgres',
        ports: [{ containerPort: 5432, name: 'postgres' }],
        readinessProbe: { exec: { command: ['pg_isready', '-U', 'postgres'] }, periodSeconds: 10 },
        resources: { limits: { memory: '2Gi' }, requests: { cpu: '500m', memory: '2Gi' } },
        volumeMounts: [{ mountPath: '/var/lib/postgresql/data', name: 'data' }],
      },
    ],
    nodeSelector: { [NODE_POOL_LABEL]: 'data' },
    securityContext: { fsGroup: 999 },
  });
  const pgRevision = `postgres-${suffix('sts/shop/postgres/4', 10)}`;
  const pgCreated = '2025-03-04T10:15:00Z';
  const postgres: K8s = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: w.alloc.meta('StatefulSet', 'postgres', 'shop', pgCreated, { generation: 4, labels: pgLabels }),
    spec: {
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain', whenScaled: 'Retain' },
      podManagementPolicy: 'OrderedReady',
      replicas: 3,
      revisionHistoryLimit: 10,
      selector: { matchLabels: pgSelector },
      serviceName: 'postgres',
      template: pgTemplate,
      updateStrategy: { rollingUpdate: { partition: 0 }, type: 'RollingUpdate' },
      volumeClaimTemplates: [
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { creationTimestamp: null, name: 'data' },
          spec: {
            accessModes: ['ReadWriteOnce'],
            resources: { requests: { storage: '20Gi' } },
            storageClassName: 'csi-cinder',
            volumeMode: 'Filesystem',
          },
          status: { phase: 'Pending' },
        },
      ],
    },
    status: {
      availableReplicas: 3,
      collisionCount: 0,
      currentReplicas: 3,
      currentRevision: pgRevision,
      observedGeneration: 4,
      readyReplicas: 3,
      replicas: 3,
      updateRevision: pgRevision,
      updatedReplicas: 3,
    },
  };
  w.statefulsets.push(postgres);
  ['worker-3', 'worker-4', 'worker-5'].forEach((nodeName, i) => {
    const tpl = structuredClone(pgTemplate) as { spec: Obj };
    tpl.spec['hostname'] = `postgres-${i}`;
    tpl.spec['subdomain'] = 'postgres';
    tpl.spec['volumes'] = [{ name: 'data', persistentVolumeClaim: { claimName: `data-postgres-${i}` } }];
    w.pods.push(
      makePod(w.alloc, {
        namespace: 'shop',
        name: `postgres-${i}`,
        template: tpl,
        node: nodeByName(nodeName),
        created: plus('2026-10-15T02:40:00Z', i * 95),
        owner: postgres,
        extraLabels: {
          'apps.kubernetes.io/pod-index': String(i),
          'controller-revision-hash': pgRevision,
          'statefulset.kubernetes.io/pod-name': `postgres-${i}`,
        },
      }),
    );
  });
  addPdb(w, {
    namespace: 'shop',
    name: 'postgres',
    selector: pgSelector,
    budget: { maxUnavailable: 1 },
    expected: 3,
    created: pgCreated,
  });
}
