/**
 * `ferry mgmt upgrade-providers --yes` through the CLI with the real backup: a lab API server
 * (127.0.71.1) holding a management cluster with one Cluster, moto on 127.0.71.2, and stand-in
 * kubectl and clusterctl on PATH that play the inventory before and after the upgrade. The backup
 * lands in the bucket before clusterctl upgrade apply runs; a dry run stores nothing. The snapshot
 * reader lists the same lab's Deployments and keeps the controllers' summaries.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { AppsV1Api } from '@kubernetes/client-node';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMgmtFromKubeconfig } from '../adapters/capi/mgmt-reader.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../lab/apiserver/testing.js';
import { writeConfig } from '../mgmt/bootstrap/testing-scenario.js';
import { installCapiCrds, labKube, seedCluster, seedProviders } from '../mgmt/testing-fleet.js';
import { type Moto, startMoto } from '../mgmt/testing-moto.js';
import { type Rule, Standins } from '../mgmt/tools/testing-standins.js';
import { memoryIo } from './io.js';
import { runCli } from './run-cli.js';

const ACCESS_KEY = 'AKIAMGMTUPGRADETEST1';
const SECRET_KEY = 'mgmt-upgrade-s3-secret-1a2b3c4d5e';

let moto: Moto;
let lab: LabApiFixture;
let dir: string;
let tools: Standins;
let s3: S3Client;

const inventory = (core: string) =>
  JSON.stringify({
    items: [
      ['cluster-api', 'CoreProvider', core],
      ['talos', 'BootstrapProvider', 'v0.6.12'],
      ['talos', 'ControlPlaneProvider', 'v0.5.13'],
      ['proxmox', 'InfrastructureProvider', 'v0.9.0'],
      ['in-cluster', 'IPAMProvider', 'v1.1.0'],
    ].map(([providerName, type, version]) => ({ metadata: { namespace: 'x' }, providerName, type, version })),
  });

const RULES: Rule[] = [
  {
    tool: 'kubectl',
    match: '^version --client -o json$',
    stdout: '{"clientVersion":{"major":"1","minor":"36","gitVersion":"v1.36.1"}}\n',
  },
  { tool: 'clusterctl', match: '^version -o short$', stdout: 'v1.14.1\n' },
  { tool: 'kubectl', match: ' get providers.clusterctl', unless: 'upgraded', stdout: inventory('v1.14.0') },
  { tool: 'kubectl', match: ' get providers.clusterctl', stdout: inventory('v1.14.1') },
  {
    tool: 'kubectl',
    match: ' get clusters.cluster.x-k8s.io ',
    stdout: JSON.stringify({
      items: [{ metadata: { name: 'gamma', namespace: 'gamma', uid: 'u', generation: 1 } }],
    }),
  },
  { tool: 'clusterctl', match: '^upgrade apply ', mark: 'upgraded', stdout: 'Performing upgrade...\n' },
  {
    tool: 'kubectl',
    match: ' get deployments ',
    stdout: JSON.stringify({
      items: [
        {
          metadata: { name: 'capi', namespace: 'capi-system' },
          status: { conditions: [{ type: 'Available', status: 'True' }] },
        },
      ],
    }),
  },
];

async function versions(): Promise<number> {
  const r = await s3.send(new ListObjectVersionsCommand({ Bucket: 'fleet' }));
  return (r.Versions ?? []).length;
}

async function ferry(...argv: string[]) {
  const io = Object.assign(memoryIo({ cwd: dir }), { env: tools.env() });
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-mgmt-upgrade-real-'));
  tools = new Standins(dir);
  [moto, lab] = await Promise.all([startMoto({ host: '127.0.71.2' }), startLabApi({ host: '127.0.71.1' })]);
  const kube = labKube(lab.kc, lab.server.url);
  await installCapiCrds(kube);
  await seedProviders(kube);
  await seedCluster(kube, 'gamma');
  await writeAdminKubeconfig(lab, join(dir, 'mgmt.kubeconfig'));
  const identity = await generateIdentity();
  await writeFile(join(dir, 'recipients'), `${await identityToRecipient(identity)}\n`);
  await writeFile(
    join(dir, 'credentials'),
    `[default]\naws_access_key_id = ${ACCESS_KEY}\naws_secret_access_key = ${SECRET_KEY}\n`,
    { mode: 0o600 },
  );
  s3 = new S3Client({
    endpoint: moto.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
  });
  await s3.send(new CreateBucketCommand({ Bucket: 'fleet' }));
  await s3.send(
    new PutBucketVersioningCommand({ Bucket: 'fleet', VersioningConfiguration: { Status: 'Enabled' } }),
  );
});
afterAll(async () => {
  s3?.destroy();
  await Promise.all([moto?.stop(), lab?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the snapshot reader on the same lab', () => {
  it('lists the Deployments of every namespace and keeps the controllers, summarised', async () => {
    const apps = lab.kc.makeApiClient(AppsV1Api);
    const labels = { 'cluster.x-k8s.io/provider': 'infrastructure-proxmox' };
    await apps.createNamespacedDeployment({
      namespace: 'capmox-system',
      body: {
        metadata: { name: 'capmox-controller-manager', labels },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: { containers: [{ name: 'manager', image: 'capmox:v0.9.0', args: ['--leader-elect'] }] },
          },
        },
      },
    });
    const m = await readMgmtFromKubeconfig(join(dir, 'mgmt.kubeconfig'));
    expect(m.controllers).toEqual({
      kind: 'observed',
      deployments: [
        {
          namespace: 'capmox-system',
          name: 'capmox-controller-manager',
          component: 'infrastructure-proxmox',
          replicas: 1,
          leaderElection: 'on',
          spread: 'none',
        },
      ],
    });
    expect(JSON.stringify(m)).not.toContain('capmox:v0.9.0');
  });
});

describe('ferry mgmt upgrade-providers with the real backup', () => {
  it('--dry-run stores nothing; --yes backs up to S3 first, then runs the pinned clusterctl upgrade apply and verifies', async () => {
    tools.script(RULES);
    const config = writeConfig(dir);
    const common = [
      'mgmt',
      'upgrade-providers',
      '--config',
      config,
      '--mgmt-kubeconfig',
      'mgmt.kubeconfig',
      '--to',
      'core=v1.14.1',
    ];
    const dry = await ferry(...common, '--dry-run');
    expect(dry.code, dry.err).toBe(0);
    expect(await versions()).toBe(0);

    const yes = await ferry(
      ...common,
      '--yes',
      '--backup-to',
      's3://fleet/mgmt',
      '--recipients-file',
      'recipients',
      '--s3-endpoint',
      moto.endpoint,
      '--s3-credentials-file',
      'credentials',
    );
    expect(yes.code, yes.err).toBe(0);
    expect(await versions()).toBe(1);
    const apply = tools.called('clusterctl', /^upgrade apply /);
    expect(apply).toHaveLength(1);
    expect(apply[0]!.args.join(' ')).toContain('--core cluster-api:v1.14.1 --wait-providers');
    // The backup's lines come before the upgrade's command in what ferry printed.
    const uploaded = yes.err.indexOf('uploaded s3://fleet/mgmt version ');
    expect(uploaded).toBeGreaterThan(0);
    expect(yes.err.indexOf('clusterctl upgrade apply --kubeconfig')).toBeGreaterThan(uploaded);
    // The JSON kubectl prints for ferry's reads is not echoed.
    expect(yes.err).not.toContain('"providerName"');
    expect(yes.out).toMatch(/backup: /);
    expect(yes.out).toContain('verified: core v1.14.1');
    for (const s of [SECRET_KEY]) expect(yes.out + yes.err).not.toContain(s);
  });
});
