import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { FerryError } from '../errors.js';
import { parseFleet } from './config.js';
import { fleetSchedule, REPORTS_MOUNT, SECRET_MOUNT } from './schedule.js';

const fleet = parseFleet(
  'apiVersion: ferry.dev/v1alpha1\nkind: Fleet\nclusters:\n  - {name: prod-eu-1, kubeconfig: kube/prod eu.conf, context: admin, labels: {wave: "1"}}\n  - {name: lab, kubeconfig: /k/lab.conf}\n',
  'fleet.yaml',
  '/srv/fleet',
);
const opts = {
  namespace: 'ferry',
  image: 'registry.example.com/ferry:0.1.0',
  schedule: '0 2 * * *',
  fleetFile: 'fleet.yaml',
  secretFleetFile: '/out/fleet-secret/fleet.yaml',
};

describe('the scheduled fleet audit', () => {
  it('a CronJob one at a time, no retries, unprivileged, with no API token and no credential in it', () => {
    const s = fleetSchedule(fleet, opts);
    const docs = parseAllDocuments(s.manifests).map((d) => d.toJSON());
    expect(docs.map((d) => d.kind)).toEqual([
      'Namespace',
      'ServiceAccount',
      'PersistentVolumeClaim',
      'CronJob',
    ]);
    const cron = docs[3];
    expect(cron.spec).toMatchObject({ schedule: '0 2 * * *', concurrencyPolicy: 'Forbid' });
    expect(cron.spec.jobTemplate.spec.backoffLimit).toBe(0);
    const pod = cron.spec.jobTemplate.spec.template.spec;
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(docs[1].automountServiceAccountToken).toBe(false);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    const c = pod.containers[0];
    expect(c.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
    });
    expect(c.resources.requests).toEqual({ cpu: '250m', memory: '512Mi' });
    expect(c.command).toEqual([
      'ferry',
      'fleet',
      'audit',
      `${SECRET_MOUNT}/fleet.yaml`,
      '--out',
      REPORTS_MOUNT,
      '--fail-on',
      'never',
    ]);
    expect(pod.volumes[0]).toEqual({
      name: 'fleet',
      secret: { secretName: 'ferry-fleet', defaultMode: 0o440 },
    });
    // No Secret object and nothing that looks like key material.
    expect(s.manifests).not.toMatch(/^kind: Secret$|BEGIN |\btoken:|password/m);
  });

  it('the Secret carries the fleet with each kubeconfig as a key, and the command that makes it quotes paths', () => {
    const s = fleetSchedule(fleet, opts);
    expect(parse(s.fleetYaml).clusters).toEqual([
      { name: 'prod-eu-1', kubeconfig: 'prod-eu-1.kubeconfig', context: 'admin', labels: { wave: '1' } },
      { name: 'lab', kubeconfig: 'lab.kubeconfig' },
    ]);
    expect(s.createSecret).toBe(
      "kubectl -n ferry create secret generic ferry-fleet --from-file=fleet.yaml=/out/fleet-secret/fleet.yaml --from-file='prod-eu-1.kubeconfig=/srv/fleet/kube/prod eu.conf' --from-file=lab.kubeconfig=/k/lab.conf --dry-run=client -o yaml | kubectl create -f -",
    );
  });

  it('carries a management entry, its kubeconfig a key of the Secret, so the Job discovers the Clusters itself', () => {
    const withMgmt = parseFleet(
      'apiVersion: ferry.dev/v1alpha1\nkind: Fleet\nmanagement:\n  - {name: mgmt-eu, kubeconfig: kube/mgmt.conf, context: admin, namespace: fleet, selector: "env=prod", labels: {provider: capi}}\n',
      'fleet.yaml',
      '/srv/fleet',
    );
    const s = fleetSchedule(withMgmt, opts);
    const again = parseFleet(s.fleetYaml, 'fleet.yaml', SECRET_MOUNT);
    expect(again.clusters).toEqual([]);
    expect(again.management).toEqual([
      {
        name: 'mgmt-eu',
        kubeconfig: {
          path: `${SECRET_MOUNT}/mgmt-eu.management.kubeconfig`,
          shown: 'mgmt-eu.management.kubeconfig',
          context: 'admin',
        },
        namespace: 'fleet',
        selector: 'env=prod',
        labels: { provider: 'capi' },
      },
    ]);
    expect(s.secretFiles).toEqual([
      { key: 'mgmt-eu.management.kubeconfig', from: '/srv/fleet/kube/mgmt.conf' },
    ]);
  });

  it('refuses a snapshot entry, naming it', () => {
    const withSnapshot = parseFleet(
      'apiVersion: ferry.dev/v1alpha1\nkind: Fleet\nclusters:\n  - {name: a, snapshot: s}\n',
      'fleet.yaml',
      '/f',
    );
    let err: unknown;
    try {
      fleetSchedule(withSnapshot, opts);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).message).toContain('cluster "a" is read from a snapshot directory');
    expect((err as FerryError).location).toMatchObject({ field: 'clusters[0].snapshot' });
  });
});

describe('the scheduled management-cluster backup', () => {
  const withBackup = (backup: string) =>
    parseFleet(
      `apiVersion: ferry.dev/v1alpha1\nkind: Fleet\nmanagement:\n  - name: mgmt-eu\n    kubeconfig: kube/mgmt.conf\n    context: backup\n    backup: ${backup}\n  - {name: mgmt-us, kubeconfig: kube/us.conf}\n`,
      'fleet.yaml',
      '/srv/fleet',
    );
  const full =
    '{url: s3://mgmt-backups/eu, endpoint: "https://s3.eu.example", region: eu-central-1, profile: ops, credentialsFile: s3/creds, recipientsFile: age/recipients}';

  it('a CronJob per management cluster with a backup, as ferry mgmt backup takes it, credentials from the Secret', () => {
    const s = fleetSchedule(withBackup(full), { ...opts, backupSchedule: '30 0 * * *' });
    const docs = parseAllDocuments(s.manifests).map((d) => d.toJSON());
    expect(docs.map((d) => `${d.kind} ${d.metadata.name}`)).toEqual([
      'Namespace ferry',
      'ServiceAccount ferry-fleet-audit',
      'PersistentVolumeClaim ferry-fleet-reports',
      'CronJob ferry-fleet-audit',
      'ServiceAccount ferry-mgmt-backup',
      'ClusterRole ferry-mgmt-backup',
      'ClusterRoleBinding ferry-mgmt-backup',
      'CronJob ferry-mgmt-backup-mgmt-eu',
    ]);
    const cron = docs[7];
    expect(cron.spec).toMatchObject({ schedule: '30 0 * * *', concurrencyPolicy: 'Forbid' });
    const pod = cron.spec.jobTemplate.spec.template.spec;
    expect(pod.serviceAccountName).toBe('ferry-mgmt-backup');
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.containers[0].securityContext.readOnlyRootFilesystem).toBe(true);
    expect(pod.containers[0].command).toEqual([
      'ferry',
      'mgmt',
      'backup',
      '--to',
      's3://mgmt-backups/eu',
      '--kubeconfig',
      `${SECRET_MOUNT}/mgmt-eu.management.kubeconfig`,
      '--context',
      'backup',
      '--recipients-file',
      `${SECRET_MOUNT}/mgmt-eu.backup.recipients`,
      '--s3-credentials-file',
      `${SECRET_MOUNT}/mgmt-eu.backup.s3-credentials`,
      '--s3-profile',
      'ops',
      '--s3-endpoint',
      'https://s3.eu.example',
      '--s3-region',
      'eu-central-1',
      '--keep-daily',
      '14',
      '--keep-weekly',
      '8',
    ]);
    expect(s.backups).toEqual([
      { management: 'mgmt-eu', cronJob: 'ferry-mgmt-backup-mgmt-eu', command: pod.containers[0].command },
    ]);
    expect(s.secretFiles).toContainEqual({
      key: 'mgmt-eu.backup.s3-credentials',
      from: '/srv/fleet/s3/creds',
    });
    expect(s.secretFiles).toContainEqual({
      key: 'mgmt-eu.backup.recipients',
      from: '/srv/fleet/age/recipients',
    });
    // The binding grants the role to the user the management kubeconfig authenticates as, and only it.
    expect(docs[6].subjects).toEqual([
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'ferry-mgmt-backup' },
    ]);
    const verbs = new Set((docs[5].rules as { verbs: string[] }[]).flatMap((r) => r.verbs));
    expect([...verbs].sort()).toEqual(['get', 'list', 'patch']);
    expect(s.manifests).not.toMatch(/^kind: Secret$|BEGIN |aws_secret|\btoken:/m);
  });

  it('no backup CronJob, role or binding when no management entry has a backup', () => {
    const s = fleetSchedule(
      parseFleet(
        'apiVersion: ferry.dev/v1alpha1\nkind: Fleet\nmanagement:\n  - {name: m, kubeconfig: k}\n',
        'fleet.yaml',
        '/f',
      ),
      opts,
    );
    expect(s.backups).toEqual([]);
    expect(s.manifests).not.toContain('ferry-mgmt-backup');
  });

  it.each([
    ['credentialsFile', '{url: s3://mgmt-backups/eu, recipientsFile: r}', /needs backup.credentialsFile/],
    ['recipientsFile', '{url: s3://mgmt-backups/eu, credentialsFile: c}', /needs backup.recipientsFile/],
  ])('refuses a backup without %s: the Job has nothing else to take it from', (field, backup, message) => {
    let err: unknown;
    try {
      fleetSchedule(withBackup(backup), opts);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).message).toMatch(message);
    expect((err as FerryError).location).toMatchObject({
      file: 'fleet.yaml',
      field: `management[0].backup.${field}`,
    });
  });
});
