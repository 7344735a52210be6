import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { parseFleet } from './config.js';

const HEAD = 'apiVersion: ferry.dev/v1alpha1\nkind: Fleet\nclusters:\n';
const MGMT = 'apiVersion: ferry.dev/v1alpha1\nkind: Fleet\nmanagement:\n';

function error(text: string): FerryError {
  try {
    parseFleet(text, 'fleet.yaml', '/srv/fleets');
  } catch (err) {
    if (err instanceof FerryError) return err;
    throw err;
  }
  throw new Error('parseFleet accepted it');
}

describe('fleet.yaml', () => {
  it('reads snapshot and kubeconfig clusters, paths relative to the file, labels as given', () => {
    const fleet = parseFleet(
      `${HEAD}  - name: prod-eu-1\n    kubeconfig: kube/prod-eu-1.conf\n    context: admin@prod-eu-1\n    labels: {environment: prod, wave: "2", example.com/owner: team-a}\n  - name: lab\n    snapshot: ../examples/lab-cluster\n`,
      'fleet.yaml',
      '/srv/fleets',
    );
    expect(fleet.clusters).toEqual([
      {
        name: 'prod-eu-1',
        source: {
          kind: 'kubeconfig',
          path: '/srv/fleets/kube/prod-eu-1.conf',
          shown: 'kube/prod-eu-1.conf',
          context: 'admin@prod-eu-1',
        },
        labels: { environment: 'prod', wave: '2', 'example.com/owner': 'team-a' },
      },
      {
        name: 'lab',
        source: { kind: 'snapshot', dir: '/srv/examples/lab-cluster', shown: '../examples/lab-cluster' },
        labels: {},
      },
    ]);
  });

  it('reads management clusters, paths relative to the file; clusters may then be left out', () => {
    const fleet = parseFleet(
      `${MGMT}  - name: mgmt-eu\n    kubeconfig: kube/mgmt.conf\n    context: admin@mgmt\n    namespace: fleet\n    selector: "environment in (prod,staging),wave!=0"\n    labels: {provider: capi}\n  - name: mgmt-us\n    kubeconfig: /etc/ferry/us.conf\n    backup: {url: s3://mgmt-backups/us, endpoint: "https://s3.us.example", region: us-east-2, credentialsFile: s3/creds, profile: ops}\n`,
      'fleet.yaml',
      '/srv/fleets',
    );
    expect(fleet.clusters).toEqual([]);
    expect(fleet.management).toEqual([
      {
        name: 'mgmt-eu',
        kubeconfig: { path: '/srv/fleets/kube/mgmt.conf', shown: 'kube/mgmt.conf', context: 'admin@mgmt' },
        namespace: 'fleet',
        selector: 'environment in (prod,staging),wave!=0',
        labels: { provider: 'capi' },
      },
      {
        name: 'mgmt-us',
        kubeconfig: { path: '/etc/ferry/us.conf', shown: '/etc/ferry/us.conf' },
        labels: {},
        backup: {
          url: 's3://mgmt-backups/us',
          endpoint: 'https://s3.us.example',
          region: 'us-east-2',
          credentialsFile: '/srv/fleets/s3/creds',
          profile: 'ops',
        },
      },
    ]);
  });

  it.each([
    ['no source', `${HEAD}  - name: a\n`, 'clusters[0]', 4, /needs exactly one of snapshot and kubeconfig/],
    [
      'both sources',
      `${HEAD}  - name: a\n    snapshot: s\n    kubeconfig: k\n`,
      'clusters[0]',
      4,
      /needs exactly one of snapshot and kubeconfig/,
    ],
    [
      'a name twice',
      `${HEAD}  - {name: a, snapshot: s}\n  - {name: a, snapshot: t}\n`,
      'clusters[1].name',
      5,
      /"a" is used twice \(clusters\[0\] and clusters\[1\]\)/,
    ],
    [
      'a name that is no DNS label',
      `${HEAD}  - {name: Prod_1, snapshot: s}\n`,
      'clusters[0].name',
      4,
      /not valid/,
    ],
    [
      'an unquoted number as a label value',
      `${HEAD}  - name: a\n    snapshot: s\n    labels: {wave: 1}\n`,
      'clusters[0].labels.wave',
      6,
      /must be a string/,
    ],
    [
      'a typo',
      `${HEAD}  - {name: a, snapshot: s, kubconfig: k}\n`,
      'clusters[0].kubconfig',
      4,
      /unknown field/,
    ],
    [
      'a context for a snapshot',
      `${HEAD}  - {name: a, snapshot: s, context: c}\n`,
      'clusters[0].context',
      4,
      /context only goes with kubeconfig/,
    ],
    ['no clusters', `${HEAD.replace('clusters:\n', 'clusters: []\n')}`, 'clusters', 3, /at least 1/],
    [
      'neither clusters nor management',
      'apiVersion: ferry.dev/v1alpha1\nkind: Fleet\n',
      'clusters',
      1,
      /clusters/,
    ],
    [
      'a management entry without a kubeconfig',
      `${MGMT}  - {name: mgmt-eu}\n`,
      'management[0].kubeconfig',
      4,
      /missing|required|set/,
    ],
    [
      'a management name twice',
      `${MGMT}  - {name: m, kubeconfig: a}\n  - {name: m, kubeconfig: b}\n`,
      'management[1].name',
      5,
      /"m" is used twice \(management\[0\] and management\[1\]\)/,
    ],
    [
      'a cluster named as a management entry',
      `${MGMT}  - {name: m, kubeconfig: a}\nclusters:\n  - {name: m, snapshot: s}\n`,
      'clusters[0].name',
      6,
      /also a management entry's name/,
    ],
    [
      'a selector with shell characters',
      `${MGMT}  - {name: m, kubeconfig: a, selector: "env=prod; rm -rf"}\n`,
      'management[0].selector',
      4,
      /not valid/,
    ],
    [
      'a namespace that is no name',
      `${MGMT}  - {name: m, kubeconfig: a, namespace: Fleet_1}\n`,
      'management[0].namespace',
      4,
      /not valid/,
    ],
    [
      'a typo in a management entry',
      `${MGMT}  - {name: m, kubeconfg: a}\n`,
      'management[0].kubeconfg',
      4,
      /unknown field/,
    ],
    [
      'a backup that is not an s3:// URL',
      `${MGMT}  - {name: m, kubeconfig: a, backup: {url: "https://bucket/x"}}\n`,
      'management[0].backup.url',
      4,
      /not valid|matching/,
    ],
    [
      'a backup without its URL',
      `${MGMT}  - {name: m, kubeconfig: a, backup: {endpoint: "http://127.0.0.1:9000"}}\n`,
      'management[0].backup.url',
      4,
      /missing|required|set/,
    ],
    [
      'a secret in the backup entry',
      `${MGMT}  - {name: m, kubeconfig: a, backup: {url: s3://bkt/x, secretAccessKey: k}}\n`,
      'management[0].backup.secretAccessKey',
      4,
      /unknown field/,
    ],
    [
      'a backup endpoint with a path',
      `${MGMT}  - {name: m, kubeconfig: a, backup: {url: s3://bkt/x, endpoint: "http://h:9000/x"}}\n`,
      'management[0].backup.endpoint',
      4,
      /not valid|matching/,
    ],
    [
      'another kind',
      'apiVersion: ferry.dev/v1alpha1\nkind: Cluster\nclusters: []\n',
      'kind',
      2,
      /kind must be Fleet/,
    ],
  ])('refuses %s, naming the file, the line and the field', (_what, text, field, line, message) => {
    const err = error(text);
    expect(err.kind).toBe('input');
    expect(err.message).toMatch(message);
    expect(err.location).toMatchObject({ file: 'fleet.yaml', field, line });
    expect(err.remediation).toBeTruthy();
  });
});
