/**
 * Child process of the mgmt benchmark: one `ferry mgmt backup` or `restore` through the engine the
 * CLI calls, timed from the first request to the report (module loading left out), with the
 * process's peak RSS. Prints one JSON line. S3 credentials come from the environment.
 *   mgmt-child.ts backup KUBECONFIG S3URL ENDPOINT RECIPIENT
 *   mgmt-child.ts restore KUBECONFIG S3URL ENDPOINT IDENTITY_FILE [WRITE_CONCURRENCY]
 */
import { performance } from 'node:perf_hooks';
import { loadKubeconfig } from '../../src/adapters/kube/kubeconfig.js';
import { createRequester } from '../../src/adapters/kube/request.js';
import { loadIdentities } from '../../src/mgmt/age.js';
import { runBackup } from '../../src/mgmt/backup.js';
import { MgmtKube } from '../../src/mgmt/kube.js';
import { fetchBackup, runRestore } from '../../src/mgmt/restore.js';
import { parseS3Url, resolveS3Settings } from '../../src/mgmt/s3-config.js';
import { openBackupStore } from '../../src/mgmt/s3-store.js';

export interface MgmtChildResult {
  wallMs: number;
  maxRssBytes: number;
  objects: number;
  ok: boolean;
}

async function main(): Promise<void> {
  const [op, kubeconfig, url, endpoint, key, concurrency] = process.argv.slice(2) as [
    string,
    string,
    string,
    string,
    string,
    string | undefined,
  ];
  const kube = new MgmtKube(createRequester(loadKubeconfig(kubeconfig), { keepAlive: true }));
  const loc = parseS3Url(url, 'url');
  const store = openBackupStore(loc, await resolveS3Settings({ endpoint }, process.env));
  const identities = op === 'restore' ? await loadIdentities(key) : [];
  const t0 = performance.now();
  // Phase times on stderr: what the benchmark prints when asked (--phases).
  const log = (l: string) =>
    process.stderr.write(`  ${op} +${Math.round(performance.now() - t0)} ms: ${l}\n`);
  let objects = 0;
  let ok = true;
  if (op === 'backup') {
    const r = await runBackup({ kube, store, loc, recipients: [key], retention: { keep: 3 }, log });
    objects = r.objects;
  } else {
    const backup = await fetchBackup({ store, loc, identities, identityFile: key });
    log('downloaded, verified and decrypted');
    const r = await runRestore({
      kube,
      backup,
      loc,
      log,
      ...(concurrency !== undefined && { writeConcurrency: Number(concurrency) }),
    });
    objects = r.created;
    ok = r.verify.ok;
  }
  const wallMs = performance.now() - t0;
  store.destroy();
  const out: MgmtChildResult = { wallMs, maxRssBytes: process.resourceUsage().maxRSS * 1024, objects, ok };
  console.log(JSON.stringify(out));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(4);
  },
);
