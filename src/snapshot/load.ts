/**
 * Loads a snapshot from disk: a saved snapshot (it has manifest.json) or a files directory
 * assembled by hand (docs/snapshot-layout.md §1). Every bad input is an input error naming the
 * file (line and column for YAML), the object and what to do; loading never writes anything.
 */
import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { FerryError, inputError } from '../errors.js';
import { pathError, pathState, problemOf, readTextFile, requireDirectory } from '../util/input-file.js';
import { VERSION } from '../version.js';
import { summarizeAuditLogFile } from './audit-log.js';
import { parseEncryptionConfig } from './encryption.js';
import { loadEtcdDir } from './etcd-files.js';
import { parseKubeadmDocuments } from './kubeadm.js';
import { loadMgmtDir } from './mgmt.js';
import {
  type ComponentConfig,
  describeSource,
  emptyResources,
  type KubeadmConfig,
  type KubeObject,
  type Resources,
  type ServedCertificate,
  SNAPSHOT_FORMAT_VERSION,
  type Snapshot,
  type SnapshotPart,
  type SourceRef,
  type StaticPod,
} from './model.js';
import { objectShapeProblem } from './object-shapes.js';
import { assertPkiUsable, certificateInfoFromPem, inventoryPki } from './pki.js';
import { placeOf, recordPlace } from './places.js';
import { classifyObjects, routeOf, type SkipReason } from './resources.js';
import { staticPodFromManifest, staticPodFromMirrorPod } from './static-pods.js';
import { MANIFEST_FILE, readSavedSnapshot } from './store.js';
import { isRecord, objectShapeError, SNAPSHOT_PARTS } from './validate.js';
import { type FieldPath, type ParsedDoc, parseDocumentsByExtension } from './yaml.js';

export interface LoadOptions {
  /** Refuse a PKI that cannot be used (missing CA, mismatched or encrypted key). Default true. */
  strictPki?: boolean;
  /** The snapshot time for a files directory; default now. */
  now?: Date;
  /**
   * The directory a relative `path` is read from (a command's working directory); default the
   * process's. What the snapshot records keeps `path` as given (see Disk).
   */
  cwd?: string;
}

const LAYOUT_HINT = 'see docs/snapshot-layout.md for the expected layout';
const KUBEADM_FILE = 'kubeadm-config.yaml';

export async function loadSnapshot(path: string, opts: LoadOptions = {}): Promise<Snapshot> {
  const disk = new Disk(opts.cwd);
  await requireDirectory(disk.real(path), {
    shown: path,
    what: 'the snapshot',
    provide: `give a saved snapshot (written by \`ferry snapshot\`) or a files directory (a snapshot is a directory); ${LAYOUT_HINT}`,
  });
  if (await disk.isFile(join(path, MANIFEST_FILE))) {
    const s = await readSavedSnapshot(disk.real(path));
    if (opts.strictPki !== false && s.pki) assertPkiUsable(s.pki, s.pki.root);
    return s;
  }
  // kubeadm.json and components.json are written only by `ferry snapshot`: without its manifest,
  // this is a saved snapshot missing a part, not a files directory to read file by file.
  for (const part of SAVED_ONLY)
    if (await disk.isFile(join(path, part)))
      throw inputError(
        `${path} looks like a saved snapshot (it has ${part}) but has no ${MANIFEST_FILE}`,
        { file: join(path, MANIFEST_FILE) },
        'copy the whole snapshot directory again, or take the snapshot again with `ferry snapshot`',
      );
  return loadFilesDir(path, opts, disk);
}

const SAVED_ONLY = ['kubeadm.json', 'components.json'];

async function loadFilesDir(root: string, opts: LoadOptions, disk: Disk): Promise<Snapshot> {
  const p = (...rel: string[]) => join(root, ...rel);
  const hasKubeadm = await disk.isFile(p(KUBEADM_FILE));
  const hasManifests = await disk.isDir(p('manifests'));
  const hasResources = await disk.isDir(p('resources'));
  if (!hasKubeadm && !hasManifests && !hasResources) {
    throw inputError(
      `${root} is neither a saved snapshot (no ${MANIFEST_FILE}) nor a files directory (none of ${KUBEADM_FILE}, manifests/, resources/)`,
      { file: root },
      `put at least one of ${KUBEADM_FILE}, manifests/ or resources/ in it; ${LAYOUT_HINT}`,
    );
  }
  const warnings: string[] = [];
  const parts = new Set<SnapshotPart>();

  let kubeadm: KubeadmConfig = { nodeConfigurations: [] };
  let kubelet: ComponentConfig | undefined;
  let kubeProxy: ComponentConfig | undefined;
  if (hasKubeadm) {
    const r = parseKubeadmDocuments(await disk.readText(p(KUBEADM_FILE)), { file: p(KUBEADM_FILE) });
    // An empty (or comment-only) file is a copy that went wrong, not a cluster without a config.
    if (!r.kubeadm.clusterConfiguration && r.kubeadm.nodeConfigurations.length === 0 && !r.kubelet)
      throw inputError(
        `${KUBEADM_FILE} holds no kubeadm configuration document`,
        { file: p(KUBEADM_FILE) },
        'copy it again (`kubectl -n kube-system get cm kubeadm-config -o jsonpath={.data.ClusterConfiguration}`), or remove the file to use resources/ alone',
      );
    kubeadm = r.kubeadm;
    kubelet = r.kubelet;
    kubeProxy = r.kubeProxy;
  }

  let staticPods: StaticPod[] = [];
  if (hasManifests) staticPods = await loadManifests(disk, p('manifests'), warnings);

  const resources = hasResources ? await loadResources(disk, p('resources'), warnings) : emptyResources();
  if (hasResources) parts.add('resources');

  // Fall back on what the cluster itself says when a file is absent.
  const cm = (namespace: string, name: string | RegExp) =>
    resources.configmaps
      .filter(
        (c) =>
          c.metadata.namespace === namespace &&
          (typeof name === 'string' ? c.metadata.name === name : name.test(c.metadata.name)),
      )
      .sort((a, b) => compareKubeletConfigNames(a.metadata.name, b.metadata.name))[0];
  // Parsed (and so checked) even when kubeadm-config.yaml has one: generate carries its text.
  const fromCm = parseConfigMapKey(cm('kube-system', 'kubeadm-config'), 'ClusterConfiguration');
  if (!kubeadm.clusterConfiguration && fromCm?.kubeadm.clusterConfiguration)
    kubeadm.clusterConfiguration = fromCm.kubeadm.clusterConfiguration;
  // The ConfigMaps are what kubelets and kube-proxy actually run with (kubeadm uploads them with its
  // defaults filled in, nodes download them at join), so they win over the kubeadm-config.yaml copy.
  kubelet = preferLive(
    kubelet,
    parseConfigMapKey(cm('kube-system', /^kubelet-config(-1\.\d+)?$/), 'kubelet')?.kubelet,
    warnings,
  );
  kubeProxy = preferLive(
    kubeProxy,
    parseConfigMapKey(cm('kube-system', 'kube-proxy'), 'config.conf')?.kubeProxy,
    warnings,
  );
  // Mirror pods fill in the control planes whose manifests were not copied; with flat
  // manifests/*.yaml the node is unknown, so they only stand in when there are no manifests.
  const covered = new Set(staticPods.map((sp) => sp.node));
  if (!covered.has(undefined)) {
    for (const pod of resources.pods) {
      const sp = staticPodFromMirrorPod(pod);
      if (sp && !covered.has(sp.node)) staticPods.push(sp);
    }
  }
  if (kubeadm.clusterConfiguration || kubeadm.nodeConfigurations.length > 0) parts.add('kubeadm');
  if (kubelet) parts.add('kubelet');
  if (kubeProxy) parts.add('kube-proxy');
  if (staticPods.length > 0) parts.add('flags');

  const snapshot: Snapshot = {
    manifest: {
      formatVersion: SNAPSHOT_FORMAT_VERSION,
      createdAt: (opts.now ?? new Date()).toISOString(),
      source: { kind: 'files', path: root },
      ferryVersion: VERSION,
      parts: [],
      warnings,
    },
    kubeadm,
    staticPods,
    servedCertificates: [],
    resources,
  };
  if (kubelet) snapshot.kubelet = kubelet;
  if (kubeProxy) snapshot.kubeProxy = kubeProxy;

  if (await disk.isDir(p('pki'))) {
    const inv = { ...(await inventoryPki(disk.real(p('pki')))), root: p('pki') };
    if (opts.strictPki !== false) assertPkiUsable(inv, p('pki'));
    snapshot.pki = inv;
    parts.add('pki');
  }
  if (await disk.isDir(p('etcd'))) {
    const etcd = await loadEtcdDir(disk.real(p('etcd')), p('etcd'));
    if (etcd) {
      snapshot.etcd = etcd;
      parts.add('etcd');
    } else {
      warnings.push(
        `${p('etcd')} holds none of member-list.json, endpoint-status.json, version.json, alarms.json`,
      );
    }
  }
  if (await disk.isFile(p('encryption-config.yaml'))) {
    const file = p('encryption-config.yaml');
    snapshot.encryption = parseEncryptionConfig(await disk.readText(file), file);
    parts.add('encryption');
  }
  if (await disk.isFile(p('audit.log'))) {
    const file = p('audit.log');
    const { summary, unparseable } = await summarizeAuditLogFile(disk.real(file), {
      kind: 'file',
      path: file,
    });
    if (unparseable > 0) warnings.push(`${file}: skipped ${unparseable} line(s) that are not audit events`);
    snapshot.auditLog = summary;
    parts.add('audit-log');
  }
  if (await disk.isDir(p('served-certs'))) {
    snapshot.servedCertificates = await loadServedCerts(disk, p('served-certs'), snapshot, warnings);
    if (snapshot.servedCertificates.length > 0) parts.add('served-certs');
  }
  if (await disk.isDir(p('mgmt'))) {
    snapshot.mgmt = await loadMgmtDir(disk.real(p('mgmt')));
    parts.add('mgmt');
  }
  snapshot.manifest.parts = SNAPSHOT_PARTS.filter((part) => parts.has(part));
  return snapshot;
}

// ---------------------------------------------------------------------------------------------
// manifests/

const YAML_OR_JSON = /\.(ya?ml|json)$/i;

async function loadManifests(disk: Disk, dir: string, warnings: string[]): Promise<StaticPod[]> {
  const pods: StaticPod[] = [];
  for (const e of await disk.list(dir)) {
    if (e.kind === 'directory') {
      // manifests/NODE/*.yaml: one folder per control-plane node.
      const node = e.name;
      for (const f of await disk.list(join(dir, node))) {
        if (f.kind === 'file' && YAML_OR_JSON.test(f.name))
          pods.push(...(await manifestFile(disk, join(dir, node, f.name), node)));
        else warnings.push(`ignored ${join(dir, node, f.name)}: not a .yaml, .yml or .json file`);
      }
    } else if (e.kind === 'file' && YAML_OR_JSON.test(e.name)) {
      pods.push(...(await manifestFile(disk, join(dir, e.name), undefined)));
    } else {
      warnings.push(`ignored ${join(dir, e.name)}: not a .yaml, .yml or .json file`);
    }
  }
  return pods;
}

async function manifestFile(disk: Disk, file: string, node: string | undefined): Promise<StaticPod[]> {
  const docs = parseDocumentsByExtension(await disk.readText(file), file, { file });
  if (docs.length === 0)
    throw inputError(
      'the static pod manifest is empty',
      { file },
      'copy it again from /etc/kubernetes/manifests/ on its control plane, or remove it',
    );
  return docs.map((d) =>
    staticPodFromManifest(d.value, { kind: 'file', path: file, line: d.line }, node, d.locate),
  );
}

// ---------------------------------------------------------------------------------------------
// resources/

async function loadResources(disk: Disk, dir: string, warnings: string[]): Promise<Resources> {
  const objects: KubeObject[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  for (const e of await disk.list(dir)) {
    const file = join(dir, e.name);
    if (e.kind !== 'file' || !YAML_OR_JSON.test(e.name)) {
      warnings.push(`ignored ${file}: not a .yaml, .yml or .json file`);
      continue;
    }
    for (const doc of parseDocumentsByExtension(await disk.readText(file), file, { file })) {
      for (const { obj, at } of objectsOf(doc, file)) {
        checkShape(obj, doc, at, file);
        const m = obj.metadata;
        const key = `${obj.kind}\u0000${m.namespace ?? ''}\u0000${m.name}`;
        if (seen.has(key)) {
          duplicates++;
          continue;
        }
        seen.add(key);
        // Where it was read, for errors found later inside it (places.ts).
        recordPlace(obj, {
          file,
          line: doc.locate(at)?.line ?? doc.line,
          lineOf: (field) => doc.locate([...at, ...field])?.line,
        });
        objects.push(obj);
      }
    }
  }
  if (duplicates > 0)
    warnings.push(`resources: ${duplicates} object(s) appeared more than once; the first copy was kept`);
  const skipped = new Map<string, number>();
  const resources = classifyObjects(objects, emptyResources(), (obj, reason: SkipReason) => {
    if (reason !== 'unknown-kind' && reason !== 'secret') return;
    const kind = isRecord(obj) ? String(obj.kind) : '?';
    skipped.set(kind, (skipped.get(kind) ?? 0) + 1);
  });
  if (skipped.size > 0) {
    const list = [...skipped].map(([k, n]) => `${n} ${k}`).join(', ');
    warnings.push(
      `resources: ignored objects ferry does not read (${list}); Secrets other than bootstrap tokens are never kept`,
    );
  }
  return resources;
}

/**
 * The fields ferry reads of an object it keeps must have their types (object-shapes.ts); the error
 * points at the field's line. Objects ferry drops (other Secrets, kinds it does not read) are not
 * its business.
 */
function checkShape(obj: KubeObject, doc: ParsedDoc, at: FieldPath, file: string): void {
  if ('skip' in routeOf(obj)) return;
  const problem = objectShapeProblem(obj);
  if (!problem) return;
  const pos = doc.locate([...at, ...problem.path]);
  // JSON carries no positions: better no line than line 1.
  const where = pos
    ? { file, line: pos.line, column: pos.column }
    : file.toLowerCase().endsWith('.json')
      ? { file }
      : { file, line: doc.line };
  throw objectShapeError(
    obj,
    problem,
    where,
    'correct the field (as the Kubernetes API types it), or dump the object again with `kubectl get -o yaml`',
  );
}

/** The objects of one document: a Kubernetes object, or the items of a List (typed or not). */
function objectsOf(doc: ParsedDoc, file: string): { obj: KubeObject; at: FieldPath }[] {
  const v = doc.value;
  const bad = (field: string | undefined, what: string, index?: number): never => {
    const at = index === undefined ? undefined : (doc.locate(['items', index]) ?? undefined);
    throw inputError(
      `not a Kubernetes object or List: ${what}`,
      {
        file,
        line: at?.line ?? doc.line,
        ...(at ? { column: at.column } : {}),
        ...(field ? { field } : {}),
      },
      'put only `kubectl get ... -o yaml|json` output in resources/ (an object, a List, or several YAML documents)',
    );
  };
  if (!isRecord(v)) return bad(undefined, 'the document is not a mapping');
  if (typeof v.kind !== 'string' || typeof v.apiVersion !== 'string') {
    return bad(typeof v.kind !== 'string' ? 'kind' : 'apiVersion', 'it has no apiVersion and kind');
  }
  if (v.kind.endsWith('List') && v.items !== undefined) {
    if (!Array.isArray(v.items)) return bad('items', 'items is not a list');
    const itemKind = v.kind === 'List' ? undefined : v.kind.slice(0, -4);
    return v.items.map((item, i) => {
      if (!isRecord(item)) return bad(`items[${i}]`, 'an item is not a mapping', i);
      const obj =
        itemKind && item.kind === undefined ? { apiVersion: v.apiVersion, kind: itemKind, ...item } : item;
      if (typeof obj.kind !== 'string' || typeof obj.apiVersion !== 'string') {
        return bad(`items[${i}].kind`, 'an item has no apiVersion and kind', i);
      }
      if (!isRecord(obj.metadata) || typeof obj.metadata.name !== 'string') {
        return bad(`items[${i}].metadata.name`, 'an item has no metadata.name', i);
      }
      return { obj: obj as KubeObject, at: ['items', i] };
    });
  }
  if (!isRecord(v.metadata) || typeof v.metadata.name !== 'string') {
    return bad('metadata.name', `${v.kind} without metadata.name`);
  }
  return [{ obj: v as KubeObject, at: [] }];
}

// ---------------------------------------------------------------------------------------------
// ConfigMap fallbacks

function parseConfigMapKey(cm: KubeObject | undefined, key: string) {
  const data: unknown = cm?.data;
  if (!cm || !isRecord(data) || typeof data[key] !== 'string') return undefined;
  const from = placeOf(cm);
  const object: SourceRef = {
    kind: 'object',
    objectKind: 'ConfigMap',
    namespace: cm.metadata.namespace ?? 'kube-system',
    name: cm.metadata.name,
    field: `data.${key}`,
  };
  try {
    return parseKubeadmDocuments(data[key] as string, { object });
  } catch (err) {
    // The embedded text's own line numbers mean nothing in the file: name the file and the line of
    // the ConfigMap key instead, and keep the object and field inside the embedded config.
    if (!(err instanceof FerryError) || !from || err.location?.file !== undefined) throw err;
    const line = from.lineOf?.(['data', key]);
    const { line: _line, column: _column, ...rest } = err.location ?? {};
    throw new FerryError(err.kind, err.message, {
      location: { ...rest, file: from.file, ...(line ? { line } : {}) },
      ...(err.remediation === undefined ? {} : { remediation: err.remediation }),
      cause: err.cause,
    });
  }
}

/** kubelet-config first, then kubelet-config-1.N newest first (kubeadm < 1.24 versioned it). */
function compareKubeletConfigNames(a: string, b: string): number {
  const minor = (n: string) => {
    const m = /-1\.(\d+)$/.exec(n);
    return m ? Number(m[1]) : Number.POSITIVE_INFINITY;
  };
  return minor(b) - minor(a) || a.localeCompare(b);
}

// ---------------------------------------------------------------------------------------------
// served-certs/

async function loadServedCerts(
  disk: Disk,
  dir: string,
  s: Snapshot,
  warnings: string[],
): Promise<ServedCertificate[]> {
  const endpoint = s.kubeadm.clusterConfiguration?.controlPlaneEndpoint;
  const nodeByIp = new Map<string, string>();
  for (const n of s.resources.nodes) {
    const addrs: unknown = n.status?.addresses;
    if (!Array.isArray(addrs)) continue;
    for (const a of addrs)
      if (isRecord(a) && typeof a.address === 'string') nodeByIp.set(a.address, n.metadata.name);
  }
  const out: ServedCertificate[] = [];
  for (const e of await disk.list(dir)) {
    const file = join(dir, e.name);
    if (e.kind !== 'file' || !/\.(pem|crt)$/i.test(e.name)) {
      warnings.push(`ignored ${file}: not a .pem file`);
      continue;
    }
    const m = /^(.+)_(\d{1,5})\.(pem|crt)$/i.exec(e.name);
    if (!m) {
      throw inputError(
        `cannot tell which address ${e.name} was served on`,
        { file },
        'name served certificates HOST_PORT.pem, e.g. 10.0.0.10_6443.pem or endpoint_6443.pem',
      );
    }
    const host = m[1] as string;
    const port = m[2] as string;
    const hostPort = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    let role: ServedCertificate['role'] = port === '2379' ? 'etcd' : 'control-plane';
    let address = hostPort;
    if (host === 'endpoint') {
      role = 'endpoint';
      if (endpoint) address = /:\d+$/.test(endpoint) ? endpoint : `${endpoint}:${port}`;
    } else if (endpoint === hostPort || endpoint === host) {
      role = 'endpoint';
    }
    let certificate: ServedCertificate['certificate'];
    try {
      // A served file may hold the chain; the leaf comes first.
      certificate = certificateInfoFromPem(await disk.readText(file), file)[0];
    } catch (err) {
      if (err instanceof FerryError) throw err;
      throw inputError(
        `not a PEM certificate: ${(err as Error).message}`,
        { file },
        'save the certificate with `openssl s_client -connect HOST:PORT </dev/null | openssl x509 > FILE`',
        err,
      );
    }
    const sc: ServedCertificate = { address, role, certificate };
    const node = nodeByIp.get(host);
    if (node !== undefined && role !== 'endpoint') sc.node = node;
    out.push(sc);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

/**
 * File access by the path as the user gave it: reads resolve it against `cwd`, while everything
 * recorded (SourceRefs, warnings, error locations) keeps the given path, so evidence reads
 * `examples/lab-cluster/kubeadm-config.yaml:5` rather than a path that only means something on the
 * machine that loaded it. Without `cwd` the given path is used as is.
 */
class Disk {
  constructor(private readonly cwd: string | undefined) {}

  /** The path the file system is asked for. */
  real(path: string): string {
    return this.cwd === undefined ? path : resolve(this.cwd, path);
  }

  /** True for a directory, false when nothing is there; anything else at the path is an input error. */
  async isDir(path: string): Promise<boolean> {
    return (await pathState(this.real(path), 'directory', this.origin(path))) === 'present';
  }

  /** True for a file, false when nothing is there; a directory, dangling link or loop is an input error. */
  async isFile(path: string): Promise<boolean> {
    return (await pathState(this.real(path), 'file', this.origin(path))) === 'present';
  }

  /**
   * Directory entries sorted by name, so a snapshot does not depend on the file system's order.
   * Symbolic links are followed (a copied manifest may be one).
   */
  async list(dir: string): Promise<Entry[]> {
    let entries: Dirent[];
    try {
      entries = await readdir(this.real(dir), { withFileTypes: true });
    } catch (err) {
      throw pathError(this.real(dir), problemOf(this.real(dir), err), this.origin(dir), err);
    }
    const out: Entry[] = [];
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const kind = e.isSymbolicLink()
        ? await this.linkKind(join(dir, e.name))
        : e.isDirectory()
          ? 'directory'
          : e.isFile()
            ? 'file'
            : 'other';
      out.push({ name: e.name, kind });
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * What a symbolic link leads to. One that leads nowhere (dangling, a loop) counts as a file: if
   * its name is one ferry reads, reading it says what is wrong; otherwise it is ignored like any.
   */
  private async linkKind(path: string): Promise<Entry['kind']> {
    try {
      const st = await stat(this.real(path));
      return st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'other';
    } catch {
      return 'file';
    }
  }

  async readText(file: string): Promise<string> {
    return readTextFile(this.real(file), this.origin(file));
  }

  private origin(path: string) {
    return { shown: path, provide: `copy the file again from the cluster; ${LAYOUT_HINT}` };
  }
}

/** A directory entry, symbolic links resolved. */
interface Entry {
  name: string;
  kind: 'file' | 'directory' | 'other';
}

/** The live ConfigMap wins; a disagreement with the file copy is never silent. */
function preferLive(
  fromFile: ComponentConfig | undefined,
  live: ComponentConfig | undefined,
  warnings: string[],
): ComponentConfig | undefined {
  if (!live) return fromFile;
  if (fromFile && JSON.stringify(fromFile.spec) !== JSON.stringify(live.spec)) {
    warnings.push(
      `${fromFile.kind} in ${describeSource(fromFile.source)} differs from ${describeSource(live.source)}; using the ConfigMap, which is what the nodes run with`,
    );
  }
  return live;
}
