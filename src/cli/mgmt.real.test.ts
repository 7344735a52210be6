/**
 * `ferry mgmt backup | restore | status` end to end through the CLI: two lab API servers
 * (127.0.142.1 source, 127.0.143.1 target) serving the CAPI CRDs, moto on 127.0.0.1:ephemeral.
 * Every argument list and every byte printed is scanned for secrets.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../lab/apiserver/testing.js';
import { installCapiCrds, labKube, seedCluster, seedProviders } from '../mgmt/testing-fleet.js';
import { type Moto, startMoto } from '../mgmt/testing-moto.js';
import { memoryIo } from './io.js';
import { runCli } from './run-cli.js';

const ACCESS_KEY = 'AKIAMGMTCLITEST00001';
const SECRET_KEY = 'mgmt-cli-s3-secret-9f8e7d6c5b4a';

let moto: Moto;
let source: LabApiFixture;
let target: LabApiFixture;
let dir: string;
let identity: string;
const runs: { argv: string[]; out: string; err: string; code: number }[] = [];

async function ferry(...argv: string[]) {
  const io = memoryIo({ cwd: dir });
  const code = await runCli(argv, io);
  const r = { argv, out: io.out, err: io.err, code };
  runs.push(r);
  return r;
}

const s3 = () => ['--s3-endpoint', moto.endpoint, '--s3-credentials-file', 'credentials'];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-mgmt-cli-'));
  [moto, source, target] = await Promise.all([
    startMoto(),
    startLabApi({ host: '127.0.142.1' }),
    startLabApi({ host: '127.0.143.1' }),
  ]);
  const src = labKube(source.kc, source.server.url);
  const dst = labKube(target.kc, target.server.url);
  await Promise.all([installCapiCrds(src), installCapiCrds(dst)]);
  await Promise.all([seedProviders(src), seedProviders(dst)]);
  await seedCluster(src, 'gamma');
  await writeAdminKubeconfig(source, join(dir, 'source.kubeconfig'));
  await writeAdminKubeconfig(target, join(dir, 'target.kubeconfig'));
  identity = await generateIdentity();
  await writeFile(
    join(dir, 'key.txt'),
    `# created: now\n# public key: ${await identityToRecipient(identity)}\n${identity}\n`,
    { mode: 0o600 },
  );
  await writeFile(join(dir, 'recipients'), `# ops\n${await identityToRecipient(identity)}\n`);
  await writeFile(
    join(dir, 'credentials'),
    `[default]\naws_access_key_id = ${ACCESS_KEY}\naws_secret_access_key = ${SECRET_KEY}\n`,
    { mode: 0o600 },
  );
  const client = new S3Client({
    endpoint: moto.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
  });
  for (const b of ['fleet', 'nothing']) {
    await client.send(new CreateBucketCommand({ Bucket: b }));
    await client.send(
      new PutBucketVersioningCommand({ Bucket: b, VersioningConfiguration: { Status: 'Enabled' } }),
    );
  }
  client.destroy();
});
afterAll(async () => {
  await Promise.all([moto?.stop(), source?.stop(), target?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('ferry mgmt', () => {
  it('backs up, reports status, restores, and refuses a second restore', async () => {
    const b = await ferry(
      'mgmt',
      'backup',
      '--to',
      's3://fleet/mgmt',
      '--kubeconfig',
      'source.kubeconfig',
      '--recipients-file',
      'recipients',
      '--keep',
      '3',
      ...s3(),
    );
    expect(b.err).not.toMatch(/^error/m);
    expect(b.code).toBe(0);
    expect(b.out).toContain('backup s3://fleet/mgmt version ');
    expect(b.out).toContain('read back and verified');
    expect(b.out).toMatch(/objects {4}18: Cluster 1, Machine 3/);

    const st = await ferry(
      'mgmt',
      'status',
      '--kubeconfig',
      'source.kubeconfig',
      '--from',
      's3://fleet/mgmt',
      '--identity',
      'key.txt',
      '--max-age',
      '1h',
      ...s3(),
    );
    expect(st.code).toBe(0);
    expect(st.out).toMatch(/gamma\/gamma\s+yes\s+no\s+3\s+3\/3/);
    expect(st.out).toMatch(/talos\s+ControlPlaneProvider\s+v0\.5\.13/);
    expect(st.out).toContain('verifies: yes (checksum, decryption and manifest)');

    const js = await ferry('mgmt', 'status', '--from', 's3://fleet/mgmt', '-o', 'json', ...s3());
    const parsed = JSON.parse(js.out) as {
      backup: { versions: number; newest: { verified: boolean; depth: string } };
    };
    expect(parsed.backup.newest).toMatchObject({ verified: true, depth: 'checksum' });

    const r = await ferry(
      'mgmt',
      'restore',
      '--from',
      's3://fleet/mgmt',
      '--to-kubeconfig',
      'target.kubeconfig',
      '--identity',
      'key.txt',
      '--write-concurrency',
      '4',
      ...s3(),
    );
    expect(r.err).not.toMatch(/^error/m);
    expect(r.code).toBe(0);
    expect(r.out).toContain('created    18 object(s), namespace(s) gamma');
    expect(r.out).toContain('verify     every Cluster Ready');

    const again = await ferry(
      'mgmt',
      'restore',
      '--from',
      's3://fleet/mgmt',
      '--to-kubeconfig',
      'target.kubeconfig',
      '--identity',
      'key.txt',
      ...s3(),
    );
    expect(again.code).toBe(2);
    expect(again.err).toContain('18 object(s) already exist on the target');
  });

  it('status exits 1 when the newest backup is older than --max-age, and when there is none', async () => {
    await sleep(2100);
    const old = await ferry('mgmt', 'status', '--from', 's3://fleet/mgmt', '--max-age', '1s', ...s3());
    expect(old.code).toBe(1);
    expect(old.out).toContain('older than --max-age 1s');
    const none = await ferry('mgmt', 'status', '--from', 's3://nothing/x', ...s3());
    expect(none.code).toBe(1);
    expect(none.out).toContain('backup s3://nothing/x: none');
  });

  it('gives usage errors for what it cannot use', async () => {
    expect(
      (await ferry('mgmt', 'backup', '--to', 's3://fleet/mgmt', '--kubeconfig', 'source.kubeconfig', ...s3()))
        .err,
    ).toContain('no age recipient');
    const sk = await ferry(
      'mgmt',
      'backup',
      '--to',
      's3://fleet/mgmt',
      '--kubeconfig',
      'source.kubeconfig',
      '--recipient',
      'AGE-SECRET-KEY-1XXXX',
      ...s3(),
    );
    expect(sk.code).toBe(2);
    expect(sk.err).toContain('must never be on a command line');
    expect(
      (
        await ferry(
          'mgmt',
          'backup',
          '--to',
          's3://fleet/mgmt',
          '--kubeconfig',
          'source.kubeconfig',
          '--recipients-file',
          'recipients',
        )
      ).err,
    ).toContain('no S3 credentials');
    // The dispatcher routes to bootstrap, which names what it needs.
    const boot = await ferry('mgmt', 'bootstrap');
    expect(boot.code).toBe(2);
    expect(boot.err).toContain('missing --config mgmt.yaml');
    expect((await ferry('mgmt', 'status', '--max-age', '3 days')).code).toBe(2);
    // --via clusterctl without a clusterctl on PATH: exit 2 naming the flag to drop, before anything is read.
    const noClusterctl = Object.assign(memoryIo({ cwd: dir }), { env: { PATH: dir } });
    const argv = ['mgmt', 'backup', '--via', 'clusterctl', '--to', 's3://fleet/mgmt'];
    const more = ['--kubeconfig', 'source.kubeconfig', '--recipients-file', 'recipients', ...s3()];
    expect(await runCli([...argv, ...more], noClusterctl)).toBe(2);
    expect(noClusterctl.err).toContain('clusterctl is not installed');
    expect(noClusterctl.err).toContain('drop --via clusterctl');
    for (const [n, says] of [
      ['0', '--write-concurrency must be a whole number ≥ 1; got "0"'],
      ['201', '--write-concurrency must be at most 200; got 201'],
    ] as const) {
      const wc = await ferry('mgmt', 'restore', '--from', 's3://fleet/mgmt', '--write-concurrency', n);
      expect(wc.code).toBe(2);
      expect(wc.err).toContain(says);
    }
    // clusterctl move does the writes: a pace for ferry's own would do nothing.
    const paced = await ferry(
      'mgmt',
      'restore',
      '--from',
      's3://fleet/mgmt',
      '--to-kubeconfig',
      'target.kubeconfig',
      '--identity',
      'key.txt',
      '--via',
      'clusterctl',
      '--write-concurrency',
      '4',
    );
    expect(paced.code).toBe(2);
    expect(paced.err).toContain("--write-concurrency paces ferry's own writes; with --via clusterctl");
  });

  it('never shows a secret in an argument list, an output or an error', async () => {
    const kubeconfigKey = (await readFile(join(dir, 'source.kubeconfig'), 'utf8')).match(
      /client-key-data: (\S+)/,
    )?.[1];
    expect(kubeconfigKey).toBeDefined();
    const secrets = [
      SECRET_KEY,
      ACCESS_KEY,
      identity,
      identity.slice('AGE-SECRET-KEY-1'.length, 40),
      kubeconfigKey!.slice(0, 40),
      // Secret data inside the backup: the seeded kubeconfig token and Proxmox secret.
      'kubeconfig-token-gamma',
      'proxmox-secret-gamma',
      Buffer.from('proxmox-secret-gamma').toString('base64'),
    ];
    expect(runs.length).toBeGreaterThan(5);
    for (const r of runs) {
      const text = [...r.argv, r.out, r.err].join('\n');
      for (const s of secrets)
        expect(text.includes(s), `${s.slice(0, 8)}… in ferry ${r.argv.join(' ')}`).toBe(false);
    }
  });
});
