/**
 * Item 4 of the kit: an identity for health probes. Load balancers and ferry's own availability
 * probe call /readyz through the endpoint; Talos ≤1.13 apiservers run with --anonymous-auth=false
 * (talos.md §4.1), so an unauthenticated probe gets 401 and marks Talos backends down
 * (blockers.md apiserver.anonymous-auth-dependents). A token that may read only the health paths
 * works on kubeadm and Talos apiservers alike: both verify it with the same sa.key.
 */
import { stringify } from 'yaml';
import type { Artifact, GeneratorResult } from './artifact.js';
import type { GenerateContext, Generator } from './context.js';

export const PROBE_NAMESPACE = 'kube-system';
export const PROBE_NAME = 'ferry-health-probe';
/** The paths the issue names; nothing else is granted. */
export const PROBE_PATHS = ['/readyz', '/readyz/*', '/livez', '/livez/*', '/healthz'] as const;

export const probeRbacGenerator: Generator = { name: 'probe-rbac', generate: generateProbeRbac };

export function generateProbeRbac(ctx: GenerateContext): GeneratorResult {
  const labels = { 'app.kubernetes.io/name': PROBE_NAME, 'app.kubernetes.io/managed-by': 'ferry' };
  const docs: Record<string, unknown>[] = [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: PROBE_NAME, namespace: PROBE_NAMESPACE, labels },
    },
    {
      // A long-lived token Secret: the token controller fills in `data.token`; nothing secret is in this file.
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/service-account-token',
      metadata: {
        name: `${PROBE_NAME}-token`,
        namespace: PROBE_NAMESPACE,
        labels,
        annotations: { 'kubernetes.io/service-account.name': PROBE_NAME },
      },
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: PROBE_NAME, labels },
      rules: [{ nonResourceURLs: [...PROBE_PATHS], verbs: ['get'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: PROBE_NAME, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: PROBE_NAME },
      subjects: [{ kind: 'ServiceAccount', name: PROBE_NAME, namespace: PROBE_NAMESPACE }],
    },
  ];
  const endpoint = ctx.facts.cluster.controlPlaneEndpoint.value?.url ?? 'https://ENDPOINT:6443';
  const header = [
    '# Health-probe identity: a ServiceAccount whose token may GET only the apiserver health paths.',
    '# Apply before the first Talos control plane joins:  kubectl apply -f rbac/health-probe.yaml',
    '# Read the token (it is a credential: keep it out of logs and tickets):',
    `#   kubectl -n ${PROBE_NAMESPACE} get secret ${PROBE_NAME}-token -o jsonpath='{.data.token}' | base64 -d > probe.token`,
    '# Point a probe at it:',
    `#   curl --cacert ca.crt -H "Authorization: Bearer $(cat probe.token)" ${endpoint}/readyz`,
    '#   haproxy: option httpchk; http-check send meth GET uri /readyz hdr Authorization "Bearer <token>"',
    ...ctx.generatedBy.map((l) => `# ${l}`),
    '',
  ].join('\n');
  const artifact: Artifact = {
    path: 'rbac/health-probe.yaml',
    content: header + docs.map((d) => stringify(d, { lineWidth: 0 })).join('---\n'),
    mode: 0o644,
    purpose:
      'ServiceAccount, token Secret, ClusterRole and binding for authenticated /readyz, /livez, /healthz probes',
    step: 15,
    provenance: {
      'ClusterRole.rules': [
        {
          kind: 'derived',
          from: ctx.facts.apiserver.anonymousAuth.provenance,
          note: 'Talos ≤1.13 apiservers refuse anonymous requests (--anonymous-auth=false); probes need an identity',
        },
      ],
    },
    secret: false,
  };
  return { kind: 'ok', artifacts: [artifact], notes: [] };
}
