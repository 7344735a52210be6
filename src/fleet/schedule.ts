/**
 * The nightly fleet audit as Kubernetes objects for the management cluster: a namespace, a
 * ServiceAccount that gets no API token (the job talks to the fleet's clusters through their
 * kubeconfigs, never to its own), a volume for the reports, and a CronJob that runs
 * `ferry fleet audit` (one at a time, no retries, bounded, unprivileged, read-only root). The
 * fleet file and its kubeconfigs come from a Secret the operator creates with the printed command:
 * no credential is ever in these manifests. Pure.
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
}

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
    {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: meta('ferry-fleet-audit'),
      spec: {
        schedule: o.schedule,
        ...(o.timeZone !== undefined && { timeZone: o.timeZone }),
        concurrencyPolicy: 'Forbid',
        startingDeadlineSeconds: 3600,
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 3,
        jobTemplate: {
          metadata: { labels },
          spec: {
            backoffLimit: 0,
            activeDeadlineSeconds: 4 * 3600,
            template: {
              metadata: { labels },
              spec: {
                serviceAccountName: 'ferry-fleet-audit',
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
                    name: 'fleet-audit',
                    image: o.image,
                    command,
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
                      { name: 'reports', mountPath: REPORTS_MOUNT },
                      { name: 'tmp', mountPath: '/tmp' },
                    ],
                  },
                ],
                volumes: [
                  { name: 'fleet', secret: { secretName: SECRET_NAME, defaultMode: 0o440 } },
                  { name: 'reports', persistentVolumeClaim: { claimName: PVC_NAME } },
                  { name: 'tmp', emptyDir: {} },
                ],
              },
            },
          },
        },
      },
    },
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
  };
}
