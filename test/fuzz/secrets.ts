/**
 * Key material in a fuzz case's input, and whether a command's output shows any of it. Private
 * keys are found as PEM blocks (also base64-wrapped, as kubeconfigs and Talos bundles carry them);
 * secrets and tokens by the name of their field and the shape of their value. A leak is any PEM
 * armour, or any 32-character stretch of a key (so a line, or half of one, counts), or a whole
 * short secret.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Secret text → the file (relative to the case) it was found in. */
export type Secrets = Map<string, string>;

const CHUNK = 32;
const MIN_SECRET = 8;

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)(?:-----END \1-----|$)/g;

/** Fields whose value is a secret: encryption keys, tokens, Talos bundle keys, kubeconfig credentials. */
const SECRET_FIELD =
  /["']?\b(key|secret|token|token-secret|bootstraptoken|aescbcencryptionsecret|secretboxencryptionsecret|client-key-data|password)["']?\s*[:=]\s*["']?([A-Za-z0-9+/=._-]+)/g;

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const BOOTSTRAP_TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;

function chunks(s: string): string[] {
  if (s.length < 2 * CHUNK) return [s];
  const out: string[] = [];
  for (let i = 0; i + CHUNK <= s.length; i += CHUNK) out.push(s.slice(i, i + CHUNK));
  return out;
}

function add(secrets: Secrets, s: string, file: string): void {
  for (const c of chunks(s)) if (c.length >= MIN_SECRET && !secrets.has(c)) secrets.set(c, file);
}

/** Base64 that looks like a secret rather than a word: a digit or a symbol in it, or padding. */
function looksRandom(v: string): boolean {
  return BASE64.test(v) && v.length >= MIN_SECRET && (/[0-9+/]/.test(v) || v.endsWith('='));
}

function privateKeyLines(text: string, secrets: Secrets, file: string): void {
  for (const m of text.matchAll(PEM_BLOCK)) {
    if (!m[1]!.includes('PRIVATE KEY')) continue;
    for (const line of m[2]!.split(/\s+/)) if (line && !line.includes(':')) add(secrets, line, file);
  }
}

function decoded(v: string): string | undefined {
  if (!BASE64.test(v) || v.length % 4 !== 0) return undefined;
  const s = Buffer.from(v, 'base64').toString('utf8');
  return /^[\x20-\x7e\r\n\t]+$/.test(s) ? s : undefined;
}

/** The secrets one text holds. */
export function secretsInText(text: string, file: string, secrets: Secrets = new Map()): Secrets {
  privateKeyLines(text, secrets, file);
  for (const m of text.matchAll(SECRET_FIELD)) {
    const value = m[2]!;
    const token = BOOTSTRAP_TOKEN.exec(value);
    if (token) add(secrets, token[2]!, file);
    else if (looksRandom(value)) add(secrets, value, file);
    const plain = decoded(value);
    if (plain === undefined) continue;
    if (plain.includes('PRIVATE KEY')) privateKeyLines(plain, secrets, file);
    else if (plain.length >= MIN_SECRET && !/\s/.test(plain)) add(secrets, plain, file);
  }
  return secrets;
}

async function walk(path: string): Promise<string[]> {
  const entries = await readdir(path, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOTDIR') return undefined;
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  if (!entries) return [path];
  const out: string[] = [];
  for (const e of entries) out.push(...(await walk(join(path, e.name))));
  return out;
}

/**
 * Every secret in the files at or under `paths` (relative to `root`; missing ones are skipped).
 * Binary files are read as text too: junk holds no secret, and a key hidden in it would still show.
 */
export async function secretsIn(root: string, paths: readonly string[] = ['.']): Promise<Secrets> {
  const secrets: Secrets = new Map();
  for (const p of paths) {
    for (const file of await walk(join(root, p))) {
      if (file.endsWith('.sqlite')) continue;
      secretsInText(await readFile(file, 'utf8'), relative(root, file), secrets);
    }
  }
  return secrets;
}

/** Secrets given on a command line (a bootstrap token: its secret half). */
export function secretsOf(values: readonly string[], secrets: Secrets = new Map()): Secrets {
  for (const s of values) {
    const token = BOOTSTRAP_TOKEN.exec(s);
    add(secrets, token ? token[2]! : s, '(command line)');
  }
  return secrets;
}

/** What of `secrets` (or any PEM armour) `output` shows: one line per leak, naming where it came from. */
export function leaks(output: string, secrets: Secrets): string[] {
  const found: string[] = [];
  if (output.includes('-----BEGIN')) found.push('a PEM block (-----BEGIN)');
  const files = new Set<string>();
  for (const [s, file] of secrets) if (output.includes(s)) files.add(file);
  for (const f of files) found.push(`key material from ${f}`);
  return found;
}
