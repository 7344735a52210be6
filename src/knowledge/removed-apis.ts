/**
 * API versions the Kubernetes API server stops serving, per minor: an object written or applied
 * through one of them fails once the control plane reaches that minor. Source: the Kubernetes
 * "Deprecated API Migration Guide", section "Removed APIs by release"
 * (https://kubernetes.io/docs/reference/using-api/deprecation-guide/, read 2026-12; v1.32 is the
 * newest release it lists removals for). Each row names the version to move to, as the guide does.
 */

export interface RemovedApi {
  /** The minor that stops serving it ("1.25"). */
  removedIn: string;
  /** "batch/v1beta1" */
  apiVersion: string;
  kind: string;
  /** What to use instead; null when nothing replaces it (PodSecurityPolicy). */
  replacement: string | null;
}

const rows = (removedIn: string, apiVersion: string, kinds: string[], replacement: string | null) =>
  kinds.map((kind) => ({ removedIn, apiVersion, kind, replacement }));

export const REMOVED_APIS: readonly RemovedApi[] = [
  // v1.16
  ...rows('1.16', 'extensions/v1beta1', ['DaemonSet', 'Deployment', 'ReplicaSet'], 'apps/v1'),
  ...rows('1.16', 'apps/v1beta1', ['Deployment', 'StatefulSet'], 'apps/v1'),
  ...rows('1.16', 'apps/v1beta2', ['DaemonSet', 'Deployment', 'ReplicaSet', 'StatefulSet'], 'apps/v1'),
  ...rows('1.16', 'extensions/v1beta1', ['NetworkPolicy'], 'networking.k8s.io/v1'),
  ...rows('1.16', 'extensions/v1beta1', ['PodSecurityPolicy'], 'policy/v1beta1'),
  // v1.22
  ...rows(
    '1.22',
    'admissionregistration.k8s.io/v1beta1',
    ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'],
    'admissionregistration.k8s.io/v1',
  ),
  ...rows('1.22', 'apiextensions.k8s.io/v1beta1', ['CustomResourceDefinition'], 'apiextensions.k8s.io/v1'),
  ...rows('1.22', 'apiregistration.k8s.io/v1beta1', ['APIService'], 'apiregistration.k8s.io/v1'),
  ...rows('1.22', 'authentication.k8s.io/v1beta1', ['TokenReview'], 'authentication.k8s.io/v1'),
  ...rows(
    '1.22',
    'authorization.k8s.io/v1beta1',
    ['SubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectAccessReview'],
    'authorization.k8s.io/v1',
  ),
  ...rows('1.22', 'certificates.k8s.io/v1beta1', ['CertificateSigningRequest'], 'certificates.k8s.io/v1'),
  ...rows('1.22', 'coordination.k8s.io/v1beta1', ['Lease'], 'coordination.k8s.io/v1'),
  ...rows('1.22', 'extensions/v1beta1', ['Ingress'], 'networking.k8s.io/v1'),
  ...rows('1.22', 'networking.k8s.io/v1beta1', ['Ingress', 'IngressClass'], 'networking.k8s.io/v1'),
  ...rows(
    '1.22',
    'rbac.authorization.k8s.io/v1beta1',
    ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'],
    'rbac.authorization.k8s.io/v1',
  ),
  ...rows('1.22', 'scheduling.k8s.io/v1beta1', ['PriorityClass'], 'scheduling.k8s.io/v1'),
  ...rows(
    '1.22',
    'storage.k8s.io/v1beta1',
    ['CSIDriver', 'CSINode', 'StorageClass', 'VolumeAttachment'],
    'storage.k8s.io/v1',
  ),
  // v1.25
  ...rows('1.25', 'batch/v1beta1', ['CronJob'], 'batch/v1'),
  ...rows('1.25', 'discovery.k8s.io/v1beta1', ['EndpointSlice'], 'discovery.k8s.io/v1'),
  ...rows('1.25', 'events.k8s.io/v1beta1', ['Event'], 'events.k8s.io/v1'),
  ...rows('1.25', 'autoscaling/v2beta1', ['HorizontalPodAutoscaler'], 'autoscaling/v2'),
  ...rows('1.25', 'policy/v1beta1', ['PodDisruptionBudget'], 'policy/v1'),
  ...rows('1.25', 'policy/v1beta1', ['PodSecurityPolicy'], null),
  ...rows('1.25', 'node.k8s.io/v1beta1', ['RuntimeClass'], 'node.k8s.io/v1'),
  // v1.26
  ...rows(
    '1.26',
    'flowcontrol.apiserver.k8s.io/v1beta1',
    ['FlowSchema', 'PriorityLevelConfiguration'],
    'flowcontrol.apiserver.k8s.io/v1',
  ),
  ...rows('1.26', 'autoscaling/v2beta2', ['HorizontalPodAutoscaler'], 'autoscaling/v2'),
  // v1.27
  ...rows('1.27', 'storage.k8s.io/v1beta1', ['CSIStorageCapacity'], 'storage.k8s.io/v1'),
  // v1.29
  ...rows(
    '1.29',
    'flowcontrol.apiserver.k8s.io/v1beta2',
    ['FlowSchema', 'PriorityLevelConfiguration'],
    'flowcontrol.apiserver.k8s.io/v1',
  ),
  // v1.32
  ...rows(
    '1.32',
    'flowcontrol.apiserver.k8s.io/v1beta3',
    ['FlowSchema', 'PriorityLevelConfiguration'],
    'flowcontrol.apiserver.k8s.io/v1',
  ),
];

export const REMOVED_APIS_SOURCE = 'https://kubernetes.io/docs/reference/using-api/deprecation-guide/';
