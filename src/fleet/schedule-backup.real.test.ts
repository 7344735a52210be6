/**
 * The scheduled management-cluster backup, installed and run as written: `ferry fleet schedule`
 * writes its CronJob, ServiceAccount, ClusterRole and binding; the real kubectl applies them to a
 * lab management API server (127.0.73.1, the Cluster API CRDs installed, one Cluster seeded) that
 * authorizes the backup's user by the RBAC objects it stores; the printed `kubectl create secret`
 * makes the Secret; then the CronJob's container command runs with the Secret's files where the
 * manifest mounts them and writes a backup to moto. Without the binding the same command is
 * refused: the role is what lets it through, and all it needs.
 */

import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIo } from '../cli/io.js';
import { runCli } from '../cli/run-cli.js';
import {
  clientKubeConfig,
  type LabApiFixture,
  startLabApi,
  writeAdminKubeconfig,
} from '../lab/apiserver/testing.js';
import { kubectlMissing, skipFor } from '../lab/testing-binaries.js';
import { installCapiCrds, labKube, seedCluster, seedProviders } from '../mgmt/testing-fleet.js';
import { type Moto, startMoto } from '../mgmt/testing-moto.js';
import { BACKUP_USER, SECRET_MOUNT } from './schedule.js';

const run = promisify(execFile);
const noKubectl = await kubectlMissing();
const ACCESS_KEY = 'schedule-backup-key';
const SECRET_KEY = 'schedule-backup-secret';

let lab: LabApiFixture;
let moto: Moto;
let dir: string;
let admin: string;

beforeAll(async () => {
  if (noKubectl) return;
  [lab, moto] = await Promise.all([startLabApi({ host: '127.0.73.1' }), startMoto()]);
  dir = await mkdtemp(join(tmpdir(), 'ferry-schedule-backup-'));
  admin = join(dir, 'admin.conf');
  await writeAdminKubeconfig(lab, admin);
  const kube = labKube(lab.kc, lab.server.url);
  await installCapiCrds(kube);
  await seedProviders(kube);
  await seedCluster(kube, 'gamma');
  // The management kubeconfig the backup uses: a client certificate for its user, nothing more.
  const { yaml } = await clientKubeConfig(lab.server.url, lab.ca, BACKUP_USER, []);
  await writeFile(join(dir, 'backup.conf'), yaml, { mode: 0o600 });
  lab.server.enforceRbacFor([BACKUP_USER]);
  await writeFile(
    join(dir, 'credentials'),
    `[default]\naws_access_key_id = ${ACCESS_KEY}\naws_secret_access_key = ${SECRET_KEY}\n`,
    { mode: 0o600 },
  );
  await writeFile(join(dir, 'recipients'), `${await identityToRecipient(await generateIdentity())}\n`);
  const client = new S3Client({
    endpoint: moto.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
  });
  await client.send(new CreateBucketCommand({ Bucket: 'backups' }));
  await client.send(
    new PutBucketVersioningCommand({ Bucket: 'backups', VersioningConfiguration: { Status: 'Enabled' } }),
  );
  client.destroy();
  await writeFile(
    join(dir, 'fleet.yaml'),
    [
      'apiVersion: ferry.dev/v1alpha1',
      'kind: Fleet',
      'management:',
      '  - name: mgmt',
      '    kubeconfig: backup.conf',
      `    backup: {url: s3://backups/mgmt, endpoint: "${moto.endpoint}", credentialsFile: credentials, recipientsFile: recipients}`,
      '',
    ].join('\n'),
  );
}, 120_000);
afterAll(async () => {
  await Promise.all([lab?.stop(), moto?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const sh = (line: string) =>
  run('bash', ['-c', line], { cwd: dir, env: { ...process.env, KUBECONFIG: admin }, timeout: 30_000 });

describe.skipIf(skipFor(noKubectl))('the scheduled management-cluster backup, installed and run', () => {
  it('applies, makes its Secret with the printed command, and the CronJob command backs up under its role only', async () => {
    const io = memoryIo({ cwd: dir });
    expect(await runCli(['fleet', 'schedule', 'fleet.yaml', '-o', 'sched'], io), io.err).toBe(0);
    expect(io.out).toContain('make it authenticate as user ferry-mgmt-backup');
    const lines = io.out.split('\n').map((l) => l.trim());
    const apply = lines.find((l) => l.startsWith('kubectl apply'))!;
    const create = lines.find((l) => l.startsWith('kubectl -n ferry create secret'))!;
    // The lab serves no OpenAPI document (see schedule.real.test.ts): the same commands without that download.
    await sh(apply.replace('kubectl apply ', 'kubectl apply --validate=false '));
    await sh(create.replace('kubectl create -f ', 'kubectl create --validate=false -f '));

    const cron = JSON.parse((await sh('kubectl -n ferry get cronjob ferry-mgmt-backup-mgmt -o json')).stdout);
    const role = JSON.parse((await sh(`kubectl get clusterrole ${BACKUP_USER} -o json`)).stdout);
    expect(role.rules.length).toBeGreaterThan(0);
    const secret = JSON.parse((await sh('kubectl -n ferry get secret ferry-fleet -o json')).stdout);
    expect(Object.keys(secret.data).sort()).toEqual([
      'fleet.yaml',
      'mgmt.backup.recipients',
      'mgmt.backup.s3-credentials',
      'mgmt.management.kubeconfig',
    ]);
    const root = join(dir, 'root');
    await mkdir(join(root, SECRET_MOUNT), { recursive: true });
    for (const [key, value] of Object.entries(secret.data as Record<string, string>))
      await writeFile(join(root, SECRET_MOUNT, key), Buffer.from(value, 'base64'), { mode: 0o400 });

    const [bin, ...args] = cron.spec.jobTemplate.spec.template.spec.containers[0].command as string[];
    expect(bin).toBe('ferry');
    const rooted = args.map((a) => (a.startsWith('/') ? join(root, a) : a));
    const job = memoryIo({ cwd: root });
    expect(await runCli(rooted, job), job.err).toBe(0);
    expect(job.out).toContain('read back and verified');
    expect(job.out + job.err).not.toContain(SECRET_KEY);

    const status = memoryIo({ cwd: dir });
    const st = ['mgmt', 'status', '--from', 's3://backups/mgmt', '--s3-endpoint', moto.endpoint];
    expect(await runCli([...st, '--s3-credentials-file', 'credentials', '--max-age', '1h'], status)).toBe(0);

    // Without the binding the role grants nothing: the same command is refused by the API server.
    await sh(`kubectl delete clusterrolebinding ${BACKUP_USER}`);
    const refused = memoryIo({ cwd: root });
    expect(await runCli(rooted, refused)).not.toBe(0);
    expect(refused.err).toMatch(/403|[Ff]orbidden/);
  });
});
