/**
 * Live collection: builds a Snapshot from a running cluster through ports (KubeReader, EtcdReader,
 * a TLS peer-certificate fetcher). No client library is imported here; the CLI wires adapters in
 * and tests can wire fakes.
 *
 * What ferry reads is the one list in reads.ts. A list or read the server refuses (403) or does
 * not serve (404) is recorded as not observed (manifest.unobserved, with the verb and resource to
 * grant) and warned about once, never kept as an empty list: the audit skips what needs it and
 * `ferry snapshot` refuses to write it unless told (--allow-partial). An endpoint that refuses the
 * handshake is a warning; what makes the whole snapshot meaningless (unreachable server, rejected
 * credentials) is an error.
 */

import { FerryError, inputError } from '../errors.js';
import type { EtcdReader } from '../ports/etcd.js';
import { isKubeApiError, type KubeReader, type ServerVersion } from '../ports/kube.js';
import { RESOURCE_TYPES } from '../ports/kube-kinds.js';
import { VERSION } from '../version.js';
import { lastFlag } from './flags.js';
import { gitopsSummary } from './gitops.js';
import { parseKubeadmDocuments } from './kubeadm.js';
import {
  type BootstrapToken,
  type ComponentConfig,
  emptyResources,
  type KubeadmConfig,
  type KubeObject,
  type NotObserved,
  type PkiInventory,
  RESOURCE_KEYS,
  type ResourceKey,
  type Resources,
  type ServedCertificate,
  type ServerVersionInfo,
  SNAPSHOT_FORMAT_VERSION,
  type Snapshot,
  type SnapshotPart,
  type SourceRef,
  type StaticPod,
} from './model.js';
import { objectShapeProblem } from './object-shapes.js';
import { certificateInfoFromDer } from './pki.js';
import {
  COLLECTION_GETS,
  COLLECTION_LISTS,
  type CollectionGet,
  type CollectionList,
  describeList,
} from './reads.js';
import {
  BOOTSTRAP_TOKEN_SECRET_TYPE,
  bootstrapTokenFromSecret,
  hasAnonymousSubject,
  routeOf,
  stripIngestNoise,
} from './resources.js';
import { staticPodFromMirrorPod } from './static-pods.js';
import { type FetchPeerCertificate, fetchPeerCertificate, joinHostPort, splitHostPort } from './tls.js';
import { objectShapeError } from './validate.js';

export interface CollectDeps {
  kube: KubeReader;
  etcd?: EtcdReader;
  /** PKI inventory made from --pki, if given. */
  pki?: PkiInventory;
  fetchPeerCertificate?: FetchPeerCertificate;
  tlsTimeoutMs?: number;
  pageSize?: number;
  now?: Date;
  /** What the collection is doing, as it happens (the CLI renders it on stderr). */
  progress?: (event: CollectEvent) => void;
  /**
   * Where listed objects go as their pages arrive (`ferry snapshot` writes them to disk); the
   * returned snapshot's resources are then empty. Default: held in the returned snapshot.
   */
  sink?: ResourceSink;
}

/** Where a collection puts the objects it keeps. */
export interface ResourceSink {
  add(key: ResourceKey, obj: KubeObject): void;
  addToken(token: BootstrapToken): void;
  /** What was added so far; calling the result drops everything added since (a list that starts over). */
  checkpoint(): () => void;
}

export type CollectEvent =
  | { kind: 'step'; text: string }
  | { kind: 'page'; list: string; objects: number }
  | { kind: 'list-done'; list: string; objects: number; ms: number }
  | { kind: 'list-skipped'; list: string; why: string }
  /** A custom resource this server does not serve: its controller is not installed, so there are none. */
  | { kind: 'list-absent'; list: string }
  | { kind: 'list-retry'; list: string; what: string };

/** Holds the objects in `r` (audit --kubeconfig, tests). */
export function memorySink(r: Resources): ResourceSink {
  return {
    add: (key, obj) => r[key].push(obj),
    addToken: (t) => r.bootstrapTokens.push(t),
    checkpoint() {
      const lengths = [...RESOURCE_KEYS, 'bootstrapTokens' as const].map((k) => [k, r[k].length] as const);
      return () => {
        for (const [k, n] of lengths) r[k].length = n;
      };
    },
  };
}

/** How many lists a collection makes (progress: "n of LIST_COUNT"). */
export const LIST_COUNT = COLLECTION_LISTS.length;

/** The ingest filter of a list, applied per item as pages arrive. */
function ingestFilter(l: CollectionList): ((o: KubeObject) => KubeObject | undefined) | undefined {
  switch (l.ingest) {
    case undefined:
      return undefined;
    case 'anonymous-bindings':
      return keepAnonymousBinding;
    case 'bootstrap-token-secrets':
      return bootstrapTokenSecretWithoutSecret;
    case 'gitops-summary':
      return gitopsSummary;
  }
}

/**
 * The API server types its objects, but not the values ferry takes from them (a cilium-config pool
 * CIDR, a Node address): the same checks as for a files directory, naming the object and field.
 */
function checkShape(o: KubeObject): void {
  const problem = objectShapeProblem(o);
  if (problem)
    throw objectShapeError(
      o,
      problem,
      {},
      'correct the object in the cluster (kubectl edit), then take the snapshot again',
    );
}

export async function collectSnapshot(deps: CollectDeps): Promise<Snapshot> {
  const { kube } = deps;
  const warnings: string[] = [];
  const emit = deps.progress ?? (() => {});
  const progress = (text: string) => emit({ kind: 'step', text });

  progress(`contacting ${kube.server}`);
  const version = await unauthorizedAsInput(kube, () => kube.version());

  const resources = emptyResources();
  const sink = deps.sink ?? memorySink(resources);
  // Kept apart from the sink: the static pods and served certificates are read from them.
  const mirrorPods: KubeObject[] = [];
  const unobserved: NotObserved[] = [];
  const keep = (o: KubeObject): void => {
    const route = routeOf(o);
    if ('skip' in route) return;
    if (route.keep === 'bootstrapTokens') {
      sink.addToken(bootstrapTokenFromSecret(o));
      return;
    }
    checkShape(o);
    if (route.keep === 'pods' && isMirrorPod(o)) mirrorPods.push(o);
    sink.add(route.keep, o);
  };
  const lists = { deps, keep, sink, mirrorPods, warnings, unobserved, emit };
  for (const spec of COLLECTION_LISTS) await listInto(lists, spec);
  const configMaps = await readConfigMaps(kube, version, warnings, unobserved, progress);
  for (const cm of configMaps) keep(cm);

  const { kubeadm, kubelet, kubeProxy } = componentConfigs(configMaps, warnings);
  const staticPods = staticPodsFrom(mirrorPods, warnings);

  progress('reading served certificates');
  const servedCertificates = await readServedCertificates(deps, mirrorPods, warnings);

  let etcd: Snapshot['etcd'];
  if (deps.etcd) {
    progress('reading etcd');
    const r = await deps.etcd.readState();
    etcd = r.state;
    warnings.push(...r.warnings);
  }

  const parts: SnapshotPart[] = ['resources'];
  if (kubeadm.clusterConfiguration || kubeadm.nodeConfigurations.length > 0) parts.push('kubeadm');
  if (staticPods.length > 0) parts.push('flags');
  if (kubelet) parts.push('kubelet');
  if (kubeProxy) parts.push('kube-proxy');
  if (deps.pki) parts.push('pki');
  if (etcd) parts.push('etcd');
  if (servedCertificates.some((c) => c.certificate)) parts.push('served-certs');
  parts.push('server-version');

  const snapshot: Snapshot = {
    manifest: {
      formatVersion: SNAPSHOT_FORMAT_VERSION,
      createdAt: (deps.now ?? new Date()).toISOString(),
      source: { kind: 'live', server: kube.server, context: kube.context },
      ferryVersion: VERSION,
      parts,
      warnings,
      unobserved,
    },
    kubeadm,
    staticPods,
    servedCertificates,
    resources,
    serverVersion: serverVersionInfo(kube.server, version),
  };
  if (kubelet) snapshot.kubelet = kubelet;
  if (kubeProxy) snapshot.kubeProxy = kubeProxy;
  if (deps.pki) snapshot.pki = deps.pki;
  if (etcd) snapshot.etcd = etcd;
  return snapshot;
}

/** GET /version as the server answered it: every string field, since a snapshot keeps what the server said. */
function serverVersionInfo(server: string, v: ServerVersion): ServerVersionInfo {
  const info: ServerVersionInfo['info'] = { gitVersion: v.gitVersion };
  for (const [k, x] of Object.entries(v)) if (typeof x === 'string') info[k] = x;
  return { source: { kind: 'api', server, path: '/version' }, info };
}

// ---------------------------------------------------------------------------------------------
// Lists

interface ListContext {
  deps: CollectDeps;
  keep: (o: KubeObject) => void;
  sink: ResourceSink;
  mirrorPods: KubeObject[];
  warnings: string[];
  unobserved: NotObserved[];
  emit: (e: CollectEvent) => void;
}

/**
 * One list, its objects handed to `keep` page by page (nothing of it held here). A list that starts
 * over (expired continue token) first drops what it had handed on; retries and restarts are
 * reported. Not served or forbidden is recorded as not observed; anything else ends the
 * collection naming the list.
 */
async function listInto(ctx: ListContext, spec: CollectionList): Promise<void> {
  const { deps, keep, sink, mirrorPods, emit } = ctx;
  const t = RESOURCE_TYPES[spec.kind];
  const what = describeList(spec);
  const list = `${spec.optionalCrd ? `${t.plural}.${t.group}` : t.plural}${spec.namespace ? ` in ${spec.namespace}` : ''}`;
  const map = ingestFilter(spec);
  const started = Date.now();
  let rewind = sink.checkpoint();
  const mirrors = mirrorPods.length;
  let objects = 0;
  try {
    await unauthorizedAsInput(deps.kube, () =>
      deps.kube.list(spec.kind, {
        ...(spec.namespace !== undefined && { namespace: spec.namespace }),
        ...(spec.fieldSelector !== undefined && { fieldSelector: spec.fieldSelector }),
        ...(deps.pageSize !== undefined && { pageSize: deps.pageSize }),
        map: (o) => {
          const clean = stripIngestNoise(o);
          const kept = map ? map(clean) : clean;
          if (kept !== undefined) {
            keep(kept);
            objects++;
          }
          return undefined; // handed on: the reader holds nothing
        },
        onPage: () => emit({ kind: 'page', list, objects }),
        onRetry: (retry) => {
          if (retry.restart) {
            rewind();
            mirrorPods.length = mirrors;
            objects = 0;
            rewind = sink.checkpoint();
          }
          emit({ kind: 'list-retry', list, what: retry.message });
        },
      }),
    );
    emit({ kind: 'list-done', list, objects, ms: Date.now() - started });
  } catch (err) {
    rewind();
    mirrorPods.length = mirrors;
    const refused = refusal(err);
    if (refused?.reason === 'not-served' && spec.optionalCrd) {
      emit({ kind: 'list-absent', list });
      return;
    }
    if (refused) {
      ctx.unobserved.push({
        input: spec.input,
        reason: refused.reason,
        verb: 'list',
        group: t.group,
        resource: t.plural,
        ...(spec.namespace !== undefined && { namespace: spec.namespace }),
        message: refused.message,
      });
      ctx.warnings.push(`${what}: ${refusalText(refused.reason, 'list')}`);
      emit({ kind: 'list-skipped', list, why: refused.reason === 'forbidden' ? 'forbidden' : 'not served' });
      return;
    }
    if (err instanceof FerryError && err.kind === 'input') throw err; // already says what to fix
    const kind = err instanceof FerryError ? err.kind : 'internal';
    throw new FerryError(kind, `listing ${what} failed: ${(err as Error).message}; no snapshot was written`, {
      remediation:
        err instanceof FerryError && err.remediation
          ? err.remediation
          : 'check the API server and take the snapshot again',
      cause: err,
    });
  }
}

/** A 403 or 404 answer: the read did not happen, and the server said why. */
function refusal(err: unknown): { reason: NotObserved['reason']; message: string } | undefined {
  if (isKubeApiError(err, 403)) return { reason: 'forbidden', message: err.serverMessage };
  if (isKubeApiError(err, 404)) return { reason: 'not-served', message: err.serverMessage };
  return undefined;
}

/** The one thing a warning says about a read that did not happen. */
function refusalText(reason: NotObserved['reason'], verb: NotObserved['verb']): string {
  switch (reason) {
    case 'forbidden':
      return `forbidden for this user (HTTP 403): not observed, the snapshot does not know what it holds (grant ${verb}, see \`ferry snapshot --print-clusterrole\`)`;
    case 'not-served':
      return 'not served by this API server (HTTP 404): not observed, the snapshot does not know what it holds';
  }
}

/** 401 means the kubeconfig's credentials are wrong: bad input, not a crash. */
async function unauthorizedAsInput<T>(kube: KubeReader, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isKubeApiError(err, 401)) {
      throw inputError(
        `the API server at ${err.address} rejected the credentials of context "${kube.context}" (HTTP 401)`,
        { object: `kubeconfig context ${kube.context}`, field: 'users[].user' },
        'use an admin kubeconfig (a copy of /etc/kubernetes/admin.conf) or renew its certificate or token',
        err,
      );
    }
    throw err;
  }
}

function keepAnonymousBinding(o: KubeObject): KubeObject | undefined {
  return hasAnonymousSubject(o) ? o : undefined;
}

const SAFE_TOKEN_KEY = /^(token-id|expiration|description|auth-extra-groups|usage-bootstrap-[a-z-]+)$/;

/**
 * A bootstrap-token Secret reduced to the keys ferry may keep: `token-secret` (and anything not
 * known to be harmless) is dropped the moment the page arrives, before anything else sees it.
 */
export function bootstrapTokenSecretWithoutSecret(o: KubeObject): KubeObject | undefined {
  if (o.type !== BOOTSTRAP_TOKEN_SECRET_TYPE) return undefined;
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries((o.data ?? {}) as Record<string, unknown>)) {
    if (SAFE_TOKEN_KEY.test(k) && typeof v === 'string') data[k] = v;
  }
  const { stringData: _s, data: _d, ...rest } = o;
  return { ...rest, data };
}

// ---------------------------------------------------------------------------------------------
// ConfigMaps and component configuration

/**
 * The ConfigMaps of COLLECTION_GETS. Absent (404) is observed: the cluster has no such ConfigMap.
 * Forbidden is not observed, and says only that: no "not found" about the same object.
 */
async function readConfigMaps(
  kube: KubeReader,
  version: ServerVersion,
  warnings: string[],
  unobserved: NotObserved[],
  progress: (line: string) => void,
): Promise<KubeObject[]> {
  progress('reading configuration ConfigMaps');
  const out: KubeObject[] = [];
  for (const spec of COLLECTION_GETS) {
    const got = await getConfigMap(kube, spec, namesToAsk(spec, version));
    if (got.kind === 'found') out.push(stripIngestNoise(got.object));
    else if (got.kind === 'refused') {
      unobserved.push(got.unobserved);
      warnings.push(
        `ConfigMap ${spec.namespace}/${got.unobserved.name}: ${refusalText(got.unobserved.reason, 'get')}`,
      );
    } else if (spec.input === 'configmap kube-system/kubeadm-config') {
      warnings.push(
        'ConfigMap kube-system/kubeadm-config not found: no kubeadm ClusterConfiguration in the snapshot (is this a kubeadm cluster?)',
      );
    }
  }
  return out;
}

/** The first name; then the fallback this server's version would have used, if it is one. */
function namesToAsk(spec: CollectionGet, version: ServerVersion): string[] {
  const [first, ...fallbacks] = spec.names;
  const minor = (version.minor ?? '').replace(/\D+$/, '');
  const versioned = version.major === '1' && /^\d+$/.test(minor) ? `${first}-1.${minor}` : undefined;
  return [first!, ...fallbacks.filter((n) => n === versioned)];
}

type ConfigMapRead =
  | { kind: 'found'; object: KubeObject }
  | { kind: 'absent' }
  | { kind: 'refused'; unobserved: NotObserved };

async function getConfigMap(kube: KubeReader, spec: CollectionGet, names: string[]): Promise<ConfigMapRead> {
  for (const name of names) {
    try {
      const cm = await unauthorizedAsInput(kube, () => kube.get('configmaps', spec.namespace, name));
      if (cm) return { kind: 'found', object: cm };
    } catch (err) {
      // A 404 is an answer (get gives undefined); only a refusal is left.
      if (!isKubeApiError(err, 403)) throw err;
      return {
        kind: 'refused',
        unobserved: {
          input: spec.input,
          reason: 'forbidden',
          verb: 'get',
          group: '',
          resource: 'configmaps',
          namespace: spec.namespace,
          name,
          message: err.serverMessage,
        },
      };
    }
  }
  return { kind: 'absent' };
}

function componentConfigs(
  configMaps: KubeObject[],
  warnings: string[],
): { kubeadm: KubeadmConfig; kubelet?: ComponentConfig; kubeProxy?: ComponentConfig } {
  const find = (name: RegExp) =>
    configMaps.find((c) => c.metadata.namespace === 'kube-system' && name.test(c.metadata.name));
  const parse = (cm: KubeObject | undefined, key: string) => {
    const text = (cm?.data as Record<string, unknown> | undefined)?.[key];
    if (!cm || typeof text !== 'string') return undefined;
    const object: SourceRef = {
      kind: 'object',
      objectKind: 'ConfigMap',
      namespace: 'kube-system',
      name: cm.metadata.name,
      field: `data.${key}`,
    };
    try {
      return parseKubeadmDocuments(text, { object });
    } catch (err) {
      // The cluster's own configuration is what it is; record why it could not be read.
      warnings.push(
        `ConfigMap kube-system/${cm.metadata.name} data.${key} could not be parsed: ${(err as Error).message}`,
      );
      return undefined;
    }
  };
  const kubeadm = parse(find(/^kubeadm-config$/), 'ClusterConfiguration')?.kubeadm ?? {
    nodeConfigurations: [],
  };
  const kubelet = parse(find(/^kubelet-config(-1\.\d+)?$/), 'kubelet')?.kubelet;
  const kubeProxy = parse(find(/^kube-proxy$/), 'config.conf')?.kubeProxy;
  return { kubeadm, ...(kubelet && { kubelet }), ...(kubeProxy && { kubeProxy }) };
}

// ---------------------------------------------------------------------------------------------
// Static pods from mirror pods

const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

function isMirrorPod(p: KubeObject): boolean {
  return p.metadata.namespace === 'kube-system' && p.metadata.annotations?.[MIRROR_ANNOTATION] !== undefined;
}

/**
 * Every kube-system mirror pod, not only kubeadm's four (tier=control-plane): a kube-vip or
 * haproxy static pod matters to the migration as much, and the files loader keeps them too.
 */
function staticPodsFrom(mirrorPods: KubeObject[], warnings: string[]): StaticPod[] {
  const out: StaticPod[] = [];
  for (const pod of mirrorPods) {
    try {
      const sp = staticPodFromMirrorPod(pod);
      if (sp) out.push(sp);
    } catch (err) {
      warnings.push(`mirror pod kube-system/${pod.metadata.name}: ${(err as Error).message}`);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Served certificates

const ADVERTISE_ANNOTATION = 'kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint';

interface Target {
  address: string;
  host: string;
  port: number;
  role: ServedCertificate['role'];
  node?: string;
}

/** Where each control plane's apiserver listens, from its mirror pod. */
export function apiserverTargets(mirrorPods: KubeObject[], warnings: string[]): Target[] {
  const out: Target[] = [];
  for (const pod of mirrorPods) {
    const component = pod.metadata.labels?.['component'] ?? pod.metadata.name.replace(/-[^-]*$/, '');
    if (component !== 'kube-apiserver') continue;
    const node: string | undefined = typeof pod.spec?.nodeName === 'string' ? pod.spec.nodeName : undefined;
    const sp = safeStaticPod(pod);
    const securePort = Number(sp ? (lastFlag(sp.flags, 'secure-port') ?? 6443) : 6443);
    const annotated = pod.metadata.annotations?.[ADVERTISE_ANNOTATION];
    const advertised = sp ? lastFlag(sp.flags, 'advertise-address') : undefined;
    const podIP: string | undefined = typeof pod.status?.podIP === 'string' ? pod.status.podIP : undefined;
    let hp: { host: string; port: number } | undefined;
    if (annotated) hp = splitHostPort(annotated, securePort);
    else if (advertised) hp = { host: advertised, port: securePort };
    else if (podIP) hp = { host: podIP, port: securePort }; // static pods run on the host network
    if (!hp) {
      warnings.push(
        `mirror pod kube-system/${pod.metadata.name}: no advertise address (annotation ${ADVERTISE_ANNOTATION}, --advertise-address or pod IP); its served certificate was not read`,
      );
      continue;
    }
    out.push({
      ...hp,
      address: joinHostPort(hp.host, hp.port),
      role: 'control-plane',
      ...(node && { node }),
    });
  }
  return out;
}

function safeStaticPod(pod: KubeObject): StaticPod | undefined {
  try {
    return staticPodFromMirrorPod(pod);
  } catch {
    return undefined;
  }
}

async function readServedCertificates(
  deps: CollectDeps,
  mirrorPods: KubeObject[],
  warnings: string[],
): Promise<ServedCertificate[]> {
  const fetch = deps.fetchPeerCertificate ?? fetchPeerCertificate;
  const endpoint = splitHostPort(deps.kube.server, 443);
  const targets: Target[] = [
    { ...endpoint, address: joinHostPort(endpoint.host, endpoint.port), role: 'endpoint' },
    ...apiserverTargets(mirrorPods, warnings),
  ];
  // One handshake per address even when the endpoint is also a control plane's address.
  const handshakes = new Map<string, Promise<Uint8Array>>();
  const der = (t: Target) => {
    let p = handshakes.get(t.address);
    if (!p) {
      p = fetch(t.host, t.port, { timeoutMs: deps.tlsTimeoutMs ?? 5_000 });
      handshakes.set(t.address, p);
    }
    return p;
  };
  return Promise.all(
    targets.map(async (t): Promise<ServedCertificate> => {
      const base: ServedCertificate = { address: t.address, role: t.role, ...(t.node && { node: t.node }) };
      try {
        return { ...base, certificate: certificateInfoFromDer(await der(t), t.address) };
      } catch (err) {
        const message = (err as Error).message;
        warnings.push(
          `served certificate of ${t.address} (${t.role}${t.node ? ` ${t.node}` : ''}): ${message}`,
        );
        return { ...base, error: message };
      }
    }),
  );
}
