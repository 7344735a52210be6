/**
 * The well-formed inputs the fuzz cases start from, made once: the example cluster as a files
 * directory, the same cluster saved by `ferry snapshot --from`, the kit `ferry generate` writes for
 * it, and the plan `ferry plan --kit` writes, with what `ferry run` needs beside it (a kubeconfig
 * and the etcd client files, pointing at a port nothing listens on). Each case directory gets a
 * fresh copy of the one it needs (copyBase), then its one mutation.
 */
import { cp, link, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { memoryIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/run-cli.js';
import { EXAMPLE_DIR } from '../../src/snapshot/testing-example.js';

export { EXAMPLE_DIR as EXAMPLE } from '../../src/snapshot/testing-example.js';

/** A bootstrap token for `ferry generate` (throwaway, like the example's keys). */
export const BOOTSTRAP_TOKEN = 'q1w2e3.a1s2d3f4g5h6j7k8';

/** An address where nothing answers: a run that gets past validation fails there, quickly. */
export const NOWHERE = 'https://127.0.0.1:1';

export type BaseKind = 'files' | 'saved' | 'kit' | 'plan';

/** Where each base lives inside a case directory (and inside the bases' own directory). */
export const LAYOUT = {
  cluster: 'cluster',
  snapshot: 'snapshot',
  kit: 'kit',
  plan: 'plan.json',
  journal: 'plan.journal.sqlite',
  kubeconfig: 'kubeconfig',
  etcdCa: 'etcd/ca.crt',
  etcdCert: 'etcd/client.crt',
  etcdKey: 'etcd/client.key',
  out: 'out',
} as const;

export interface Bases {
  /** The directory holding one copy of every base, laid out as LAYOUT says. */
  root: string;
  planText: string;
}

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster:
    server: ${NOWHERE}
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: ZnV6ejpub3QtYS1yZWFsLXRva2VuLTAxMjM0NTY3
contexts:
- name: admin@lab
  context:
    cluster: lab
    user: admin
current-context: admin@lab
`;

async function ferry(cwd: string, argv: string[]): Promise<void> {
  const io = memoryIo({ cwd });
  const code = await runCli(argv, io);
  if (code !== 0) throw new Error(`ferry ${argv.join(' ')} exited ${code}:\n${io.err}`);
}

/** Builds every base under `root` (an empty directory) with the real CLI. */
export async function buildBases(root: string): Promise<Bases> {
  await cp(EXAMPLE_DIR, join(root, LAYOUT.cluster), { recursive: true });
  await ferry(root, ['snapshot', '--from', LAYOUT.cluster, '-o', LAYOUT.snapshot]);
  await ferry(root, [
    'generate',
    LAYOUT.cluster,
    '--pki',
    `${LAYOUT.cluster}/pki`,
    '-o',
    LAYOUT.kit,
    '--bootstrap-token',
    BOOTSTRAP_TOKEN,
  ]);
  await ferry(root, [
    'plan',
    LAYOUT.cluster,
    '--kit',
    LAYOUT.kit,
    '--allow-blockers',
    '--surge-replicas',
    '-o',
    LAYOUT.plan,
  ]);
  await writeFile(join(root, LAYOUT.kubeconfig), KUBECONFIG, { mode: 0o600 });
  await mkdir(join(root, 'etcd'));
  const pki = join(root, LAYOUT.cluster, 'pki', 'etcd');
  await cp(join(pki, 'ca.crt'), join(root, LAYOUT.etcdCa));
  await cp(join(pki, 'healthcheck-client.crt'), join(root, LAYOUT.etcdCert));
  await cp(join(pki, 'healthcheck-client.key'), join(root, LAYOUT.etcdKey));
  return { root, planText: await readFile(join(root, LAYOUT.plan), 'utf8') };
}

/** What of the bases a case of `kind` starts from. */
const PARTS: Record<BaseKind, readonly string[]> = {
  files: [LAYOUT.cluster],
  // The saved snapshot names the files directory it came from (the encryption config, the PKI).
  saved: [LAYOUT.snapshot, LAYOUT.cluster],
  kit: [LAYOUT.cluster, LAYOUT.kit],
  plan: [LAYOUT.plan, LAYOUT.kubeconfig, 'etcd'],
};

export function baseParts(kind: BaseKind): readonly string[] {
  return PARTS[kind];
}

/** Hard links instead of copies: a case directory in a few milliseconds instead of a hundred. */
async function linkTree(from: string, to: string): Promise<void> {
  const entries = await readdir(from, { withFileTypes: true }).catch(() => undefined);
  if (!entries) return link(from, to);
  await mkdir(to);
  for (const e of entries) await linkTree(join(from, e.name), join(to, e.name));
}

/**
 * Puts the base of `kind` into `dir` (an empty directory) and creates the empty output directory.
 * `link` shares the base's files instead of copying them: only for a caller whose mutations
 * replace files rather than write into them (CaseDir does), and who checks the bases afterwards.
 */
export async function copyBase(
  bases: Bases,
  kind: BaseKind,
  dir: string,
  opts: { link?: boolean } = {},
): Promise<void> {
  for (const part of PARTS[kind]) {
    if (opts.link) await linkTree(join(bases.root, part), join(dir, part));
    else await cp(join(bases.root, part), join(dir, part), { recursive: true });
  }
  await mkdir(join(dir, LAYOUT.out));
}
