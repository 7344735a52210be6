/** The nightly db-backup CronJob in `shop`, and the Job (with its completed pod) it created last night. */
import { nodeByName } from '../cluster.js';
import { type K8s, type Obj, ownerRef } from '../objects.js';
import { makePod } from '../pod.js';
import { template } from '../pod-template.js';
import { at, suffix, uidFor } from '../seed.js';
import type { Workloads } from './workloads.js';

export function addDbBackup(w: Workloads): void {
  const scheduled = Date.parse('2026-11-30T02:15:00Z');
  const finished = '2026-11-30T02:22:14Z';
  const backupTemplate = template(
    { 'app.kubernetes.io/name': 'db-backup' },
    {
      containers: [
        {
          args: ['--host=postgres-0.postgres', '--target=s3://backups-lab/shop'],
          image: 'registry.lab.example/platform/pg-backup:1.4.2',
          name: 'backup',
          resources: { requests: { cpu: '200m', memory: '256Mi' } },
        },
      ],
      restartPolicy: 'OnFailure',
    },
  );
  const cron: K8s = {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: w.alloc.meta('CronJob', 'db-backup', 'shop', '2025-03-10T09:00:00Z', { generation: 2 }),
    spec: {
      concurrencyPolicy: 'Forbid',
      failedJobsHistoryLimit: 1,
      jobTemplate: {
        metadata: { creationTimestamp: null },
        spec: { backoffLimit: 2, template: backupTemplate },
      },
      schedule: '15 2 * * *',
      successfulJobsHistoryLimit: 3,
      suspend: false,
    },
    status: { lastScheduleTime: at(scheduled), lastSuccessfulTime: finished },
  };
  w.cronjobs.push(cron);
  const jobName = `db-backup-${scheduled / 60_000}`;
  const jobUid = uidFor(`Job/shop/${jobName}`);
  const jobLabels = {
    'app.kubernetes.io/name': 'db-backup',
    'batch.kubernetes.io/controller-uid': jobUid,
    'batch.kubernetes.io/job-name': jobName,
    'controller-uid': jobUid,
    'job-name': jobName,
  };
  const jobTpl = structuredClone(backupTemplate) as { metadata: Obj };
  jobTpl.metadata['labels'] = jobLabels;
  const jobStart = at(scheduled + 1000);
  const complete = (type: string) => ({
    lastProbeTime: finished,
    lastTransitionTime: finished,
    message: 'Reached expected number of succeeded pods',
    reason: 'CompletionsReached',
    status: 'True',
    type,
  });
  const job: K8s = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: w.alloc.meta('Job', jobName, 'shop', jobStart, {
      annotations: { 'batch.kubernetes.io/cronjob-scheduled-timestamp': at(scheduled) },
      generation: 1,
      labels: jobLabels,
      ownerReferences: [ownerRef(cron)],
    }),
    spec: {
      backoffLimit: 2,
      completionMode: 'NonIndexed',
      completions: 1,
      manualSelector: false,
      parallelism: 1,
      podReplacementPolicy: 'TerminatingOrFailed',
      selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': jobUid } },
      suspend: false,
      template: jobTpl,
    },
    status: {
      completionTime: finished,
      conditions: [complete('SuccessCriteriaMet'), complete('Complete')],
      ready: 0,
      startTime: jobStart,
      succeeded: 1,
      terminating: 0,
      uncountedTerminatedPods: {},
    },
  };
  w.jobs.push(job);
  w.pods.push(
    makePod(w.alloc, {
      namespace: 'shop',
      name: `${jobName}-${suffix(`jobpod/${jobName}`, 5)}`,
      template: jobTpl,
      node: nodeByName('worker-5'),
      created: at(scheduled + 1500),
      owner: job,
      phase: 'Succeeded',
    }),
  );
}
