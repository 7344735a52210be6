/**
 * A snapshot saved as a directory (docs/snapshot-layout.md §2) and read back, validated, equal.
 * Resource arrays are written one object per line so that 150,000 pods neither need one giant
 * string to write (V8 caps strings near 512 MiB) nor to read back.
 */
import { closeSync, createReadStream, fsyncSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { inputError } from '../errors.js';
import { writeDirAtomic } from '../util/atomic-write.js';
import { pathError, pathState, problemOf, readOptionalTextFile } from '../util/input-file.js';
import { validateMgmtSnapshot } from './mgmt.js';
import {
  type AuditLogSummary,
  type BootstrapToken,
  type ComponentConfig,
  type EncryptionConfig,
  type EtcdState,
  emptyResources,
  type KubeadmConfig,
  type KubeObject,
  type MgmtSnapshot,
  type PkiInventory,
  RESOURCE_KEYS,
  type ResourceKey,
  type ServedCertificate,
  type ServerVersionInfo,
  SNAPSHOT_FORMAT_VERSION,
  type Snapshot,
  type SnapshotPart,
  type StaticPod,
} from './model.js';
import { unobservedFromWarnings } from './unobserved.js';
import {
  validateAuditLogFile,
  validateBootstrapToken,
  validateComponentsFile,
  validateEncryptionFile,
  validateEtcdFile,
  validateKubeadmFile,
  validateManifest,
  validatePkiFile,
  validateResourceItem,
  validateServedCertsFile,
  validateServerVersionFile,
} from './validate.js';
import { jsonError } from './yaml.js';

// A snapshot holds workload specs (env values, ConfigMap data): owner-only like the directory.
const FILE_MODE = 0o600;

export const MANIFEST_FILE = 'manifest.json';

/** Which file holds which optional part, so a manifest naming a part with no file is caught. */
const PART_FILES: Partial<Record<SnapshotPart, string>> = {
  pki: 'pki.json',
  encryption: 'encryption.json',
  etcd: 'etcd.json',
  'audit-log': 'audit-log.json',
  'server-version': 'server-version.json',
  mgmt: 'mgmt.json',
};

export async function saveSnapshot(s: Snapshot, dir: string, opts: { force?: boolean } = {}): Promise<void> {
  await writeDirAtomic(
    dir,
    async (tmp) => {
      await writeSnapshotParts(s, tmp);
      const files = await openResourceFiles(tmp);
      try {
        for (const key of RESOURCE_KEYS) for (const o of s.resources[key]) files.add(key, o);
        for (const t of s.resources.bootstrapTokens) files.addToken(t);
      } catch (err) {
        files.close({ failed: true });
        throw err;
      }
      files.close();
    },
    { ...(opts.force === undefined ? {} : { force: opts.force }), origin: { flag: '--output' } },
  );
}

/** Every file of a saved snapshot except resources/ (which openResourceFiles writes). */
export async function writeSnapshotParts(s: Snapshot, tmp: string): Promise<void> {
  await writeJson(join(tmp, MANIFEST_FILE), s.manifest);
  await writeJson(join(tmp, 'kubeadm.json'), s.kubeadm);
  const components: { kubelet?: ComponentConfig; kubeProxy?: ComponentConfig; staticPods: StaticPod[] } = {
    staticPods: s.staticPods,
  };
  if (s.kubelet) components.kubelet = s.kubelet;
  if (s.kubeProxy) components.kubeProxy = s.kubeProxy;
  await writeJson(join(tmp, 'components.json'), components);
  await writeJson(join(tmp, 'served-certs.json'), s.servedCertificates);
  if (s.pki) await writeJson(join(tmp, 'pki.json'), s.pki);
  if (s.encryption) await writeJson(join(tmp, 'encryption.json'), s.encryption);
  if (s.etcd) await writeJson(join(tmp, 'etcd.json'), s.etcd);
  if (s.mgmt) await writeJson(join(tmp, 'mgmt.json'), s.mgmt);
  if (s.auditLog) await writeJson(join(tmp, 'audit-log.json'), s.auditLog);
  if (s.serverVersion) await writeJson(join(tmp, 'server-version.json'), s.serverVersion);
}

async function writeJson(path: string, value: unknown): Promise<void> {
  const fh = await open(path, 'wx', FILE_MODE);
  try {
    await fh.writeFile(`${JSON.stringify(value, null, 2)}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** resources/*.json being written as objects arrive (a live collection streams into them). */
export interface ResourceFiles {
  add(key: ResourceKey, obj: KubeObject): void;
  addToken(token: BootstrapToken): void;
  /** Objects written so far per file. */
  readonly counts: Readonly<Record<ResourceKey | 'bootstrapTokens', number>>;
  /** The files as they are now; calling the result cuts them back to it (a list that starts over). */
  checkpoint(): () => void;
  /** Ends every array and syncs the files; after a failure it only releases them. */
  close(opts?: { failed?: boolean }): void;
}

type FileKey = ResourceKey | 'bootstrapTokens';
const FLUSH_AT = 1 << 20;

/**
 * Opens resources/<key>.json for every key under `tmp`. Each is `[`, one JSON value per line
 * separated by commas, `]`: valid JSON that readJsonArray reads line by line. Writes are
 * synchronous appends in 1 MiB chunks, so a caller may add from a synchronous callback.
 */
export async function openResourceFiles(tmp: string): Promise<ResourceFiles> {
  await mkdir(join(tmp, 'resources'), { mode: 0o700 });
  const keys: FileKey[] = [...RESOURCE_KEYS, 'bootstrapTokens'];
  const files = new Map<FileKey, { fd: number; pos: number; buf: string; n: number }>();
  try {
    for (const key of keys) {
      const fd = openSync(join(tmp, 'resources', `${key}.json`), 'wx', FILE_MODE);
      files.set(key, { fd, pos: 0, buf: '[\n', n: 0 });
    }
  } catch (err) {
    for (const f of files.values()) closeSync(f.fd);
    throw err;
  }
  const counts = Object.fromEntries(keys.map((k) => [k, 0])) as Record<FileKey, number>;
  const flush = (f: { fd: number; pos: number; buf: string }) => {
    if (f.buf === '') return;
    const b = Buffer.from(f.buf);
    writeSync(f.fd, b, 0, b.length, f.pos);
    f.pos += b.length;
    f.buf = '';
  };
  const put = (key: FileKey, value: unknown) => {
    const f = files.get(key)!;
    f.buf += f.n === 0 ? JSON.stringify(value) : `,\n${JSON.stringify(value)}`;
    f.n++;
    counts[key] = f.n;
    if (f.buf.length > FLUSH_AT) flush(f);
  };
  let closed = false;
  return {
    add: put,
    addToken: (t) => put('bootstrapTokens', t),
    counts,
    checkpoint() {
      const marks = [...files].map(([key, f]) => {
        flush(f);
        return { key, f, pos: f.pos, n: f.n };
      });
      return () => {
        for (const m of marks) {
          m.f.buf = '';
          ftruncateSync(m.f.fd, m.pos);
          m.f.pos = m.pos;
          m.f.n = m.n;
          counts[m.key] = m.n;
        }
      };
    },
    close(opts = {}) {
      if (closed) return;
      closed = true;
      for (const f of files.values()) {
        try {
          if (!opts.failed) {
            f.buf += f.n === 0 ? ']\n' : '\n]\n';
            flush(f);
            fsyncSync(f.fd);
          }
        } finally {
          closeSync(f.fd);
        }
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------

export async function readSavedSnapshot(dir: string): Promise<Snapshot> {
  const manifestPath = join(dir, MANIFEST_FILE);
  const manifestValue = await readJson(manifestPath);
  if (manifestValue === undefined) {
    throw inputError(
      `${dir} is not a saved snapshot: it has no ${MANIFEST_FILE}`,
      { file: manifestPath },
      'give a directory written by `ferry snapshot`, or a files directory (docs/snapshot-layout.md)',
    );
  }
  let manifest = validateManifest(manifestValue, manifestPath);
  if (manifest.formatVersion === 1) {
    // Format 1 recorded a refused or unserved list only as a warning: read it as not observed.
    manifest = {
      ...manifest,
      formatVersion: SNAPSHOT_FORMAT_VERSION,
      unobserved: unobservedFromWarnings(manifest.warnings),
    };
  }
  for (const part of manifest.parts) {
    const file = PART_FILES[part];
    if (file && !(await fileExists(join(dir, file)))) {
      throw inputError(
        `the manifest lists part "${part}" but ${file} is missing`,
        { file: join(dir, file) },
        'the saved snapshot is incomplete: take it again with `ferry snapshot`',
      );
    }
  }

  const kubeadmPath = join(dir, 'kubeadm.json');
  const kubeadm = await readRequired(kubeadmPath);
  validateKubeadmFile(kubeadm, kubeadmPath);
  const componentsPath = join(dir, 'components.json');
  const components = await readRequired(componentsPath);
  validateComponentsFile(components, componentsPath);
  const c = components as { kubelet?: ComponentConfig; kubeProxy?: ComponentConfig; staticPods: StaticPod[] };

  const snapshot: Snapshot = {
    manifest,
    kubeadm: kubeadm as KubeadmConfig,
    staticPods: c.staticPods,
    servedCertificates: [],
    resources: emptyResources(),
  };
  if (c.kubelet) snapshot.kubelet = c.kubelet;
  if (c.kubeProxy) snapshot.kubeProxy = c.kubeProxy;

  const served = await readOptional(join(dir, 'served-certs.json'), validateServedCertsFile);
  if (served) snapshot.servedCertificates = served as ServedCertificate[];
  const pki = await readOptional(join(dir, 'pki.json'), validatePkiFile);
  if (pki) snapshot.pki = pki as PkiInventory;
  const enc = await readOptional(join(dir, 'encryption.json'), validateEncryptionFile);
  if (enc) snapshot.encryption = enc as EncryptionConfig;
  const etcd = await readOptional(join(dir, 'etcd.json'), validateEtcdFile);
  if (etcd) snapshot.etcd = etcd as EtcdState;
  const audit = await readOptional(join(dir, 'audit-log.json'), validateAuditLogFile);
  if (audit) snapshot.auditLog = audit as AuditLogSummary;
  // Snapshots saved before ferry recorded GET /version have no such file: nothing to read.
  const version = await readOptional(join(dir, 'server-version.json'), validateServerVersionFile);
  if (version) snapshot.serverVersion = version as ServerVersionInfo;
  const mgmt = await readOptional(join(dir, 'mgmt.json'), validateMgmtSnapshot);
  if (mgmt) snapshot.mgmt = mgmt as MgmtSnapshot;

  for (const key of RESOURCE_KEYS) {
    const file = join(dir, 'resources', `${key}.json`);
    snapshot.resources[key] = (await readJsonArray(file)).map((item, i) =>
      validateResourceItem(item, file, i),
    );
  }
  const tokensFile = join(dir, 'resources', 'bootstrapTokens.json');
  const tokens = await readJsonArray(tokensFile);
  tokens.forEach((t, i) => {
    validateBootstrapToken(t, tokensFile, i);
  });
  snapshot.resources.bootstrapTokens = tokens as BootstrapToken[];
  return snapshot;
}

async function readRequired(path: string): Promise<unknown> {
  const v = await readJson(path);
  if (v === undefined) {
    throw inputError(
      `${path} is missing`,
      { file: path },
      'the saved snapshot is incomplete: take it again with `ferry snapshot`',
    );
  }
  return v;
}

async function readOptional(path: string, validate: (v: unknown, file: string) => void): Promise<unknown> {
  const v = await readJson(path);
  if (v !== undefined) validate(v, path);
  return v;
}

const ORIGIN = { provide: 'take the snapshot again with `ferry snapshot`' };

async function fileExists(path: string): Promise<boolean> {
  return (await pathState(path, 'file', ORIGIN)) === 'present';
}

/** The parsed file, or undefined when it does not exist. */
async function readJson(path: string): Promise<unknown> {
  const text = await readOptionalTextFile(path, ORIGIN);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw jsonError(text, cause as Error, { file: path });
  }
}

/**
 * Reads a JSON array written by openResourceFiles line by line; a file in any other JSON layout (a
 * hand-edited one) is parsed whole. A missing file is an empty array.
 */
async function readJsonArray(path: string): Promise<unknown[]> {
  if (!(await fileExists(path))) return [];
  const items: unknown[] = [];
  let streamed = true;
  const input = createReadStream(path, { encoding: 'utf8' });
  try {
    const rl = createInterface({ input, crlfDelay: Infinity });
    let first = true;
    let closed = false;
    for await (const line of rl) {
      if (first) {
        first = false;
        if (line !== '[') {
          streamed = false;
          break;
        }
        continue;
      }
      if (closed) {
        if (line.trim() !== '') {
          streamed = false;
          break;
        }
        continue;
      }
      if (line === ']') {
        closed = true;
        continue;
      }
      try {
        items.push(JSON.parse(line.endsWith(',') ? line.slice(0, -1) : line));
      } catch {
        streamed = false;
        break;
      }
    }
    if (!closed) streamed = false;
    rl.close();
  } catch (err) {
    throw pathError(path, problemOf(path, err), ORIGIN, err);
  } finally {
    // Leaving the loop early closes readline but not the file.
    input.destroy();
  }
  if (streamed) return items;
  const whole = await readJson(path);
  if (!Array.isArray(whole)) {
    throw inputError(
      'expected a JSON array of objects',
      { file: path },
      'the saved snapshot was changed or damaged: take it again with `ferry snapshot`',
    );
  }
  return whole;
}
