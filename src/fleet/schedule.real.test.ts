/**
 * The scheduled fleet audit, installed and run as written: `ferry fleet schedule` writes the
 * manifests; the real kubectl applies them to a lab API server (127.0.72.1) and they read back; the
 * printed `kubectl create secret` runs in bash and makes the Secret; then the CronJob's container
 * command runs with that Secret's files laid out where the manifest mounts them (under a scratch
 * root, since the test cannot write to /etc) against the lab as the fleet's one cluster.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { memoryIo } from '../cli/io.js';
import { runCli } from '../cli/run-cli.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../lab/apiserver/testing.js';
import { kubectlMissing, skipFor } from '../lab/testing-binaries.js';
import { REPORTS_MOUNT, SECRET_MOUNT } from './schedule.js';

const run = promisify(execFile);
const noKubectl = await kubectlMissing();

let lab: LabApiFixture;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  if (noKubectl) return;
  lab = await startLabApi({ host: '127.0.72.1' });
  dir = await mkdtemp(join(tmpdir(), 'ferry-fleet-schedule-'));
  kubeconfig = join(dir, 'lab.conf');
  await writeAdminKubeconfig(lab, kubeconfig);
  await writeFile(
    join(dir, 'fleet.yaml'),
    'apiVersion: ferry.dev/v1alpha1\nkind: Fleet\nclusters:\n  - {name: lab, kubeconfig: lab.conf, labels: {wave: "1"}}\n',
  );
});
afterAll(async () => {
  await lab?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const sh = (line: string) =>
  run('bash', ['-c', line], { cwd: dir, env: { ...process.env, KUBECONFIG: kubeconfig }, timeout: 30_000 });

describe.skipIf(skipFor(noKubectl))('ferry fleet schedule, installed and run', () => {
  it('applies, makes its Secret with the printed command, and the container command audits the fleet', async () => {
    const io = memoryIo({ cwd: dir });
    expect(await runCli(['fleet', 'schedule', 'fleet.yaml', '-o', 'sched'], io)).toBe(0);
    const lines = io.out
      .trim()
      .split('\n')
      .map((l) => l.trim());
    const apply = lines.find((l) => l.startsWith('kubectl apply'))!;
    const create = lines.find((l) => l.startsWith('kubectl -n ferry create secret'))!;
    // The lab serves no OpenAPI document, which kubectl's client-side validation downloads first
    // (as src/cli/capi.real.test.ts does): the same command, without that one download.
    await sh(apply.replace('kubectl apply ', 'kubectl apply --validate=false '));
    await sh(create.replace('kubectl create -f ', 'kubectl create --validate=false -f '));

    const { stdout } = await sh('kubectl -n ferry get cronjob ferry-fleet-audit -o json');
    const cron = JSON.parse(stdout);
    expect(cron.spec.concurrencyPolicy).toBe('Forbid');
    const written = parseAllDocuments(await readFile(join(dir, 'sched/manifests.yaml'), 'utf8'))
      .map((d) => d.toJSON())
      .find((d) => d.kind === 'CronJob');
    expect(cron.spec.jobTemplate.spec.template.spec.containers[0].command).toEqual(
      written.spec.jobTemplate.spec.template.spec.containers[0].command,
    );
    await sh(
      'kubectl -n ferry get serviceaccount/ferry-fleet-audit persistentvolumeclaim/ferry-fleet-reports',
    );

    // The Secret as the kubelet would mount it: one file per key.
    const secret = JSON.parse((await sh('kubectl -n ferry get secret ferry-fleet -o json')).stdout);
    expect(Object.keys(secret.data).sort()).toEqual(['fleet.yaml', 'lab.kubeconfig']);
    const root = join(dir, 'root');
    await mkdir(join(root, SECRET_MOUNT), { recursive: true });
    for (const [key, value] of Object.entries(secret.data as Record<string, string>))
      await writeFile(join(root, SECRET_MOUNT, key), Buffer.from(value, 'base64'), { mode: 0o400 });

    const [bin, ...args] = cron.spec.jobTemplate.spec.template.spec.containers[0].command as string[];
    expect(bin).toBe('ferry');
    const rooted = args.map((a) => (a.startsWith('/') ? join(root, a) : a));
    const jobIo = memoryIo({ cwd: root });
    expect(await runCli(rooted, jobIo), jobIo.err).toBe(0);
    const report = JSON.parse(await readFile(join(root, REPORTS_MOUNT, 'fleet.json'), 'utf8'));
    expect(report.clusters).toMatchObject([{ name: 'lab', labels: { wave: '1' } }]);
    expect(report.clusters[0].reportFile).toBeDefined();
  });
});
