/**
 * Structural checks at the boundary: small predicates shared by the loaders, and the validation
 * of a saved snapshot's files (store.ts). Every failure is an input error naming the file and the
 * field, so a hand-edited or foreign snapshot is rejected with something the user can act on.
 */
import { inputError, type Location } from '../errors.js';
import { formatPath, isRecord, type Path, type Problem, Walk } from '../util/walk.js';
import {
  type KubeObject,
  type NotObserved,
  SNAPSHOT_FORMAT_VERSION,
  SNAPSHOT_INPUTS,
  type SnapshotManifest,
  type SnapshotPart,
} from './model.js';
import { objectShapeProblem, type ShapeProblem } from './object-shapes.js';
import { componentConfigProblem, flagProblem } from './value-kinds.js';
import { type ValueKind, valueProblem } from './values.js';

export { isRecord };

/** A Kubernetes object as ferry needs it: apiVersion, kind and metadata.name are strings. */
export function isKubeObject(v: unknown): v is KubeObject {
  return (
    isRecord(v) &&
    typeof v.apiVersion === 'string' &&
    typeof v.kind === 'string' &&
    isRecord(v.metadata) &&
    typeof v.metadata.name === 'string'
  );
}

// ---------------------------------------------------------------------------------------------
// Saved snapshot validation

export const SNAPSHOT_PARTS: readonly SnapshotPart[] = [
  'kubeadm',
  'flags',
  'kubelet',
  'kube-proxy',
  'pki',
  'encryption',
  'etcd',
  'resources',
  'served-certs',
  'audit-log',
  'server-version',
  'mgmt',
];

const REMEDIATION =
  'the saved snapshot was changed or damaged: take it again with `ferry snapshot` (or `ferry snapshot --from DIR`)';

/** The walk of one saved file: each problem throws the input error naming the file and the field. */
function walkFile(v: unknown, file: string, at: Path = []): Walk {
  const report = (p: Problem): never => {
    const loc: Location = { file };
    if (p.path.length > 0) loc.field = formatPath(p.path);
    throw inputError(problemMessage(p), loc, REMEDIATION);
  };
  return Walk.root(v, report, { at });
}

function problemMessage(p: Problem): string {
  switch (p.kind) {
    case 'missing':
      return `expected ${p.expected ?? 'a value'}, found nothing`;
    case 'wrong':
      return `expected ${p.expected}, found ${describeValue(p.found)}`;
    case 'unknown-field':
      return `expected one of the fields ${p.allowed.join(', ')}`;
    case 'invalid':
      return p.message;
  }
}

/** An optional string field holding a value of `kind` (values.ts). */
function optValue(w: Walk, kind: ValueKind): void {
  if (w.absent || w.value === '') return;
  value(w, kind);
}

function value(w: Walk, kind: ValueKind): void {
  const text = w.string();
  const problem = valueProblem(kind, text);
  if (problem) w.invalid(`${JSON.stringify(text)} is ${problem}`);
}

/** A list of strings, each a value of `kind`. */
function values(w: Walk, kind: ValueKind): void {
  for (const x of w.items()) value(x, kind);
}

function strings(w: Walk): void {
  for (const x of w.items()) x.string();
}

/** A uint64 kept as a decimal string (etcd member IDs). */
function uint64(w: Walk): void {
  w.string({ pattern: /^\d+$/, expected: 'a decimal uint64 string' });
}

function sourceRef(w: Walk): void {
  w.object();
  const kind = w.at('kind').string();
  switch (kind) {
    case 'object':
      w.at('objectKind').string();
      w.at('name').string();
      return;
    case 'file':
      w.at('path').string();
      return;
    case 'flag':
      w.at('component').string();
      w.at('flag').string();
      sourceRef(w.at('from'));
      return;
    case 'etcd':
      w.at('endpoint').string();
      return;
    case 'tls':
      w.at('address').string();
      return;
    case 'api':
      w.at('server').string();
      w.at('path').string();
      w.at('field').given()?.string();
      return;
    case 'derived':
      w.at('note').string();
      for (const x of w.at('from').items()) sourceRef(x);
      return;
    default:
      w.at('kind').wrong('one-of', 'one of object, file, flag, etcd, tls, api, derived');
  }
}

/** Flags of `component`: names and values are strings, values of the kinds value-kinds.ts gives them. */
function flags(w: Walk, component?: string): void {
  for (const f of w.items()) {
    f.object();
    const name = f.at('name').string();
    const value = f.at('value').string();
    const bad = component === undefined ? undefined : flagProblem(component, { name, value });
    if (bad) f.at('value').invalid(`--${name} ${JSON.stringify(value)} is ${bad.problem}`);
  }
}

/** A short rendering of a wrong value for a message (long strings cut). */
export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return `${typeof v} ${String(v)}`;
}

export function validateManifest(v: unknown, file: string): SnapshotManifest {
  const w = walkFile(v, file);
  const o = w.object();
  const fv = o.formatVersion;
  if (fv !== SNAPSHOT_FORMAT_VERSION && fv !== 1) {
    throw inputError(
      `unsupported snapshot format version ${JSON.stringify(fv)}: this ferry reads format versions 1 to ${SNAPSHOT_FORMAT_VERSION}`,
      { file, field: 'formatVersion' },
      `take the snapshot again with this ferry (\`ferry snapshot\`), or read it with the ferry version named in its ferryVersion field`,
    );
  }
  const createdAt = w.at('createdAt');
  if (Number.isNaN(Date.parse(createdAt.string()))) createdAt.wrong('string', 'an ISO-8601 time');
  w.at('ferryVersion').string();
  const src = w.at('source');
  src.object();
  const kind = src.at('kind').string();
  if (kind === 'live') {
    src.at('server').string();
    src.at('context').given()?.string();
  } else if (kind === 'files') {
    src.at('path').string();
  } else {
    src.at('kind').wrong('one-of', '"live" or "files"');
  }
  for (const p of w.at('parts').items()) p.oneOf(SNAPSHOT_PARTS);
  strings(w.at('warnings'));
  const manifest = o as unknown as SnapshotManifest;
  // Format 1 has neither field; store.ts derives `unobserved` from its warnings.
  if (fv === 1) return manifest;
  w.at('partial').given()?.bool();
  const unobserved = w.at('unobserved').given();
  for (const n of unobserved?.items() ?? []) {
    n.object();
    n.at('input').oneOf(SNAPSHOT_INPUTS);
    n.at('reason').oneOf(['forbidden', 'not-served'] satisfies NotObserved['reason'][]);
    n.at('verb').oneOf(['list', 'get'] satisfies NotObserved['verb'][]);
    n.at('group').string();
    n.at('resource').string();
    n.at('namespace').given()?.string();
    n.at('name').given()?.string();
    n.at('message').string();
  }
  return manifest;
}

function validateComponentConfig(w: Walk): void {
  w.object();
  w.at('apiVersion').string();
  const kind = w.at('kind').string();
  sourceRef(w.at('source'));
  const spec = w.at('spec').object();
  const bad = componentConfigProblem(kind, spec);
  if (bad) {
    const shown = typeof bad.value === 'string' ? JSON.stringify(bad.value) : describeValue(bad.value);
    w.at('spec', ...bad.path).invalid(`${shown} is ${bad.problem}`);
  }
}

function validateControlPlaneComponent(w: Walk, component: string): void {
  w.object();
  flags(w.at('extraArgs'), component);
  for (const m of w.at('extraVolumes').items()) {
    m.object();
    m.at('name').string();
    m.at('hostPath').string();
    m.at('mountPath').string();
  }
}

export function validateKubeadmFile(v: unknown, file: string): void {
  const w = walkFile(v, file);
  w.object();
  const c = w.at('clusterConfiguration').given();
  if (c) {
    c.object();
    c.at('sourceApiVersion').string();
    sourceRef(c.at('source'));
    for (const k of ['clusterName', 'kubernetesVersion', 'imageRepository']) c.at(k).given()?.string();
    optValue(c.at('controlPlaneEndpoint'), 'endpoint');
    c.at('featureGates').object();
    const net = c.at('networking');
    net.object();
    optValue(net.at('podSubnet'), 'cidrs');
    optValue(net.at('serviceSubnet'), 'cidrs');
    optValue(net.at('dnsDomain'), 'dns-name');
    validateControlPlaneComponent(c.at('apiServer'), 'kube-apiserver');
    values(c.at('apiServer', 'certSANs'), 'san');
    validateControlPlaneComponent(c.at('controllerManager'), 'kube-controller-manager');
    validateControlPlaneComponent(c.at('scheduler'), 'kube-scheduler');
    const etcd = c.at('etcd');
    etcd.object();
    const local = etcd.at('local').given();
    if (local) {
      local.object();
      flags(local.at('extraArgs'), 'etcd');
      values(local.at('serverCertSANs'), 'san');
      values(local.at('peerCertSANs'), 'san');
    }
    const external = etcd.at('external').given();
    if (external) {
      external.object();
      values(external.at('endpoints'), 'url');
    }
    c.at('dns').object();
    strings(c.at('unknownFields'));
  }
  for (const e of w.at('nodeConfigurations').items()) {
    e.object();
    e.at('kind').oneOf(['InitConfiguration', 'JoinConfiguration'], {
      expected: 'InitConfiguration or JoinConfiguration',
    });
    sourceRef(e.at('source'));
    e.at('nodeRegistration').object();
    flags(e.at('nodeRegistration', 'kubeletExtraArgs'), 'kubelet');
    const l = e.at('localAPIEndpoint').given();
    if (l) {
      l.object();
      optValue(l.at('advertiseAddress'), 'ip');
      l.at('bindPort').given()?.number();
    }
    strings(e.at('bootstrapTokenIds'));
  }
}

export function validateComponentsFile(v: unknown, file: string): void {
  const w = walkFile(v, file);
  w.object();
  const kubelet = w.at('kubelet').given();
  if (kubelet) validateComponentConfig(kubelet);
  const kubeProxy = w.at('kubeProxy').given();
  if (kubeProxy) validateComponentConfig(kubeProxy);
  for (const e of w.at('staticPods').items()) {
    e.object();
    const component = e.at('component').string();
    e.at('node').given()?.string();
    e.at('image').given()?.string();
    strings(e.at('command'));
    flags(e.at('flags'), component);
    e.at('hostPathVolumes').array();
    sourceRef(e.at('source'));
  }
}

function validateCertificate(w: Walk): void {
  w.object();
  for (const k of [
    'path',
    'subject',
    'issuer',
    'serialNumber',
    'notBefore',
    'notAfter',
    'keyAlgorithm',
    'fingerprintSha256',
    'publicKeySha256',
  ]) {
    w.at(k).string();
  }
  w.at('index').number();
  w.at('isCA').bool();
  w.at('selfSigned').bool();
  for (const k of ['dnsNames', 'ipAddresses', 'keyUsages', 'extendedKeyUsages']) strings(w.at(k));
  w.at('chain').object();
  w.at('chain', 'verified').bool();
}

export function validatePkiFile(v: unknown, file: string): void {
  const w = walkFile(v, file);
  w.object();
  w.at('root').string();
  for (const c of w.at('certificates').items()) validateCertificate(c);
  for (const k of w.at('keys').items()) {
    const ko = k.object();
    k.at('path').string();
    k.at('encrypted').bool();
    if (ko.matchesCertificate !== null) k.at('matchesCertificate').string();
    // A private key's material must never be in a snapshot: refuse a file that smuggles one in.
    for (const forbidden of ['pem', 'der', 'privateKey', 'secret']) {
      if (ko[forbidden] !== undefined)
        k.at(forbidden).invalid('expected no private key material, found key material (not shown)');
    }
  }
  w.at('publicKeys').array();
  for (const p of w.at('problems').items()) {
    p.object();
    p.at('path').string();
    p.at('problem').string();
    p.at('message').string();
  }
}

export function validateServedCertsFile(v: unknown, file: string): void {
  const w = walkFile(v, file);
  for (const c of w.items()) {
    c.object();
    c.at('address').string();
    c.at('role').string();
    c.at('role').oneOf(['endpoint', 'control-plane', 'etcd']);
    const cert = c.at('certificate').given();
    if (cert) validateCertificate(cert);
    c.at('error').given()?.string();
  }
}

export function validateEncryptionFile(v: unknown, file: string): void {
  const w = walkFile(v, file);
  w.object();
  sourceRef(w.at('source'));
  for (const r of w.at('resources').items()) {
    r.object();
    strings(r.at('resources'));
    for (const p of r.at('providers').items()) {
      const po = p.object();
      p.at('type').string();
      p.at('type').oneOf(['aescbc', 'aesgcm', 'secretbox', 'kms', 'identity']);
      strings(p.at('keyNames'));
      strings(p.at('keyFingerprints'));
      if (po.secret !== undefined || po.keys !== undefined)
        p.at('keys').invalid('expected no key secrets, found a secret (not shown)');
    }
  }
}

export function validateEtcdFile(v: unknown, file: string): void {
  const w = walkFile(v, file);
  w.object();
  sourceRef(w.at('source'));
  for (const m of w.at('members').items()) {
    m.object();
    uint64(m.at('id'));
    m.at('name').string();
    values(m.at('peerURLs'), 'url');
    values(m.at('clientURLs'), 'url');
    m.at('isLearner').bool();
  }
  for (const e of w.at('endpoints').items()) {
    e.object();
    e.at('endpoint').string();
    for (const k of ['memberId', 'leaderId']) {
      const id = e.at(k).given();
      if (id) uint64(id);
    }
    e.at('version').given()?.string();
    e.at('dbSize').given()?.number();
    e.at('dbSizeInUse').given()?.number();
    for (const k of ['raftTerm', 'raftIndex']) {
      const n = e.at(k).given();
      if (n) uint64(n);
    }
    e.at('isLearner').given()?.bool();
    strings(e.at('errors'));
  }
  const version = w.at('version').given();
  if (version) {
    version.object();
    version.at('server').string();
    version.at('cluster').string();
  }
  for (const a of w.at('alarms').items()) {
    a.object();
    uint64(a.at('memberId'));
    a.at('alarm').string();
  }
}

export function validateAuditLogFile(v: unknown, file: string): void {
  const w = walkFile(v, file);
  w.object();
  sourceRef(w.at('source'));
  w.at('events').number();
  for (const a of w.at('anonymous').items()) {
    a.object();
    a.at('path').string();
    a.at('userAgent').given()?.string();
    strings(a.at('sourceIPs'));
    a.at('count').number();
  }
}

export function validateServerVersionFile(v: unknown, file: string): void {
  const w = walkFile(v, file);
  w.object();
  sourceRef(w.at('source'));
  const info = w.at('info');
  info.object();
  info.at('gitVersion').string();
  for (const [, x] of info.entries()) x.string();
}

/** The input error for an object field of the wrong shape: file (and line), object and field. */
export function objectShapeError(
  o: KubeObject,
  problem: ShapeProblem,
  where: { file?: string; line?: number; column?: number },
  remediation: string,
) {
  const m = o.metadata;
  const loc: Location = {
    ...where,
    object: `${o.kind} ${m.namespace ? `${m.namespace}/` : ''}${m.name}`,
    field: formatPath(problem.path),
  };
  if (problem.problem !== undefined)
    return inputError(`${JSON.stringify(problem.found)} is ${problem.problem}`, loc, remediation);
  // A Secret's value may be a credential: say what is wrong, never what it is.
  const found =
    problem.expected === 'base64' ? 'a value that is not (not shown)' : describeValue(problem.found);
  return inputError(`expected ${problem.expected}, found ${found}`, loc, remediation);
}

/** One item of resources/KIND.json: cheap checks only, the files can hold 150,000 pods. */
export function validateResourceItem(v: unknown, file: string, index: number): KubeObject {
  if (isKubeObject(v)) {
    const problem = objectShapeProblem(v);
    if (problem) throw objectShapeError(v, problem, { file }, REMEDIATION);
    return v;
  }
  const w = walkFile(v, file, [index]);
  w.object();
  w.at('apiVersion').string();
  w.at('kind').string();
  w.at('metadata').object();
  return w.at('metadata', 'name').wrong('string', 'a string');
}

export function validateBootstrapToken(v: unknown, file: string, index: number): void {
  const w = walkFile(v, file, [index]);
  const o = w.object();
  w.at('id').string();
  w.at('expiration').given()?.string();
  strings(w.at('usages'));
  strings(w.at('authExtraGroups'));
  sourceRef(w.at('source'));
  for (const forbidden of ['secret', 'token', 'tokenSecret']) {
    if (o[forbidden] !== undefined)
      w.at(forbidden).invalid('expected no token secret, found a token secret (not shown)');
  }
}
