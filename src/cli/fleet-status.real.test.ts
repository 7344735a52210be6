/**
 * `ferry fleet status` beyond the journals: each cluster's versions from its Nodes (a snapshot's;
 * a Cluster API Cluster's, read live through its kubeconfig Secret on a lab management API server),
 * where it came from, and each management cluster's newest backup on moto, written by `ferry mgmt
 * backup` itself: fresh, older than --max-age, missing, or on an S3 that does not answer.
 */

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort } from '../adapters/kube/testing-fake-api.js';
import { type FakeCluster, startFakeCluster } from '../adapters/kube/testing-fake-cluster.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../lab/apiserver/testing.js';
import { installCapiCrds, labKube, seedCluster, seedProviders } from '../mgmt/testing-fleet.js';
import { type Moto, startMoto } from '../mgmt/testing-moto.js';
import { memoryIo } from './io.js';
import { runCli } from './run-cli.js';

const HOST = '127.0.148.1';
const EXAMPLE = resolve('examples/lab-cluster');
const ACCESS_KEY = 'fleet-status-key';
const SECRET_KEY = 'fleet-status-secret';

let dir: string;
let mgmt: LabApiFixture;
let live: FakeCluster;
let moto: Moto;

const fleet = (backup: string) =>
  [
    'apiVersion: ferry.dev/v1alpha1',
    'kind: Fleet',
    'clusters:',
    `  - {name: lab-a, snapshot: ${EXAMPLE}}`,
    'management:',
    '  - name: mgmt-eu',
    '    kubeconfig: mgmt.conf',
    `    backup: ${backup}`,
    '',
  ].join('\n');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-fleet-status-'));
  [mgmt, live, moto] = await Promise.all([startLabApi({ host: HOST }), startFakeCluster(), startMoto()]);
  const kube = labKube(mgmt.kc, mgmt.server.url);
  await installCapiCrds(kube);
  await seedProviders(kube);
  await seedCluster(kube, 'prod-eu-1', 'fleet');
  // Its kubeconfig Secret holds the live cluster's kubeconfig.
  await kube.delete({ apiVersion: 'v1', kind: 'Secret', namespace: 'fleet', name: 'prod-eu-1-kubeconfig' });
  await kube.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      namespace: 'fleet',
      name: 'prod-eu-1-kubeconfig',
      labels: { 'cluster.x-k8s.io/cluster-name': 'prod-eu-1' },
    },
    ...({
      type: 'cluster.x-k8s.io/secret',
      data: { value: Buffer.from(await readFile(live.kubeconfig, 'utf8')).toString('base64') },
    } as object),
  });
  await writeAdminKubeconfig(mgmt, join(dir, 'mgmt.conf'));
  await writeFile(
    join(dir, 'credentials'),
    `[default]\naws_access_key_id = ${ACCESS_KEY}\naws_secret_access_key = ${SECRET_KEY}\n`,
    { mode: 0o600 },
  );
  const identity = await generateIdentity();
  await writeFile(join(dir, 'recipients'), `${await identityToRecipient(identity)}\n`);
  const client = new S3Client({
    endpoint: moto.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
  });
  for (const b of ['fleet', 'empty']) {
    await client.send(new CreateBucketCommand({ Bucket: b }));
    await client.send(
      new PutBucketVersioningCommand({ Bucket: b, VersioningConfiguration: { Status: 'Enabled' } }),
    );
  }
  client.destroy();
  const at = `endpoint: "${moto.endpoint}", credentialsFile: credentials`;
  await writeFile(join(dir, 'fresh.yaml'), fleet(`{url: s3://fleet/mgmt, ${at}}`));
  await writeFile(join(dir, 'empty.yaml'), fleet(`{url: s3://empty/mgmt, ${at}}`));
  const port = await closedPort();
  await writeFile(
    join(dir, 'down.yaml'),
    fleet(`{url: s3://fleet/mgmt, endpoint: "http://127.0.0.1:${port}", credentialsFile: credentials}`),
  );
  await writeFile(join(dir, 'nocreds.yaml'), fleet(`{url: s3://fleet/mgmt, endpoint: "${moto.endpoint}"}`));
}, 120_000);

afterAll(async () => {
  await Promise.all([live?.close(), mgmt?.stop(), moto?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const ferry = async (...argv: string[]) => {
  // No S3 credentials from this machine's environment: only what the fleet file names.
  const io = memoryIo({ cwd: dir });
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
};

describe('ferry fleet status: versions, adoption and backups', () => {
  it('a fresh backup and clusters that need nothing: exit 0, each cluster with its versions and origin', async () => {
    const b = await ferry(
      'mgmt',
      'backup',
      '--to',
      's3://fleet/mgmt',
      '--kubeconfig',
      'mgmt.conf',
      '--recipients-file',
      'recipients',
      '--s3-endpoint',
      moto.endpoint,
      '--s3-credentials-file',
      'credentials',
    );
    expect(b.err).not.toMatch(/^error/m);
    expect(b.code).toBe(0);

    const st = await ferry('fleet', 'status', 'fresh.yaml', '--max-age', '1h');
    expect(st.err).not.toMatch(/^error/m);
    expect(st.code).toBe(0);
    const lines = st.out.split('\n');
    const under = (name: string) => lines[lines.findIndex((l) => l.startsWith(`${name} `)) + 1] ?? '';
    expect(under('lab-a').trim()).toBe(
      'kubernetes v1.32.4; no Talos node (8 nodes); listed in the fleet file',
    );
    expect(under('prod-eu-1').trim()).toBe(
      'kubernetes v1.32.4; no Talos node (3 nodes); Cluster API: fleet/prod-eu-1 on management cluster mgmt-eu',
    );
    expect(st.out).toMatch(
      /\nmgmt-eu {4,}backup s3:\/\/fleet\/mgmt: newest \d+s old, checksum verified; 1 version\(s\)\n/,
    );

    const js = JSON.parse(
      (await ferry('fleet', 'status', 'fresh.yaml', '-o', 'json', '--max-age', '1h')).out,
    );
    expect(js.maxAgeSeconds).toBe(3600);
    expect(js.management).toEqual([
      {
        name: 'mgmt-eu',
        needsAttention: false,
        backup: {
          kind: 'read',
          backup: expect.objectContaining({
            url: 's3://fleet/mgmt',
            versions: 1,
            newest: expect.objectContaining({ verified: true, depth: 'checksum' }),
          }),
        },
      },
    ]);
    const prod = js.clusters.find((c: { name: string }) => c.name === 'prod-eu-1');
    expect(prod.adoption).toEqual({
      kind: 'capi',
      management: 'mgmt-eu',
      namespace: 'fleet',
      cluster: 'prod-eu-1',
    });
    expect(prod.versions).toEqual({
      kind: 'observed',
      nodes: 3,
      kubernetes: [{ version: 'v1.32.4', nodes: 3 }],
      talos: [],
      notTalos: 3,
    });
  });

  it('a backup older than --max-age, none at all, an S3 that does not answer, no credentials: exit 1, each said', async () => {
    await sleep(1_500);
    const old = await ferry('fleet', 'status', 'fresh.yaml', '--max-age', '1s');
    expect(old.code).toBe(1);
    expect(old.out).toMatch(/backup s3:\/\/fleet\/mgmt: newest \d+s old \(older than --max-age 1s\)/);

    const none = await ferry('fleet', 'status', 'empty.yaml');
    expect(none.code).toBe(1);
    expect(none.out).toContain(
      'backup s3://empty/mgmt: none (ferry mgmt backup --to s3://empty/mgmt writes one)',
    );

    const down = await ferry('fleet', 'status', 'down.yaml');
    expect(down.code).toBe(1);
    expect(down.out).toMatch(/backup s3:\/\/fleet\/mgmt not read: /);

    const nocreds = await ferry('fleet', 'status', 'nocreds.yaml');
    expect(nocreds.code).toBe(1);
    expect(nocreds.out).toContain('backup s3://fleet/mgmt not read: no S3 credentials');
    // Never a secret in what it prints.
    for (const r of [old, none, down, nocreds]) expect(r.out + r.err).not.toContain(SECRET_KEY);
  });

  it('--max-age is checked before anything is read', async () => {
    const r = await ferry('fleet', 'status', 'fresh.yaml', '--max-age', '3 days');
    expect(r.code).toBe(2);
    expect(r.err).toContain('--max-age must be a number with a unit');
  });
});
