/**
 * The nightly fleet audit as Kubernetes objects for the management cluster: a namespace, a
 * ServiceAccount that gets no API token (the job talks to the fleet's clusters through their
 * kubeconfigs, never to its own), a volume for the reports, and a CronJob that runs
 * `ferry fleet audit` (one at a time, no retries, bounded, unprivileged, read-only root). For each
 * management cluster with a `backup`, a CronJob that runs `ferry mgmt backup` the same way, and a
 * ClusterRole granting only what that backup reads and patches, bound to the user its management
 * kubeconfig authenticates as (BACKUP_USER). The fleet file, its kubeconfigs, S3 credentials and
 * age recipients come from a Secret the operator creates with the printed command: no credential
 * is ever in these manifests. Pure.
 */
import { stringify } from 'yaml';
import { inputError } from '../errors.js';
import type { Fleet } from './config.js';

export interface ScheduleOptions {
  namespace: string;
  image: string;
  /** Cron syntax, in the controller's time zone unless `timeZone` is set. */
  schedule: string;
  timeZone?: string;
  /** Where the fleet file was read from, for the error messages. */
  fleetFile: string;
  /** Where the Secret's fleet.yaml (`fleetYaml`) is written, as the create command names it. */
  secretFleetFile: string;
  /** When each management cluster's backup runs (cron); default an hour before the audit's "0 2 * * *". */
  backupSchedule?: string;
}

/** The identity a scheduled backup's management kubeconfig authenticates as; the ClusterRole is bound to it. */
export const BACKUP_USER = 'ferry-mgmt-backup';

export const SECRET_NAME = 'ferry-fleet';
export const SECRET_MOUNT = '/etc/ferry/fleet';
export const REPORTS_MOUNT = '/var/lib/ferry/fleet-audit';
const PVC_NAME = 'ferry-fleet-reports';

export interface Schedule {
  /** The manifests, one multi-document YAML. */
  manifests: string;
  /** The fleet file the Secret carries: each kubeconfig as a key of the Secret. */
  fleetYaml: string;
  /** Secret key → the kubeconfig file on this machine it is made from. */
  secretFiles: { key: string; from: string }[];
  /** The command that creates the Secret (run where the kubeconfigs are). */
  createSecret: string;
  /** The container's command line, as the CronJob runs it. */
  command: string[];
  /** Each management cluster's backup CronJob: its name and its container's command line. */
  backups: { management: string; cronJob: string; command: string[] }[];
}

/** Single-quoted for a POSIX shell. */
const sq = (s: string) => (/^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export function fleetSchedule(fleet: Fleet, o: ScheduleOptions): Schedule {
  const secretFiles: Schedule['secretFiles'] = [];
  const clusters = fleet.clusters.map((c, i) => {
    const src = c.source;
    if (src.kind !== 'kubeconfig')
      throw inputError(
        `cluster "${c.name}" is read from a snapshot directory; a scheduled audit reads live clusters only`,
        { file: o.fleetFile, field: `clusters[${i}].snapshot` },
        'give it a kubeconfig, or leave it out of the fleet file you schedule',
      );
    const key = `${c.name}.kubeconfig`;
    secretFiles.push({ key, from: src.path });
    return {
      name: c.name,
      kubeconfig: key,
      ...(src.context !== undefined && { context: src.context }),
      ...(Object.keys(c.labels).length > 0 && { labels: c.labels }),
    };
  });
  // A management cluster's Clusters are discovered by the Job itself: its kubeconfig goes in the Secret.
  const management = fleet.management.map((m) => {
    const key = `${m.name}.management.kubeconfig`;
    secretFiles.push({ key, from: m.kubeconfig.path });
    return {
      name: m.name,
      kubeconfig: key,
      ...(m.kubeconfig.context !== undefined && { context: m.kubeconfig.context }),
      ...(m.namespace !== undefined && { namespace: m.namespace }),
      ...(m.selector !== undefined && { selector: m.selector }),
      ...(Object.keys(m.labels).length > 0 && { labels: m.labels }),
    };
  });
  const backups = fleet.management.flatMap((m, i) => {
    const b = m.backup;
    if (!b) return [];
    const field = (f: string) => ({ file: o.fleetFile, field: `management[${i}].backup.${f}` });
    // In the cluster there is no environment to take credentials or recipients from: the file says.
    if (b.credentialsFile === undefined)
      throw inputError(
        `management cluster "${m.name}": a scheduled backup needs backup.credentialsFile (the Job has no AWS environment)`,
        field('credentialsFile'),
        'name an AWS shared credentials file (0600) for the bucket, relative to the fleet file',
      );
    if (b.recipientsFile === undefined)
      throw inputError(
        `management cluster "${m.name}": a scheduled backup needs backup.recipientsFile (the age recipients it encrypts to)`,
        field('recipientsFile'),
        'name a file of age public keys (age1…), one per line, relative to the fleet file',
      );
    const credentials = `${m.name}.backup.s3-credentials`;
    const recipients = `${m.name}.backup.recipients`;
    secretFiles.push(
      { key: credentials, from: b.credentialsFile },
      { key: recipients, from: b.recipientsFile },
    );
    const command = [
      'ferry',
      'mgmt',
      'backup',
      '--to',
      b.url,
      '--kubeconfig',
      `${SECRET_MOUNT}/${m.name}.management.kubeconfig`,
      ...(m.kubeconfig.context !== undefined ? ['--context', m.kubeconfig.context] : []),
      '--recipients-file',
      `${SECRET_MOUNT}/${recipients}`,
      '--s3-credentials-file',
      `${SECRET_MOUNT}/${credentials}`,
      ...(b.profile !== undefined ? ['--s3-profile', b.profile] : []),
      ...(b.endpoint !== undefined ? ['--s3-endpoint', b.endpoint] : []),
      ...(b.region !== undefined ? ['--s3-region', b.region] : []),
      '--keep-daily',
      '14',
      '--keep-weekly',
      '8',
    ];
    return [{ management: m.name, cronJob: `ferry-mgmt-backup-${m.name}`.slice(0, 52), command }];
  });
  const fleetYaml = stringify({
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'Fleet',
    ...(clusters.length > 0 && { clusters }),
    ...(management.length > 0 && { management }),
  });
  const command = [
    'ferry',
    'fleet',
    'audit',
    `${SECRET_MOUNT}/fleet.yaml`,
    '--out',
    REPORTS_MOUNT,
    // Findings are the report's to show; a failed Job means the audit could not read a cluster.
    '--fail-on',
    'never',
  ];
  const labels = { 'app.kubernetes.io/name': 'ferry', 'app.kubernetes.io/component': 'fleet-audit' };
  const meta = (name: string) => ({ name, namespace: o.namespace, labels });
  const docs: Record<string, unknown>[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: o.namespace, labels } },
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: meta('ferry-fleet-audit'),
      automountServiceAccountToken: false,
    },
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: meta(PVC_NAME),
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    },
    cronJob(o, {
      name: 'ferry-fleet-audit',
      serviceAccount: 'ferry-fleet-audit',
      labels,
      schedule: o.schedule,
      command,
      deadlineSeconds: 4 * 3600,
      mounts: [{ name: 'reports', mountPath: REPORTS_MOUNT }],
      volumes: [{ name: 'reports', persistentVolumeClaim: { claimName: PVC_NAME } }],
    }),
    ...backupDocs(o, backups),
  ];
  const createSecret = [
    `kubectl -n ${sq(o.namespace)} create secret generic ${SECRET_NAME}`,
    `--from-file=${sq(`fleet.yaml=${o.secretFleetFile}`)}`,
    ...secretFiles.map((f) => `--from-file=${sq(`${f.key}=${f.from}`)}`),
    // Rendered here and created from the manifest: no last-applied copy of the data in an
    // annotation, as `kubectl apply` would keep.
    '--dry-run=client -o yaml | kubectl create -f -',
  ].join(' ');
  return {
    manifests: docs.map((d) => stringify(d)).join('---\n'),
    fleetYaml,
    secretFiles,
    createSecret,
    command,
    backups,
  };
}

interface CronJobSpec {
  name: string;
  serviceAccount: string;
  labels: Record<string, string>;
  schedule: string;
  command: string[];
  deadlineSeconds: number;
  mounts: Record<string, unknown>[];
  volumes: Record<string, unknown>[];
}

/** One at a time, no retries, bounded, unprivileged, read-only root, no API token; the Secret mounted read-only. */
function cronJob(o: ScheduleOptions, j: CronJobSpec): Record<string, unknown> {
  const { labels } = j;
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: j.name, namespace: o.namespace, labels },
    spec: {
      schedule: j.schedule,
      ...(o.timeZone !== undefined && { timeZone: o.timeZone }),
      concurrencyPolicy: 'Forbid',
      startingDeadlineSeconds: 3600,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
      jobTemplate: {
        metadata: { labels },
        spec: {
          backoffLimit: 0,
          activeDeadlineSeconds: j.deadlineSeconds,
          template: {
            metadata: { labels },
            spec: {
              serviceAccountName: j.serviceAccount,
              automountServiceAccountToken: false,
              restartPolicy: 'Never',
              securityContext: {
                runAsNonRoot: true,
                runAsUser: 65532,
                fsGroup: 65532,
                seccompProfile: { type: 'RuntimeDefault' },
              },
              containers: [
                {
                  name: labels['app.kubernetes.io/component'],
                  image: o.image,
                  command: j.command,
                  env: [{ name: 'HOME', value: '/tmp' }],
                  resources: {
                    requests: { cpu: '250m', memory: '512Mi' },
                    limits: { memory: '2Gi' },
                  },
                  securityContext: {
                    allowPrivilegeEscalation: false,
                    readOnlyRootFilesystem: true,
                    capabilities: { drop: ['ALL'] },
                  },
                  volumeMounts: [
                    { name: 'fleet', mountPath: SECRET_MOUNT, readOnly: true },
                    ...j.mounts,
                    { name: 'tmp', mountPath: '/tmp' },
                  ],
                },
              ],
              volumes: [
                { name: 'fleet', secret: { secretName: SECRET_NAME, defaultMode: 0o440 } },
                ...j.volumes,
                { name: 'tmp', emptyDir: {} },
              ],
            },
          },
        },
      },
    },
  };
}

/**
 * What `ferry mgmt backup --via api` asks of the management cluster, and nothing else: the CRDs
 * (to find the Cluster API kinds), every object of the Cluster API groups, the Secrets and
 * ConfigMaps they reference, namespaces, and the patch that pauses and unpauses Clusters and
 * ClusterClasses around the export.
 */
export const BACKUP_RULES = [
  { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['get', 'list'] },
  {
    apiGroups: [
      'cluster.x-k8s.io',
      'controlplane.cluster.x-k8s.io',
      'bootstrap.cluster.x-k8s.io',
      'infrastructure.cluster.x-k8s.io',
      'addons.cluster.x-k8s.io',
      'ipam.cluster.x-k8s.io',
      'runtime.cluster.x-k8s.io',
      'clusterctl.cluster.x-k8s.io',
    ],
    resources: ['*'],
    verbs: ['get', 'list'],
  },
  { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters', 'clusterclasses'], verbs: ['patch'] },
  { apiGroups: [''], resources: ['secrets', 'configmaps', 'namespaces'], verbs: ['get', 'list'] },
];

function backupDocs(o: ScheduleOptions, backups: Schedule['backups']): Record<string, unknown>[] {
  if (backups.length === 0) return [];
  const labels = { 'app.kubernetes.io/name': 'ferry', 'app.kubernetes.io/component': 'mgmt-backup' };
  return [
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: BACKUP_USER, namespace: o.namespace, labels },
      automountServiceAccountToken: false,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: BACKUP_USER, labels },
      rules: BACKUP_RULES,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: BACKUP_USER, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: BACKUP_USER },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: BACKUP_USER }],
    },
    ...backups.map((b) =>
      cronJob(o, {
        name: b.cronJob,
        serviceAccount: BACKUP_USER,
        labels: { ...labels, 'ferry.dev/management': b.management },
        schedule: o.backupSchedule ?? '0 1 * * *',
        command: b.command,
        deadlineSeconds: 3600,
        mounts: [],
        volumes: [],
      }),
    ),
  ];
}
