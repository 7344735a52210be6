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
