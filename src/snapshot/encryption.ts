/**
 * The kube-apiserver EncryptionConfiguration (--encryption-provider-config). Only key names and a
 * SHA-256 of each key's decoded secret enter the snapshot: enough to match Talos's key names and
 * detect a rotation, never enough to decrypt anything.
 */
import { createHash } from 'node:crypto';
import { inputError, type Location } from '../errors.js';
import { formatPath } from '../util/walk.js';
import type { EncryptionConfig, EncryptionProvider, EncryptionProviderType, SourceRef } from './model.js';
import { isRecord } from './validate.js';
import { decodeBase64, encryptionKeyProblem } from './values.js';
import { type FieldPath, type ParsedDoc, parseYamlDocuments } from './yaml.js';

const API_VERSIONS = ['apiserver.config.k8s.io/v1', 'apiserver.k8s.io/v1'];
const KEYED: readonly EncryptionProviderType[] = ['aescbc', 'aesgcm', 'secretbox'];
const PROVIDERS: readonly EncryptionProviderType[] = [...KEYED, 'kms', 'identity'];

const REMEDIATION =
  'copy the file named by kube-apiserver --encryption-provider-config again from a control-plane node';

export function parseEncryptionConfig(text: string, file: string): EncryptionConfig {
  const docs = parseYamlDocuments(text, { file });
  const doc = docs[0];
  if (!doc) throw inputError('the encryption configuration is empty', { file }, REMEDIATION);
  if (docs.length > 1) {
    fail(
      docs[1] as ParsedDoc,
      file,
      [],
      'expected one EncryptionConfiguration document, found several',
      REMEDIATION,
    );
  }
  const v = doc.value;
  if (!isRecord(v)) return fail(doc, file, [], 'expected an EncryptionConfiguration mapping', REMEDIATION);
  if (v.kind !== 'EncryptionConfiguration' || !API_VERSIONS.includes(String(v.apiVersion))) {
    fail(
      doc,
      file,
      v.kind !== 'EncryptionConfiguration' ? ['kind'] : ['apiVersion'],
      `expected kind EncryptionConfiguration (${API_VERSIONS.join(' or ')}), found ${String(v.apiVersion)} ${String(v.kind)}`,
      REMEDIATION,
    );
  }
  const source: SourceRef = { kind: 'file', path: file, line: doc.line };
  const resources: EncryptionConfig['resources'] = [];
  const rs = v.resources;
  if (!Array.isArray(rs)) return fail(doc, file, ['resources'], 'expected a list of resources', REMEDIATION);
  rs.forEach((r, i) => {
    const at: FieldPath = ['resources', i];
    if (!isRecord(r)) fail(doc, file, at, 'expected a mapping with resources and providers', REMEDIATION);
    const names = r.resources;
    if (!Array.isArray(names) || !names.every((n) => typeof n === 'string')) {
      fail(doc, file, [...at, 'resources'], 'expected a list of resource names (e.g. secrets)', REMEDIATION);
    }
    const ps = r.providers;
    if (!Array.isArray(ps))
      fail(doc, file, [...at, 'providers'], 'expected a list of providers', REMEDIATION);
    resources.push({
      resources: names,
      providers: ps.map((p, j) => provider(doc, file, [...at, 'providers', j], p)),
    });
  });
  return { source, resources };
}

function provider(doc: ParsedDoc, file: string, at: FieldPath, p: unknown): EncryptionProvider {
  if (!isRecord(p)) return fail(doc, file, at, 'expected a provider mapping', REMEDIATION);
  const keys = Object.keys(p);
  const unknown = keys.filter((k) => !(PROVIDERS as readonly string[]).includes(k));
  if (unknown.length > 0) {
    fail(
      doc,
      file,
      [...at, unknown[0] as string],
      `unknown encryption provider ${unknown[0]}: the apiserver knows ${PROVIDERS.join(', ')}`,
      'fix the provider name; ferry reads the same providers as kube-apiserver',
    );
  }
  if (keys.length !== 1) {
    fail(doc, file, at, `each providers entry holds exactly one provider, found ${keys.length}`, REMEDIATION);
  }
  const type = keys[0] as EncryptionProviderType;
  const body = p[type];
  const out: EncryptionProvider = { type, keyNames: [], keyFingerprints: [] };
  if (type === 'identity') return out;
  if (!isRecord(body)) return fail(doc, file, [...at, type], `expected a mapping for ${type}`, REMEDIATION);
  if (type === 'kms') {
    const kms: NonNullable<EncryptionProvider['kms']> = {};
    for (const k of ['name', 'apiVersion', 'endpoint'] as const) {
      if (typeof body[k] === 'string') kms[k] = body[k] as string;
    }
    out.kms = kms;
    if (kms.name !== undefined) out.keyNames.push(kms.name);
    return out;
  }
  const ks = body.keys;
  if (!Array.isArray(ks) || ks.length === 0) {
    fail(doc, file, [...at, type, 'keys'], `${type} needs a non-empty list of keys`, REMEDIATION);
  }
  ks.forEach((k, i) => {
    const kat = [...at, type, 'keys', i];
    if (!isRecord(k) || typeof k.name !== 'string' || typeof k.secret !== 'string') {
      fail(doc, file, kat, 'each key needs a name and a secret', REMEDIATION);
    }
    out.keyNames.push(k.name);
    out.keyFingerprints.push(fingerprint(type, k.secret, doc, file, [...kat, 'secret']));
  });
  return out;
}

/** SHA-256 of the decoded key, once it is base64 of a key the provider takes. Never quotes the key. */
function fingerprint(
  type: EncryptionProviderType,
  secret: string,
  doc: ParsedDoc,
  file: string,
  at: FieldPath,
): string {
  const key = decodeBase64(secret);
  if (!key) fail(doc, file, at, 'the key secret is not valid base64', REMEDIATION);
  const problem = encryptionKeyProblem(type, key);
  // kube-apiserver refuses such a key at start-up; carried into Talos it would stop every apiserver.
  if (problem) fail(doc, file, at, problem, REMEDIATION);
  return createHash('sha256').update(key).digest('hex');
}

function fail(doc: ParsedDoc, file: string, path: FieldPath, message: string, remediation: string): never {
  const pos = doc.locate(path);
  const loc: Location = { file, line: pos?.line ?? doc.line, object: 'EncryptionConfiguration' };
  if (pos) loc.column = pos.column;
  if (path.length > 0) loc.field = formatPath(path);
  throw inputError(message, loc, remediation);
}
