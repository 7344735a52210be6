/** cp-1's audit log (JSON lines): the external load balancers' anonymous /healthz checks among ordinary traffic. */
import { CLUSTER, SNAPSHOT_AT } from './cluster.js';
import type { Obj } from './objects.js';
import { uidFor } from './seed.js';

export function auditLog(): string {
  const lines: string[] = [];
  const t0 = SNAPSHOT_AT - 120_000;
  const event = (ms: number, e: Obj): void => {
    const ts = new Date(ms).toISOString().replace('Z', '000Z');
    const done = new Date(ms + 2).toISOString().replace('Z', '000Z');
    lines.push(
      JSON.stringify({
        kind: 'Event',
        apiVersion: 'audit.k8s.io/v1',
        level: 'Metadata',
        auditID: uidFor(`audit/${lines.length}`),
        stage: 'ResponseComplete',
        ...e,
        requestReceivedTimestamp: ts,
        stageTimestamp: done,
      }),
    );
  };
  const anonymous = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
  const allowedBy = (binding: string, role: string, subject: string) => ({
    'authorization.k8s.io/decision': 'allow',
    'authorization.k8s.io/reason': `RBAC: allowed by ClusterRoleBinding "${binding}" of ClusterRole "${role}" to ${subject}`,
  });
  for (let i = 0; i < 6; i++) {
    for (const lb of CLUSTER.loadBalancers) {
      event(t0 + i * 2000 + (lb.name === 'lb-2' ? 700 : 0), {
        requestURI: '/healthz',
        verb: 'get',
        user: anonymous,
        sourceIPs: [lb.ip],
        userAgent: CLUSTER.healthCheckUserAgent,
        responseStatus: { metadata: {}, code: 200 },
        annotations: allowedBy('lb-healthcheck', 'lb-healthcheck', 'User "system:anonymous"'),
      });
    }
    if (i === 1) {
      event(t0 + i * 2000 + 300, {
        requestURI: '/api/v1/namespaces/kube-system/pods?limit=500',
        verb: 'list',
        user: {
          username: 'oidc:alice@lab.example',
          groups: ['oidc:platform-admins', 'system:authenticated'],
        },
        sourceIPs: ['10.20.8.31'],
        userAgent: 'kubectl/v1.32.3 (linux/amd64) kubernetes/32cc146',
        objectRef: { resource: 'pods', namespace: 'kube-system', apiVersion: 'v1' },
        responseStatus: { metadata: {}, code: 200 },
        annotations: {
          'authorization.k8s.io/decision': 'allow',
          'authorization.k8s.io/reason':
            'RBAC: allowed by ClusterRoleBinding "oidc-platform-admins" of ClusterRole "cluster-admin" to Group "oidc:platform-admins"',
        },
      });
    }
    if (i === 3) {
      event(t0 + i * 2000 + 1100, {
        requestURI: '/api/v1/nodes/worker-3/status?timeout=10s',
        verb: 'patch',
        user: { username: 'system:node:worker-3', groups: ['system:nodes', 'system:authenticated'] },
        sourceIPs: ['10.20.0.23'],
        userAgent: 'kubelet/v1.32.4 (linux/amd64) kubernetes/59526cd',
        objectRef: { resource: 'nodes', name: 'worker-3', apiVersion: 'v1', subresource: 'status' },
        responseStatus: { metadata: {}, code: 200 },
        annotations: { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' },
      });
    }
  }
  // A blackbox exporter probing /version anonymously as well.
  event(t0 + 12_500, {
    requestURI: '/version',
    verb: 'get',
    user: anonymous,
    sourceIPs: ['10.244.4.23'],
    userAgent: 'Go-http-client/1.1',
    responseStatus: { metadata: {}, code: 200 },
    annotations: allowedBy(
      'system:public-info-viewer',
      'system:public-info-viewer',
      'Group "system:unauthenticated"',
    ),
  });
  return `${lines.join('\n')}\n`;
}
