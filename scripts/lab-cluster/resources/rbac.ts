/** RBAC objects the audit looks at: who may reach the API without credentials. */
import type { Allocator } from '../allocator.js';
import { CLUSTER } from '../cluster.js';
import type { K8s, Obj } from '../objects.js';

const RBAC = 'rbac.authorization.k8s.io';

export function rbac(alloc: Allocator): K8s[] {
  const group = (name: string) => ({ apiGroup: RBAC, kind: 'Group', name });
  const user = (name: string) => ({ apiGroup: RBAC, kind: 'User', name });
  /** A binding of the (Cluster)Role with the binding's own name, as all of these are. */
  const binding = (
    kind: 'ClusterRoleBinding' | 'RoleBinding',
    namespace: string | undefined,
    name: string,
    created: string,
    subjects: Obj[],
    extra: Obj = {},
  ): K8s => ({
    apiVersion: `${RBAC}/v1`,
    kind,
    metadata: alloc.meta(kind, name, namespace, created, extra),
    roleRef: { apiGroup: RBAC, kind: kind === 'RoleBinding' ? 'Role' : 'ClusterRole', name },
    subjects,
  });
  const lbs = CLUSTER.loadBalancers.map((l) => `${l.name} (${l.ip})`).join(', ');
  return [
    // Bootstrap policy: every kubeadm cluster has it; health and version paths for anyone.
    binding(
      'ClusterRoleBinding',
      undefined,
      'system:public-info-viewer',
      '2025-02-11T09:14:30Z',
      [group('system:authenticated'), group('system:unauthenticated')],
      {
        annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
        labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
      },
    ),
    // Added for the external haproxy pair: `option httpchk GET /healthz` without credentials.
    {
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRole',
      metadata: alloc.meta('ClusterRole', 'lb-healthcheck', undefined, '2025-02-11T11:02:00Z', {
        labels: { 'app.kubernetes.io/part-of': 'lab-platform' },
      }),
      rules: [{ nonResourceURLs: ['/healthz', '/readyz', '/livez'], verbs: ['get'] }],
    },
    binding(
      'ClusterRoleBinding',
      undefined,
      'lb-healthcheck',
      '2025-02-11T11:02:00Z',
      [user('system:anonymous'), group('system:unauthenticated')],
      {
        annotations: {
          'lab.example/purpose': `HTTP health check of the API load balancers ${lbs} for VIP ${CLUSTER.vip}; they send no credentials`,
        },
        labels: { 'app.kubernetes.io/part-of': 'lab-platform' },
      },
    ),
    // kubeadm's: lets `kubeadm join` read kube-public/cluster-info before it has credentials.
    binding('RoleBinding', 'kube-public', 'kubeadm:bootstrap-signer-clusterinfo', '2025-02-11T09:14:34Z', [
      user('system:anonymous'),
    ]),
  ];
}
