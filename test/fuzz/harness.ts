/**
 * Runs one fuzz case against one command, in process (runCli, as `ferry` itself does), and says
 * what is wrong with the outcome: an exit code other than 2, an error that does not name the file
 * (line, object) the case broke, anything written or changed in the case directory, anything on
 * stdout, key material in the output.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { memoryIo } from '../../src/cli/io.js';
import { runCli } from '../../src/cli/run-cli.js';
import { type BaseKind, type Bases, BOOTSTRAP_TOKEN, baseParts, LAYOUT, NOWHERE } from './bases.js';
import type { CommandId, Expectation, FuzzCase, Mention } from './cases.js';
import { leaks, type Secrets, secretsIn, secretsOf } from './secrets.js';

const CONNECTION = [
  '--kubeconfig',
  LAYOUT.kubeconfig,
  '--etcd-endpoints',
  NOWHERE,
  '--etcd-cacert',
  LAYOUT.etcdCa,
  '--etcd-cert',
  LAYOUT.etcdCert,
  '--etcd-key',
  LAYOUT.etcdKey,
];

/** The argv of `command` for a case, with paths relative to the case directory. */
export function argvFor(c: FuzzCase, command: CommandId): string[] {
  const snapshot = c.base === 'saved' ? LAYOUT.snapshot : LAYOUT.cluster;
  const extra = c.flags ?? [];
  switch (command) {
    case 'facts':
      return ['facts', snapshot, ...extra];
    case 'audit':
      return ['audit', snapshot, '-o', 'json', '--output-file', `${LAYOUT.out}/audit.json`, ...extra];
    case 'generate':
      return [
        'generate',
        snapshot,
        '--pki',
        `${LAYOUT.cluster}/pki`,
        '-o',
        `${LAYOUT.out}/kit`,
        '--bootstrap-token',
        BOOTSTRAP_TOKEN,
        ...extra,
      ];
    case 'plan':
      return [
        'plan',
        snapshot,
        ...(c.base === 'kit' ? ['--kit', LAYOUT.kit] : []),
        '--allow-blockers',
        '--surge-replicas',
        '-o',
        `${LAYOUT.out}/plan.json`,
        ...extra,
      ];
    case 'run-dry':
      return ['run', LAYOUT.plan, '--dry-run', ...CONNECTION, ...extra];
    case 'run':
      // Should validation let it through, the run fails fast at the unreachable cluster.
      return [
        'run',
        LAYOUT.plan,
        ...CONNECTION,
        '--no-lease',
        '--no-probes',
        '--yes',
        '--gate-grace',
        '0',
        '--poll-ms',
        '10',
        ...extra,
      ];
  }
}

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** One shell-quoted command line, to replay a case by hand from its directory (this checkout's ferry). */
export function replayLine(argv: string[]): string {
  const q = (a: string) => (/^[\w./:=@,+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
  const ferry = [join(REPO, 'node_modules/.bin/tsx'), join(REPO, 'src/cli/main.ts')];
  return [...ferry, ...argv].map(q).join(' ');
}

/** A directory name for a case: its number and name, with nothing a shell would trip on. */
export function caseDirName(index: number, name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9.]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 80);
  return `${String(index + 1).padStart(3, '0')}-${slug}`;
}

type Tree = Map<string, string>;

/**
 * Every file and directory under `dir` with what identifies its content: by default its inode,
 * size and modification time (a rename over it or a write into it changes them, and no file is
 * read), with `content` a sha256 of the bytes.
 */
export async function treeOf(dir: string, opts: { content?: boolean } = {}): Promise<Tree> {
  const out: Tree = new Map();
  const visit = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      const rel = relative(dir, p);
      if (e.isDirectory()) {
        out.set(`${rel}/`, 'dir');
        await visit(p);
      } else if (opts.content) {
        out.set(
          rel,
          createHash('sha256')
            .update(await readFile(p))
            .digest('hex'),
        );
      } else {
        const st = await stat(p);
        out.set(rel, `${st.ino}:${st.size}:${st.mtimeMs}`);
      }
    }
  };
  await visit(dir);
  return out;
}

/** What differs between two trees, a few paths of each kind named and the rest counted. */
export function treeChanges(before: Tree, after: Tree): string[] {
  const wrote: string[] = [];
  const changed: string[] = [];
  const removed: string[] = [];
  for (const [p, h] of after) {
    if (!before.has(p)) wrote.push(p);
    else if (before.get(p) !== h) changed.push(p);
  }
  for (const p of before.keys()) if (!after.has(p)) removed.push(p);
  const said = (verb: string, paths: string[]) => {
    // A directory written stands for what is in it.
    const tops = paths.filter((p) => !paths.some((q) => q !== p && q.endsWith('/') && p.startsWith(q)));
    const more = tops.length > 3 ? ` and ${tops.length - 3} more` : '';
    return tops.length > 0 ? [`${verb} ${tops.slice(0, 3).join(', ')}${more}`] : [];
  };
  return [...said('wrote', wrote), ...said('changed', changed), ...said('removed', removed)];
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The file as a path in the message: after a separator (so `--kubeconfig` does not name the file
 * `kubeconfig`) and, with `line`, followed by `:LINE`.
 */
function pathPattern(file: string, line: boolean): RegExp {
  const end = line ? ':\\d+' : '(?=$|[\\s:,;\'")\\]`]|\\.(?:\\s|$))';
  return new RegExp(`(?:^|[\\s/'"(\`])${escapeRegExp(file)}${end}`, 'm');
}

const anyOf = (m: Mention): readonly string[] => (typeof m === 'string' ? [m] : m);
const said = (m: Mention) => anyOf(m).join(' or ');

/** What the error message misses of what the case says it must name. */
export function namingProblems(err: string, expect: Expectation): string[] {
  const problems: string[] = [];
  const files = anyOf(expect.file);
  if (!files.some((f) => pathPattern(f, false).test(err)))
    problems.push(`the error does not name ${said(expect.file)}`);
  else if (expect.line && !files.some((f) => pathPattern(f, true).test(err)))
    problems.push(`the error names ${said(expect.file)} but not the line`);
  for (const o of expect.object ?? [])
    if (!anyOf(o).some((x) => err.includes(x))) problems.push(`the error does not name ${said(o)}`);
  return problems;
}

const baseSecrets = new Map<string, Promise<Secrets>>();

/**
 * The key material a case's input holds: its base's (read once per base) and that of the files its
 * mutation wrote, and the bootstrap token the commands are given.
 */
export async function caseSecrets(
  bases: Bases,
  kind: BaseKind,
  dir: string,
  touched: readonly string[],
): Promise<Secrets> {
  const key = `${bases.root}\0${kind}`;
  let base = baseSecrets.get(key);
  if (!base) {
    base = secretsIn(bases.root, baseParts(kind));
    baseSecrets.set(key, base);
  }
  const own = await secretsIn(dir, touched);
  return new Map([...(await base), ...own, ...secretsOf([BOOTSTRAP_TOKEN])]);
}

export interface Outcome {
  command: CommandId;
  argv: string[];
  code: number | 'timeout';
  out: string;
  err: string;
  problems: string[];
}

/** Runs `command` of case `c`, whose input is already written in `dir` and holds `secrets`. */
export async function runCase(
  c: FuzzCase,
  command: CommandId,
  dir: string,
  opts: { timeoutMs: number; secrets: Secrets },
): Promise<Outcome> {
  const argv = argvFor(c, command);
  const secrets = opts.secrets;
  const before = await treeOf(dir);
  const io = memoryIo({ cwd: dir });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), opts.timeoutMs);
    timer.unref();
  });
  const code = await Promise.race([runCli(argv, io), timeout]);
  clearTimeout(timer);
  const problems: string[] = [];
  if (code === 'timeout') problems.push(`did not finish within ${Math.round(opts.timeoutMs / 1000)} s`);
  else if (code !== 2) problems.push(`exit ${code}, not 2`);
  if (code !== 'timeout') {
    // Another exit code says enough; an exit 2 must also say where.
    if (code === 2) problems.push(...namingProblems(io.err, c.expect));
    problems.push(...treeChanges(before, await treeOf(dir)));
    if (io.out !== '') problems.push(`printed on stdout: ${firstLine(io.out)}`);
  }
  problems.push(...leaks(io.out + io.err, secrets).map((l) => `printed ${l}`));
  return { command, argv, code, out: io.out, err: io.err, problems };
}

/** What a failing outcome said: its error line, else its first line on stderr, else on stdout. */
export function headline(o: Pick<Outcome, 'out' | 'err'>): string {
  const error = o.err.split('\n').find((l) => l.startsWith('error:'));
  return firstLine(error ?? o.err) || firstLine(o.out) || '(no message)';
}

export function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
