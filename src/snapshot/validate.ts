/**
 * Structural checks at the boundary: small predicates shared by the loaders, and the validation
 * of a saved snapshot's files (store.ts). Every failure is an input error naming the file and the
 * field, so a hand-edited or foreign snapshot is rejected with something the user can act on.
 */
import { inputError, type Location } from '../errors.js';
import {
  type KubeObject,
  SNAPSHOT_FORMAT_VERSION,
  type SnapshotManifest,
  type SnapshotPart,
} from './model.js';
import { objectShapeProblem, type ShapeProblem } from './object-shapes.js';
import { componentConfigProblem, flagProblem } from './value-kinds.js';
import { type ValueKind, valueProblem } from './values.js';
import { formatPath } from './yaml.js';

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

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

/** Walks a parsed JSON value; every check failure names the file and the field path. */
export class Shape {
  constructor(
    readonly file: string,
    readonly path: string = '',
  ) {}

  at(key: string | number): Shape {
    const p = typeof key === 'number' ? `${this.path}[${key}]` : this.path ? `${this.path}.${key}` : key;
    return new Shape(this.file, p);
  }

  fail(expected: string, got: unknown): never {
    this.bad(`expected ${expected}, found ${describeValue(got)}`);
  }

  bad(message: string): never {
    const loc: Location = { file: this.file };
    if (this.path) loc.field = this.path;
    throw inputError(message, loc, REMEDIATION);
  }

  /** An optional string field holding a value of `kind` (values.ts). */
  optValue(obj: Record<string, unknown>, key: string, kind: ValueKind): void {
    const v = obj[key];
    if (v === undefined || v === '') return;
    const s = this.at(key);
    const text = s.string(v);
    const problem = valueProblem(kind, text);
    if (problem) s.bad(`${JSON.stringify(text)} is ${problem}`);
  }

  /** A list of strings, each a value of `kind`. */
  values(obj: Record<string, unknown>, key: string, kind: ValueKind): void {
    const s = this.at(key);
    s.array(obj[key]).forEach((x, i) => {
      const text = s.at(i).string(x);
      const problem = valueProblem(kind, text);
      if (problem) s.at(i).bad(`${JSON.stringify(text)} is ${problem}`);
    });
  }

  record(v: unknown): Record<string, unknown> {
    if (!isRecord(v)) this.fail('an object', v);
    return v;
  }

  array(v: unknown): unknown[] {
    if (!Array.isArray(v)) this.fail('an array', v);
    return v;
  }

  string(v: unknown): string {
    if (typeof v !== 'string') this.fail('a string', v);
    return v;
  }

  number(v: unknown): number {
    if (typeof v !== 'number' || !Number.isFinite(v)) this.fail('a number', v);
    return v;
  }

  boolean(v: unknown): boolean {
    if (typeof v !== 'boolean') this.fail('true or false', v);
    return v;
  }

  optString(obj: Record<string, unknown>, key: string): void {
    if (obj[key] !== undefined) this.at(key).string(obj[key]);
  }

  optNumber(obj: Record<string, unknown>, key: string): void {
    if (obj[key] !== undefined) this.at(key).number(obj[key]);
  }

  optBoolean(obj: Record<string, unknown>, key: string): void {
    if (obj[key] !== undefined) this.at(key).boolean(obj[key]);
  }

  strings(obj: Record<string, unknown>, key: string): void {
    const s = this.at(key);
    s.array(obj[key]).forEach((x, i) => {
      s.at(i).string(x);
    });
  }

  /** A uint64 kept as a decimal string (etcd member IDs). */
  uint64(v: unknown): string {
    const s = this.string(v);
    if (!/^\d+$/.test(s)) this.fail('a decimal uint64 string', v);
    return s;
  }

  sourceRef(v: unknown): void {
    const o = this.record(v);
    const kind = this.at('kind').string(o.kind);
    switch (kind) {
      case 'object':
        this.at('objectKind').string(o.objectKind);
        this.at('name').string(o.name);
        return;
      case 'file':
        this.at('path').string(o.path);
        return;
      case 'flag':
        this.at('component').string(o.component);
        this.at('flag').string(o.flag);
        this.at('from').sourceRef(o.from);
        return;
      case 'etcd':
        this.at('endpoint').string(o.endpoint);
        return;
      case 'tls':
        this.at('address').string(o.address);
        return;
      case 'api':
        this.at('server').string(o.server);
        this.at('path').string(o.path);
        this.optString(o, 'field');
        return;
      case 'derived':
        this.at('note').string(o.note);
        this.at('from')
          .array(o.from)
          .forEach((x, i) => {
            this.at('from').at(i).sourceRef(x);
          });
        return;
      default:
        this.at('kind').fail('one of object, file, flag, etcd, tls, api, derived', kind);
    }
  }

  /** Flags of `component`: names and values are strings, values of the kinds value-kinds.ts gives them. */
  flags(v: unknown, component?: string): void {
    this.array(v).forEach((f, i) => {
      const s = this.at(i);
      const o = s.record(f);
      const name = s.at('name').string(o.name);
      const value = s.at('value').string(o.value);
      const bad = component === undefined ? undefined : flagProblem(component, { name, value });
      if (bad) s.at('value').bad(`--${name} ${JSON.stringify(value)} is ${bad.problem}`);
    });
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
  const s = new Shape(file);
  const o = s.record(v);
  const fv = o.formatVersion;
  if (fv !== SNAPSHOT_FORMAT_VERSION) {
    throw inputError(
      `unsupported snapshot format version ${JSON.stringify(fv)}: this ferry reads format version ${SNAPSHOT_FORMAT_VERSION}`,
      { file, field: 'formatVersion' },
      `take the snapshot again with this ferry (\`ferry snapshot\`), or read it with the ferry version named in its ferryVersion field`,
    );
  }
  s.at('createdAt').string(o.createdAt);
  if (Number.isNaN(Date.parse(o.createdAt as string)))
    s.at('createdAt').fail('an ISO-8601 time', o.createdAt);
  s.at('ferryVersion').string(o.ferryVersion);
  const src = s.at('source').record(o.source);
  const kind = s.at('source').at('kind').string(src.kind);
  if (kind === 'live') {
    s.at('source').at('server').string(src.server);
    s.at('source').optString(src, 'context');
  } else if (kind === 'files') {
    s.at('source').at('path').string(src.path);
  } else {
    s.at('source').at('kind').fail('"live" or "files"', kind);
  }
  const parts = s.at('parts').array(o.parts);
  parts.forEach((p, i) => {
    if (!SNAPSHOT_PARTS.includes(p as SnapshotPart)) {
      s.at('parts')
        .at(i)
        .fail(`one of ${SNAPSHOT_PARTS.join(', ')}`, p);
    }
  });
  s.strings(o, 'warnings');
  return o as unknown as SnapshotManifest;
}

function validateComponentConfig(s: Shape, v: unknown): void {
  const o = s.record(v);
  s.at('apiVersion').string(o.apiVersion);
  const kind = s.at('kind').string(o.kind);
  s.at('source').sourceRef(o.source);
  const spec = s.at('spec').record(o.spec);
  const bad = componentConfigProblem(kind, spec);
  if (bad) {
    const shown = typeof bad.value === 'string' ? JSON.stringify(bad.value) : describeValue(bad.value);
    s.at(`spec.${formatPath(bad.path)}`).bad(`${shown} is ${bad.problem}`);
  }
}

function validateControlPlaneComponent(s: Shape, v: unknown, component: string): Record<string, unknown> {
  const o = s.record(v);
  s.at('extraArgs').flags(o.extraArgs, component);
  s.at('extraVolumes')
    .array(o.extraVolumes)
    .forEach((m, i) => {
      const ms = s.at('extraVolumes').at(i);
      const mo = ms.record(m);
      ms.at('name').string(mo.name);
      ms.at('hostPath').string(mo.hostPath);
      ms.at('mountPath').string(mo.mountPath);
    });
  return o;
}

export function validateKubeadmFile(v: unknown, file: string): void {
  const s = new Shape(file);
  const o = s.record(v);
  if (o.clusterConfiguration !== undefined) {
    const cs = s.at('clusterConfiguration');
    const c = cs.record(o.clusterConfiguration);
    cs.at('sourceApiVersion').string(c.sourceApiVersion);
    cs.at('source').sourceRef(c.source);
    for (const k of ['clusterName', 'kubernetesVersion', 'imageRepository']) cs.optString(c, k);
    cs.optValue(c, 'controlPlaneEndpoint', 'endpoint');
    cs.at('featureGates').record(c.featureGates);
    const net = cs.at('networking').record(c.networking);
    cs.at('networking').optValue(net, 'podSubnet', 'cidrs');
    cs.at('networking').optValue(net, 'serviceSubnet', 'cidrs');
    cs.at('networking').optValue(net, 'dnsDomain', 'dns-name');
    const api = validateControlPlaneComponent(cs.at('apiServer'), c.apiServer, 'kube-apiserver');
    cs.at('apiServer').values(api, 'certSANs', 'san');
    validateControlPlaneComponent(cs.at('controllerManager'), c.controllerManager, 'kube-controller-manager');
    validateControlPlaneComponent(cs.at('scheduler'), c.scheduler, 'kube-scheduler');
    const etcd = cs.at('etcd').record(c.etcd);
    if (etcd.local !== undefined) {
      const ls = cs.at('etcd').at('local');
      const l = ls.record(etcd.local);
      ls.at('extraArgs').flags(l.extraArgs, 'etcd');
      ls.values(l, 'serverCertSANs', 'san');
      ls.values(l, 'peerCertSANs', 'san');
    }
    if (etcd.external !== undefined) {
      const es = cs.at('etcd').at('external');
      es.values(es.record(etcd.external), 'endpoints', 'url');
    }
    cs.at('dns').record(c.dns);
    cs.strings(c, 'unknownFields');
  }
  const ns = s.at('nodeConfigurations');
  ns.array(o.nodeConfigurations).forEach((n, i) => {
    const es = ns.at(i);
    const e = es.record(n);
    const kind = es.at('kind').string(e.kind);
    if (kind !== 'InitConfiguration' && kind !== 'JoinConfiguration') {
      es.at('kind').fail('InitConfiguration or JoinConfiguration', kind);
    }
    es.at('source').sourceRef(e.source);
    const nr = es.at('nodeRegistration').record(e.nodeRegistration);
    es.at('nodeRegistration').at('kubeletExtraArgs').flags(nr.kubeletExtraArgs, 'kubelet');
    if (e.localAPIEndpoint !== undefined) {
      const ls = es.at('localAPIEndpoint');
      const l = ls.record(e.localAPIEndpoint);
      ls.optValue(l, 'advertiseAddress', 'ip');
      ls.optNumber(l, 'bindPort');
    }
    es.strings(e, 'bootstrapTokenIds');
  });
}

export function validateComponentsFile(v: unknown, file: string): void {
  const s = new Shape(file);
  const o = s.record(v);
  if (o.kubelet !== undefined) validateComponentConfig(s.at('kubelet'), o.kubelet);
  if (o.kubeProxy !== undefined) validateComponentConfig(s.at('kubeProxy'), o.kubeProxy);
  const ps = s.at('staticPods');
  ps.array(o.staticPods).forEach((p, i) => {
    const es = ps.at(i);
    const e = es.record(p);
    const component = es.at('component').string(e.component);
    es.optString(e, 'node');
    es.optString(e, 'image');
    es.strings(e, 'command');
    es.at('flags').flags(e.flags, component);
    es.at('hostPathVolumes').array(e.hostPathVolumes);
    es.at('source').sourceRef(e.source);
  });
}

function validateCertificate(s: Shape, v: unknown): void {
  const o = s.record(v);
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
    s.at(k).string(o[k]);
  }
  s.at('index').number(o.index);
  s.at('isCA').boolean(o.isCA);
  s.at('selfSigned').boolean(o.selfSigned);
  for (const k of ['dnsNames', 'ipAddresses', 'keyUsages', 'extendedKeyUsages']) s.strings(o, k);
  const chain = s.at('chain').record(o.chain);
  s.at('chain').at('verified').boolean(chain.verified);
}

export function validatePkiFile(v: unknown, file: string): void {
  const s = new Shape(file);
  const o = s.record(v);
  s.at('root').string(o.root);
  s.at('certificates')
    .array(o.certificates)
    .forEach((c, i) => {
      validateCertificate(s.at('certificates').at(i), c);
    });
  s.at('keys')
    .array(o.keys)
    .forEach((k, i) => {
      const ks = s.at('keys').at(i);
      const ko = ks.record(k);
      ks.at('path').string(ko.path);
      ks.at('encrypted').boolean(ko.encrypted);
      if (ko.matchesCertificate !== null) ks.at('matchesCertificate').string(ko.matchesCertificate);
      // A private key's material must never be in a snapshot: refuse a file that smuggles one in.
      for (const forbidden of ['pem', 'der', 'privateKey', 'secret']) {
        if (ko[forbidden] !== undefined) ks.at(forbidden).fail('no private key material', '(key material)');
      }
    });
  s.at('publicKeys').array(o.publicKeys);
  s.at('problems')
    .array(o.problems)
    .forEach((p, i) => {
      const ps = s.at('problems').at(i);
      const po = ps.record(p);
      ps.at('path').string(po.path);
      ps.at('problem').string(po.problem);
      ps.at('message').string(po.message);
    });
}

export function validateServedCertsFile(v: unknown, file: string): void {
  const s = new Shape(file);
  s.array(v).forEach((c, i) => {
    const cs = s.at(i);
    const o = cs.record(c);
    cs.at('address').string(o.address);
    const role = cs.at('role').string(o.role);
    if (!['endpoint', 'control-plane', 'etcd'].includes(role)) {
      cs.at('role').fail('one of endpoint, control-plane, etcd', role);
    }
    if (o.certificate !== undefined) validateCertificate(cs.at('certificate'), o.certificate);
    cs.optString(o, 'error');
  });
}

export function validateEncryptionFile(v: unknown, file: string): void {
  const s = new Shape(file);
  const o = s.record(v);
  s.at('source').sourceRef(o.source);
  const rs = s.at('resources');
  rs.array(o.resources).forEach((r, i) => {
    const es = rs.at(i);
    const e = es.record(r);
    es.strings(e, 'resources');
    es.at('providers')
      .array(e.providers)
      .forEach((p, j) => {
        const ps = es.at('providers').at(j);
        const po = ps.record(p);
        const type = ps.at('type').string(po.type);
        if (!['aescbc', 'aesgcm', 'secretbox', 'kms', 'identity'].includes(type)) {
          ps.at('type').fail('one of aescbc, aesgcm, secretbox, kms, identity', type);
        }
        ps.strings(po, 'keyNames');
        ps.strings(po, 'keyFingerprints');
        if (po.secret !== undefined || po.keys !== undefined)
          ps.at('keys').fail('no key secrets', '(secret)');
      });
  });
}

export function validateEtcdFile(v: unknown, file: string): void {
  const s = new Shape(file);
  const o = s.record(v);
  s.at('source').sourceRef(o.source);
  s.at('members')
    .array(o.members)
    .forEach((m, i) => {
      const ms = s.at('members').at(i);
      const mo = ms.record(m);
      ms.at('id').uint64(mo.id);
      ms.at('name').string(mo.name);
      ms.values(mo, 'peerURLs', 'url');
      ms.values(mo, 'clientURLs', 'url');
      ms.at('isLearner').boolean(mo.isLearner);
    });
  s.at('endpoints')
    .array(o.endpoints)
    .forEach((e, i) => {
      const es = s.at('endpoints').at(i);
      const eo = es.record(e);
      es.at('endpoint').string(eo.endpoint);
      if (eo.memberId !== undefined) es.at('memberId').uint64(eo.memberId);
      if (eo.leaderId !== undefined) es.at('leaderId').uint64(eo.leaderId);
      es.optString(eo, 'version');
      es.optNumber(eo, 'dbSize');
      es.optNumber(eo, 'dbSizeInUse');
      if (eo.raftTerm !== undefined) es.at('raftTerm').uint64(eo.raftTerm);
      if (eo.raftIndex !== undefined) es.at('raftIndex').uint64(eo.raftIndex);
      es.optBoolean(eo, 'isLearner');
      es.strings(eo, 'errors');
    });
  if (o.version !== undefined) {
    const vs = s.at('version');
    const vo = vs.record(o.version);
    vs.at('server').string(vo.server);
    vs.at('cluster').string(vo.cluster);
  }
  s.at('alarms')
    .array(o.alarms)
    .forEach((a, i) => {
      const as = s.at('alarms').at(i);
      const ao = as.record(a);
      as.at('memberId').uint64(ao.memberId);
      as.at('alarm').string(ao.alarm);
    });
}

export function validateAuditLogFile(v: unknown, file: string): void {
  const s = new Shape(file);
  const o = s.record(v);
  s.at('source').sourceRef(o.source);
  s.at('events').number(o.events);
  s.at('anonymous')
    .array(o.anonymous)
    .forEach((a, i) => {
      const as = s.at('anonymous').at(i);
      const ao = as.record(a);
      as.at('path').string(ao.path);
      as.optString(ao, 'userAgent');
      as.strings(ao, 'sourceIPs');
      as.at('count').number(ao.count);
    });
}

export function validateServerVersionFile(v: unknown, file: string): void {
  const s = new Shape(file);
  const o = s.record(v);
  s.at('source').sourceRef(o.source);
  const info = s.at('info').record(o.info);
  s.at('info').at('gitVersion').string(info.gitVersion);
  for (const [k, x] of Object.entries(info)) s.at('info').at(k).string(x);
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
  const s = new Shape(file).at(index);
  const o = s.record(v);
  s.at('apiVersion').string(o.apiVersion);
  s.at('kind').string(o.kind);
  const meta = s.at('metadata').record(o.metadata);
  return s.at('metadata').at('name').fail('a string', meta.name);
}

export function validateBootstrapToken(v: unknown, file: string, index: number): void {
  const s = new Shape(file).at(index);
  const o = s.record(v);
  s.at('id').string(o.id);
  s.optString(o, 'expiration');
  s.strings(o, 'usages');
  s.strings(o, 'authExtraGroups');
  s.at('source').sourceRef(o.source);
  for (const forbidden of ['secret', 'token', 'tokenSecret']) {
    if (o[forbidden] !== undefined) s.at(forbidden).fail('no token secret', '(secret)');
  }
}
