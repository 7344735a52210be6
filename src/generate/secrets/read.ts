import { X509Certificate } from 'node:crypto';
import { inputError, type Location } from '../../errors.js';
import { parsePem, spkiDer } from '../../pki/pem.js';
import { type FieldPath, type ParsedDoc, parseYamlDocuments } from '../../snapshot/yaml.js';
import { formatPath } from '../../util/walk.js';
import { type CertAndKey, type TalosSecretsBundle, TOKEN_PATTERN } from './bundle.js';
import { decodeAnyBase64, decodeStdBase64 } from './encoding.js';
import { parseTalosPrivateKey } from './pem.js';

/**
 * Parses and validates a Talos secrets bundle (talosctl's 4-space go-yaml, CABPT's 2-space yaml.v2:
 * indentation does not matter). Stricter than Talos's own Validate, which only parses: tokens must
 * have the token form, every certificate must parse and match its key, and at most one encryption
 * secret may be set (ferry's own bundles may have none, on purpose). Errors name file, line and field.
 */
export function readTalosSecretsBundle(text: string, origin: { file?: string } = {}): TalosSecretsBundle {
  const docs = parseYamlDocuments(text, origin);
  const doc = docs[0];
  if (!doc || docs.length > 1) {
    throw inputError(
      docs.length > 1
        ? 'a secrets bundle is one YAML document, found several'
        : 'the secrets bundle is empty',
      { ...origin },
      'use the file written by `talosctl gen secrets` or `ferry generate` (secrets.yaml)',
    );
  }
  const r = new Reader(doc, origin);
  const idText = r.str(['cluster', 'id']);
  const id = decodeAnyBase64(idText);
  if (!id)
    throw r.bad(['cluster', 'id'], 'cluster.id is not base64', 'cluster.id is base64 of 32 random bytes');
  const secretbox = r.optStr(['secrets', 'secretboxencryptionsecret']);
  const aescbc = r.optStr(['secrets', 'aescbcencryptionsecret']);
  if (secretbox && aescbc) {
    throw r.bad(
      ['secrets'],
      'only one of [secrets.secretboxencryptionsecret, secrets.aescbcencryptionsecret] is allowed',
      'keep the one the cluster writes with',
    );
  }
  for (const [field, value] of [
    ['secretboxencryptionsecret', secretbox],
    ['aescbcencryptionsecret', aescbc],
  ] as const) {
    if (value !== undefined && !decodeStdBase64(value)) {
      throw r.bad(
        ['secrets', field],
        `secrets.${field} is not base64`,
        'an encryption secret is base64 of 32 bytes',
      );
    }
  }
  const bundle: TalosSecretsBundle = {
    cluster: { id: new Uint8Array(id), secret: r.str(['cluster', 'secret']) },
    secrets: { bootstrapToken: r.token(['secrets', 'bootstraptoken']) },
    trustdInfo: { token: r.token(['trustdinfo', 'token']) },
    certs: {
      etcd: r.pair('etcd'),
      k8s: r.pair('k8s'),
      k8sAggregator: r.pair('k8saggregator'),
      k8sServiceAccount: { key: r.key(['certs', 'k8sserviceaccount', 'key']) },
      os: r.pair('os'),
    },
  };
  if (secretbox) bundle.secrets.secretboxEncryptionSecret = secretbox;
  if (aescbc) bundle.secrets.aescbcEncryptionSecret = aescbc;
  return bundle;
}

class Reader {
  constructor(
    private readonly doc: ParsedDoc,
    private readonly origin: { file?: string },
  ) {}

  bad(path: FieldPath, message: string, remediation: string, cause?: unknown) {
    const pos = this.doc.locate(path);
    const loc: Location = { ...this.origin, field: formatPath(path) };
    if (pos) {
      loc.line = pos.line;
      loc.column = pos.column;
    }
    return inputError(message, loc, remediation, cause);
  }

  private get(path: FieldPath): unknown {
    let cur: unknown = this.doc.value;
    for (const p of path) {
      if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
      cur = (cur as Record<string | number, unknown>)[p];
    }
    return cur;
  }

  optStr(path: FieldPath): string | undefined {
    const v = this.get(path);
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string')
      throw this.bad(path, `${formatPath(path)} must be a string`, 'quote the value');
    return v;
  }

  str(path: FieldPath): string {
    const v = this.optStr(path);
    if (v === undefined) {
      throw this.bad(
        path,
        `${formatPath(path)} is required`,
        'use a complete bundle from `talosctl gen secrets` or `ferry generate`',
      );
    }
    return v;
  }

  token(path: FieldPath): string {
    const v = this.str(path);
    if (!TOKEN_PATTERN.test(v)) {
      throw this.bad(
        path,
        `${formatPath(path)} is not a token of the form [a-z0-9]{6}.[a-z0-9]{16} (value not shown)`,
        'replace it with a valid token',
      );
    }
    return v;
  }

  private pem(path: FieldPath): string {
    const v = this.str(path);
    if (v.startsWith('***')) {
      throw this.bad(
        path,
        `${formatPath(path)} is redacted`,
        'use the unredacted bundle; a redacted one cannot configure nodes',
      );
    }
    const bytes = decodeStdBase64(v.replace(/\s+/g, ''));
    const text = bytes?.toString('utf8');
    if (!text || parsePem(text).blocks.length === 0) {
      throw this.bad(
        path,
        `${formatPath(path)} is not base64 of a PEM text`,
        'the bundle stores crt/key as standard base64 of the whole PEM file',
      );
    }
    return text;
  }

  key(path: FieldPath): string {
    const text = this.pem(path);
    const where = `${this.origin.file ?? 'secrets bundle'} ${formatPath(path)}`;
    try {
      parseTalosPrivateKey(text, where);
    } catch (cause) {
      throw this.bad(
        path,
        `${formatPath(path)}: ${(cause as Error).message}`,
        'replace the key with a supported, unencrypted PEM key',
        cause,
      );
    }
    return text;
  }

  pair(name: string): CertAndKey {
    const crtPath = ['certs', name, 'crt'];
    const crt = this.pem(crtPath);
    const key = this.key(['certs', name, 'key']);
    let cert: X509Certificate;
    try {
      const first = parsePem(crt).blocks.find((b) => b.label === 'CERTIFICATE');
      if (!first) throw new Error('no CERTIFICATE block');
      cert = new X509Certificate(first.der);
    } catch (cause) {
      throw this.bad(
        crtPath,
        `${formatPath(crtPath)} is not a PEM certificate`,
        'replace it with the CA certificate',
        cause,
      );
    }
    const certSpki = cert.publicKey.export({ type: 'spki', format: 'der' });
    if (!certSpki.equals(spkiDer(parseTalosPrivateKey(key, name)))) {
      throw this.bad(
        ['certs', name, 'key'],
        `certs.${name}.key does not match certs.${name}.crt`,
        'put the matching key and certificate together',
      );
    }
    return { crt, key };
  }
}
