/**
 * bench/mgmt: backup and restore of a management cluster with 35 workload clusters (the field
 * report's fleet: ~35 × 18 objects with their Secrets) through moto, against the time kubectl
 * takes to list the same objects (`kubectl get <every kind the backup reads> -A -o json`) in the
 * same run. Lab API servers (source 127.0.180.1, one fresh target per restore on 127.0.180.2+)
 * serve the CAPI CRDs of schemas/capi; ferry and kubectl each run as their own process, so their
 * peak RSS is theirs alone. ferry's wall time starts at its first request (module loading left
 * out); kubectl's is the whole process, its own start included, which is what listing costs.
 * Issue 14 targets backup ≤ 2× and restore ≤ 5× the list.
 *
 *   npm run bench -- mgmt [--clusters N] [--repeat R] [--phases] [--profile DIR] [--write-concurrency N]
 *
 * --profile DIR writes a CPU profile of the lab API servers (this process) over each restore.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CreateBucketCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { startLabApi, writeAdminKubeconfig } from '../src/lab/apiserver/testing.js';
import { installCapiCrds, labKube, seedCluster, seedProviders } from '../src/mgmt/testing-fleet.js';
import { startMoto } from '../src/mgmt/testing-moto.js';
import { type Bench, mib, ms } from './lib/bench.js';
import type { MgmtChildResult } from './lib/mgmt-child.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, '..');

/** Runs a process without blocking this one's event loop (the labs answer from here). */
function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string; wallMs: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const p = spawn(command, args, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    p.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    p.on('error', reject);
    p.on('close', (code) => resolve({ code: code ?? 4, stdout, stderr, wallMs: performance.now() - t0 }));
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export const bench: Bench = {
  name: 'mgmt',
  summary:
    'management-cluster backup and restore via moto (35 clusters) against kubectl listing the same objects',
  async run(args: string[]): Promise<void> {
    const { values } = parseArgs({
      args,
      options: {
        clusters: { type: 'string' },
        repeat: { type: 'string' },
        phases: { type: 'boolean' },
        profile: { type: 'string' },
        'write-concurrency': { type: 'string' },
      },
    });
    const clusters = Math.max(1, Number(values.clusters ?? 35));
    const repeat = Math.max(1, Number(values.repeat ?? 3));
    const dir = await mkdtemp(join(tmpdir(), 'ferry-bench-mgmt-'));
    const moto = await startMoto();
    const source = await startLabApi({ host: '127.0.180.1' });
    const targets: { stop(): Promise<void> }[] = [];
    try {
      const src = labKube(source.kc, source.server.url);
      await installCapiCrds(src);
      await seedProviders(src);
      const t0 = performance.now();
      for (let i = 0; i < clusters; i++) await seedCluster(src, `wl-${String(i).padStart(2, '0')}`);
      const kinds = await src.discoverKinds();
      await writeAdminKubeconfig(source, join(dir, 'source.kubeconfig'));
      const identity = await generateIdentity();
      const recipient = await identityToRecipient(identity);
      await writeFile(join(dir, 'key.txt'), `${identity}\n`, { mode: 0o600 });
      const env = {
        ...process.env,
        AWS_ACCESS_KEY_ID: 'bench',
        AWS_SECRET_ACCESS_KEY: 'bench-secret',
        AWS_REGION: 'us-east-1',
      };
      const s3 = new S3Client({
        endpoint: moto.endpoint,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: { accessKeyId: 'bench', secretAccessKey: 'bench-secret' },
      });
      await s3.send(new CreateBucketCommand({ Bucket: 'bench' }));
      await s3.send(
        new PutBucketVersioningCommand({ Bucket: 'bench', VersioningConfiguration: { Status: 'Enabled' } }),
      );
      s3.destroy();
      console.log(`seeded ${clusters} clusters in ${ms(performance.now() - t0)}`);

      const resources = [...kinds.map((k) => k.crd), 'secrets', 'configmaps'].join(',');
      const child = async (
        op: 'backup' | 'restore',
        kubeconfig: string,
        key: string,
      ): Promise<MgmtChildResult> => {
        const r = await run(
          process.execPath,
          [
            '--import',
            'tsx',
            join(HERE, 'lib', 'mgmt-child.ts'),
            op,
            kubeconfig,
            's3://bench/mgmt',
            moto.endpoint,
            key,
            ...(values['write-concurrency'] ? [values['write-concurrency']] : []),
          ],
          env,
        );
        if (r.code !== 0)
          throw new Error(
            `mgmt-child ${op} exited ${r.code}: ${r.stderr.trim().split('\n').slice(-5).join('\n')}`,
          );
        if (values.phases)
          process.stdout.write(
            r.stderr
              .split('\n')
              .filter((l) => l.startsWith('  '))
              .join('\n') + '\n',
          );
        return JSON.parse(r.stdout.trim().split('\n').pop()!) as MgmtChildResult;
      };
      const list: { wallMs: number; rss: number; objects: number }[] = [];
      const backups: MgmtChildResult[] = [];
      const restores: MgmtChildResult[] = [];
      for (let i = 0; i < repeat; i++) {
        const l = await run(
          '/usr/bin/time',
          [
            '-f',
            'maxrss=%M',
            'kubectl',
            '--kubeconfig',
            join(dir, 'source.kubeconfig'),
            'get',
            resources,
            '-A',
            '-o',
            'json',
          ],
          env,
        );
        if (l.code !== 0) throw new Error(`kubectl get exited ${l.code}: ${l.stderr.trim()}`);
        const rss = Number(/maxrss=(\d+)/.exec(l.stderr)?.[1] ?? 0) * 1024;
        list.push({
          wallMs: l.wallMs,
          rss,
          objects: (JSON.parse(l.stdout) as { items: unknown[] }).items.length,
        });
        backups.push(await child('backup', join(dir, 'source.kubeconfig'), recipient));
        const target = await startLabApi({ host: `127.0.180.${2 + i}` });
        targets.push(target);
        const dst = labKube(target.kc, target.server.url);
        await installCapiCrds(dst);
        await seedProviders(dst);
        await writeAdminKubeconfig(target, join(dir, `target-${i}.kubeconfig`));
        const session = values.profile === undefined ? undefined : new Session();
        if (session) {
          session.connect();
          await session.post('Profiler.enable');
          await session.post('Profiler.start');
        }
        const r = await child('restore', join(dir, `target-${i}.kubeconfig`), join(dir, 'key.txt'));
        if (session && values.profile !== undefined) {
          const { profile } = await session.post('Profiler.stop');
          await mkdir(values.profile, { recursive: true });
          const file = join(values.profile, `lab-restore-${i}.cpuprofile`);
          await writeFile(file, JSON.stringify(profile));
          session.disconnect();
          console.log(`lab API server CPU profile over restore ${i + 1}: ${file}`);
        }
        if (!r.ok) throw new Error('the restore did not verify');
        restores.push(r);
        await target.stop();
        targets.pop();
      }
      const listMs = median(list.map((x) => x.wallMs));
      const backupMs = median(backups.map((x) => x.wallMs));
      const restoreMs = median(restores.map((x) => x.wallMs));
      console.log(
        `kubectl get -A -o json: ${list[0]!.objects} objects, median ${ms(listMs)} of ${repeat}, peak RSS ${mib(Math.max(...list.map((x) => x.rss)))}`,
      );
      console.log(
        `ferry mgmt backup:      ${backups[0]!.objects} objects, median ${ms(backupMs)}, peak RSS ${mib(Math.max(...backups.map((x) => x.maxRssBytes)))} (target ≤ 2× the list)`,
      );
      console.log(
        `ferry mgmt restore:     ${restores[0]!.objects} objects, median ${ms(restoreMs)}, peak RSS ${mib(Math.max(...restores.map((x) => x.maxRssBytes)))} (target ≤ 5× the list)`,
      );
      console.log(`backup/list: ${(backupMs / listMs).toFixed(2)}×`);
      console.log(`restore/list: ${(restoreMs / listMs).toFixed(2)}×`);
    } finally {
      for (const t of targets) await t.stop();
      await source.stop();
      await moto.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
