/**
 * PKI inventory: what a copy of /etc/kubernetes/pki holds, as public facts only. Certificates are
 * parsed and their chains verified; private keys are read to learn their type and whether they
 * match their certificate, and nothing of them but a public-key hash enters the inventory.
 */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { inputError } from '../errors.js';
import {
  isEncryptedKeyBlock,
  isPem,
  type PemBlock,
  parsePem,
  privateKeyFromBlock,
  publicKeyFromBlock,
  publicKeySha256,
} from '../pki/pem.js';
import { formatName, x509 } from '../pki/x509.js';
import { pathError, readTextOrProblem, requireDirectory } from '../util/input-file.js';
import type {
  CertificateInfo,
  KeyAlgorithm,
  PkiInventory,
  PkiProblem,
  PrivateKeyInfo,
  PublicKeyInfo,
} from './model.js';

/** What to do about each kind of problem; the first problem's advice goes with the error. */
const PROBLEM_REMEDIATION: Record<PkiProblem['problem'] | 'missing', string> = {
  'not-pem':
    'ferry reads PEM files as kubeadm writes them: copy the file again from /etc/kubernetes/pki, or convert DER with `openssl x509 -inform der -in FILE -out FILE.pem`',
  unparseable:
    'the file is damaged or truncated: copy it again from /etc/kubernetes/pki on a control-plane node',
  'encrypted-key':
    'decrypt the key (`openssl pkey -in FILE -out FILE.plain`, then keep it 0600): kubeadm and Talos use unencrypted keys',
  'key-mismatch':
    'copy the key and its certificate together from the same control-plane node; a certificate and a key from different nodes or rotations do not pair',
  unreadable:
    'make the file readable by the user running ferry (keys are root-only 0600: copy them with sudo)',
  'not-a-file':
    'put the file itself there: copy /etc/kubernetes/pki again following links (`cp -rL`), so no link leads nowhere',
  missing: 'copy the whole /etc/kubernetes/pki directory from a control-plane node: ca.crt is required',
};

const CERT_LABELS = new Set(['CERTIFICATE', 'X509 CERTIFICATE']);

// ---------------------------------------------------------------------------------------------
// Keys

type KeyShape = { algorithm: KeyAlgorithm; keySize?: number; curve?: string };

const CURVES: Record<string, { name: string; bits: number }> = {
  prime256v1: { name: 'P-256', bits: 256 },
  secp384r1: { name: 'P-384', bits: 384 },
  secp521r1: { name: 'P-521', bits: 521 },
};

function keyShape(key: KeyObject): KeyShape {
  const d = key.asymmetricKeyDetails;
  switch (key.asymmetricKeyType) {
    case 'rsa':
    case 'rsa-pss':
      return { algorithm: 'RSA', keySize: d?.modulusLength };
    case 'ec': {
      const c = d?.namedCurve ? CURVES[d.namedCurve] : undefined;
      return { algorithm: 'ECDSA', keySize: c?.bits, curve: c?.name ?? d?.namedCurve };
    }
    case 'ed25519':
      return { algorithm: 'Ed25519' };
    default:
      return { algorithm: 'unknown' };
  }
}

function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

function stripUndefined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

// ---------------------------------------------------------------------------------------------
// Certificates

const KEY_USAGE_NAMES: [number, string][] = [
  [x509.KeyUsageFlags.digitalSignature, 'digitalSignature'],
  [x509.KeyUsageFlags.nonRepudiation, 'contentCommitment'],
  [x509.KeyUsageFlags.keyEncipherment, 'keyEncipherment'],
  [x509.KeyUsageFlags.dataEncipherment, 'dataEncipherment'],
  [x509.KeyUsageFlags.keyAgreement, 'keyAgreement'],
  [x509.KeyUsageFlags.keyCertSign, 'keyCertSign'],
  [x509.KeyUsageFlags.cRLSign, 'cRLSign'],
  [x509.KeyUsageFlags.encipherOnly, 'encipherOnly'],
  [x509.KeyUsageFlags.decipherOnly, 'decipherOnly'],
];

const EKU_NAMES: Record<string, string> = {
  '2.5.29.37.0': 'any',
  '1.3.6.1.5.5.7.3.1': 'serverAuth',
  '1.3.6.1.5.5.7.3.2': 'clientAuth',
  '1.3.6.1.5.5.7.3.3': 'codeSigning',
  '1.3.6.1.5.5.7.3.4': 'emailProtection',
  '1.3.6.1.5.5.7.3.8': 'timeStamping',
  '1.3.6.1.5.5.7.3.9': 'OCSPSigning',
};

function publicKeyShape(spki: Uint8Array): KeyShape {
  try {
    return keyShape(createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' }));
  } catch {
    return { algorithm: 'unknown' };
  }
}

function sameBytes(a: ArrayBuffer, b: ArrayBuffer): boolean {
  return Buffer.from(a).equals(Buffer.from(b));
}

function describe(cert: x509.X509Certificate, path: string, index: number): CertificateInfo {
  const bc = cert.getExtension(x509.BasicConstraintsExtension);
  const ku = cert.getExtension(x509.KeyUsagesExtension);
  const eku = cert.getExtension(x509.ExtendedKeyUsageExtension);
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const ski = cert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId?.toLowerCase();
  const aki = cert.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId?.toLowerCase();
  const spki = new Uint8Array(cert.publicKey.rawData);
  const sameName = sameBytes(cert.subjectName.toArrayBuffer(), cert.issuerName.toArrayBuffer());
  const names = san?.names.items ?? [];
  const shape = publicKeyShape(spki);
  const info: CertificateInfo = {
    path,
    index,
    subject: formatName(cert.subjectName),
    issuer: formatName(cert.issuerName),
    serialNumber: cert.serialNumber.toLowerCase(),
    notBefore: cert.notBefore.toISOString(),
    notAfter: cert.notAfter.toISOString(),
    isCA: bc?.ca === true,
    pathLength: bc?.ca ? bc.pathLength : undefined,
    // Structural test (same name, and key ids agree when both exist); the inventory then checks
    // the signature against the certificate's own key.
    selfSigned: sameName && (aki === undefined || ski === undefined || aki === ski),
    dnsNames: names.filter((n) => n.type === 'dns').map((n) => n.value),
    ipAddresses: names.filter((n) => n.type === 'ip').map((n) => n.value),
    keyAlgorithm: shape.algorithm,
    keySize: shape.keySize,
    curve: shape.curve,
    keyUsages: ku ? KEY_USAGE_NAMES.filter(([flag]) => (ku.usages & flag) !== 0).map(([, n]) => n) : [],
    extendedKeyUsages: Array.from(eku?.usages ?? [], (u) => EKU_NAMES[String(u)] ?? String(u)),
    fingerprintSha256: sha256(new Uint8Array(cert.rawData)),
    publicKeySha256: sha256(spki),
    subjectKeyId: ski,
    authorityKeyId: aki,
    chain: { verified: false },
  };
  return stripUndefined(info);
}

function parseCertificate(der: Uint8Array): x509.X509Certificate {
  return new x509.X509Certificate(der);
}

/** Describes one DER certificate (e.g. one served in a TLS handshake). Chain left unverified. */
export function certificateInfoFromDer(der: Uint8Array, label: string): CertificateInfo {
  let cert: x509.X509Certificate;
  try {
    cert = parseCertificate(der);
  } catch (err) {
    throw inputError(
      `not a DER X.509 certificate: ${(err as Error).message}`,
      { file: label },
      'provide the certificate as PEM or DER exactly as the server sent it',
      err,
    );
  }
  return describe(cert, label, 0);
}

/** Describes every certificate of a PEM bundle, in file order (index 0, 1, …). */
export function certificateInfoFromPem(pem: string, label: string): CertificateInfo[] {
  const where = { file: label };
  if (!isPem(pem)) {
    throw inputError('not a PEM file (no -----BEGIN line)', where, PROBLEM_REMEDIATION['not-pem']);
  }
  const { blocks, errors } = parsePem(pem);
  if (errors.length > 0) throw inputError(errors.join('; '), where, PROBLEM_REMEDIATION.unparseable);
  const certs = blocks.filter((b) => CERT_LABELS.has(b.label));
  if (certs.length === 0) {
    throw inputError(
      'the PEM file holds no CERTIFICATE block',
      where,
      'pass the certificate file, not a key',
    );
  }
  return certs.map((b, index) => {
    try {
      return describe(parseCertificate(b.der), label, index);
    } catch (err) {
      throw inputError(
        `certificate ${index} cannot be parsed: ${(err as Error).message}`,
        where,
        PROBLEM_REMEDIATION.unparseable,
        err,
      );
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Walking the directory

const EXTENSIONS = ['.crt', '.pem', '.key', '.pub'];

async function walk(root: string, rel: string, out: string[], problems: PkiProblem[]): Promise<void> {
  let entries: Dirent[];
  try {
    entries = await readdir(join(root, rel), { withFileTypes: true });
  } catch (err) {
    problems.push({
      path: rel || '.',
      problem: 'unreadable',
      message: `cannot list: ${(err as Error).message}`,
    });
    return;
  }
  for (const e of entries) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) await walk(root, p, out, problems);
    else if ((e.isFile() || e.isSymbolicLink()) && EXTENSIONS.some((x) => e.name.endsWith(x))) out.push(p);
    // Symlinked directories are not followed: a copied PKI has none, and they could loop.
  }
}

/** Where the certificate for a key file would be, by kubeadm (x.key) and cfssl (x-key.pem) naming. */
function siblingCertPath(keyPath: string): string | undefined {
  if (keyPath.endsWith('.key')) return `${keyPath.slice(0, -4)}.crt`;
  if (keyPath.endsWith('-key.pem')) return `${keyPath.slice(0, -8)}.pem`;
  return undefined;
}

function siblingPubPath(keyPath: string): string | undefined {
  return keyPath.endsWith('.key') ? `${keyPath.slice(0, -4)}.pub` : undefined;
}

interface Collected {
  certs: { info: CertificateInfo; cert: x509.X509Certificate }[];
  keys: PrivateKeyInfo[];
  publicKeys: PublicKeyInfo[];
  problems: PkiProblem[];
}

function collectFile(path: string, text: string, acc: Collected): void {
  if (!isPem(text)) {
    acc.problems.push({ path, problem: 'not-pem', message: 'not a PEM file (no -----BEGIN line)' });
    return;
  }
  const { blocks, errors } = parsePem(text);
  for (const message of errors) acc.problems.push({ path, problem: 'unparseable', message });
  let certIndex = 0;
  for (const b of blocks) {
    if (CERT_LABELS.has(b.label)) {
      const index = certIndex++;
      try {
        const cert = parseCertificate(b.der);
        acc.certs.push({ info: describe(cert, path, index), cert });
      } catch (err) {
        acc.problems.push({
          path,
          problem: 'unparseable',
          message: `certificate ${index} cannot be parsed: ${(err as Error).message}`,
        });
      }
    } else if (b.label.endsWith('PRIVATE KEY')) {
      collectPrivateKey(path, b, acc);
    } else if (b.label === 'PUBLIC KEY' || b.label === 'RSA PUBLIC KEY') {
      try {
        const key = publicKeyFromBlock(b);
        const { algorithm, keySize } = keyShape(key);
        acc.publicKeys.push(
          stripUndefined({ path, algorithm, keySize, publicKeySha256: publicKeySha256(key) }),
        );
      } catch (err) {
        acc.problems.push({ path, problem: 'unparseable', message: `public key: ${(err as Error).message}` });
      }
    }
    // Other blocks (EC PARAMETERS, CERTIFICATE REQUEST, X509 CRL) carry nothing ferry uses.
  }
}

function collectPrivateKey(path: string, b: PemBlock, acc: Collected): void {
  if (isEncryptedKeyBlock(b)) {
    const algorithm: KeyAlgorithm =
      b.label === 'RSA PRIVATE KEY' ? 'RSA' : b.label === 'EC PRIVATE KEY' ? 'ECDSA' : 'unknown';
    acc.keys.push({ path, algorithm, encrypted: true, matchesCertificate: null });
    acc.problems.push({
      path,
      problem: 'encrypted-key',
      message: 'the private key is encrypted with a passphrase; kubeadm and Talos need it unencrypted',
    });
    return;
  }
  try {
    const key = privateKeyFromBlock(b);
    acc.keys.push(
      stripUndefined({
        path,
        ...keyShape(key),
        encrypted: false,
        publicKeySha256: publicKeySha256(key),
        matchesCertificate: null,
      }),
    );
  } catch (err) {
    // OpenSSL's message says what is wrong with the structure; it never echoes key bytes.
    acc.problems.push({ path, problem: 'unparseable', message: `private key: ${(err as Error).message}` });
  }
}

async function resolveChains(certs: Collected['certs']): Promise<void> {
  const verifies = async (c: x509.X509Certificate, by: x509.X509Certificate): Promise<boolean> => {
    try {
      return await c.verify({ publicKey: by, signatureOnly: true });
    } catch {
      return false;
    }
  };
  for (const entry of certs) {
    const { info, cert } = entry;
    if (info.selfSigned) {
      const ok = await verifies(cert, cert);
      if (ok) {
        info.chain = { issuerPath: info.path, verified: true };
        continue;
      }
      // Same name but not signed by its own key: look for the real issuer like any other cert.
      info.selfSigned = false;
    }
    const others = certs.filter((o) => o !== entry);
    const byKeyId = info.authorityKeyId
      ? others.filter((o) => o.info.subjectKeyId === info.authorityKeyId)
      : [];
    const bySubject = others.filter((o) => o.info.subject === info.issuer);
    const candidates = [...new Set([...byKeyId, ...bySubject])];
    const first = candidates[0];
    if (!first) continue;
    let found: (typeof certs)[number] | undefined;
    for (const c of candidates) {
      if (await verifies(cert, c.cert)) {
        found = c;
        break;
      }
    }
    info.chain = found
      ? { issuerPath: found.info.path, verified: true }
      : { issuerPath: first.info.path, verified: false };
  }
}

function matchKeys(acc: Collected): void {
  const firstCertAt = (p: string) => acc.certs.find((c) => c.info.path === p && c.info.index === 0)?.info;
  for (const key of acc.keys) {
    if (key.publicKeySha256 === undefined) continue;
    const siblingPath = siblingCertPath(key.path);
    const sibling = siblingPath ? firstCertAt(siblingPath) : undefined;
    if (sibling && sibling.publicKeySha256 !== key.publicKeySha256) {
      acc.problems.push({
        path: key.path,
        problem: 'key-mismatch',
        message: `the private key does not belong to ${sibling.path} (${sibling.subject}): their public keys differ`,
      });
    }
    const match =
      sibling?.publicKeySha256 === key.publicKeySha256
        ? sibling
        : acc.certs.find((c) => c.info.publicKeySha256 === key.publicKeySha256)?.info;
    key.matchesCertificate = match ? match.path : null;

    const pubPath = siblingPubPath(key.path);
    const pub = acc.publicKeys.find((p) => p.path === pubPath);
    if (pub && pub.publicKeySha256 !== key.publicKeySha256) {
      acc.problems.push({
        path: key.path,
        problem: 'key-mismatch',
        message: `the public key in ${pub.path} is not the public half of this private key`,
      });
    }
  }
}

/**
 * Inventories a PKI directory (a copy of /etc/kubernetes/pki). Bad files never make it throw: each
 * becomes a PkiProblem. Only a missing or unlistable directory is an input error.
 */
export async function inventoryPki(
  dir: string,
  origin: { shown?: string; flag?: string } = {},
): Promise<PkiInventory> {
  await requireDirectory(dir, {
    ...origin,
    what: 'the PKI directory',
    provide:
      'pass a copy of /etc/kubernetes/pki from a control-plane node (the directory, not a single file)',
  });
  const acc: Collected = { certs: [], keys: [], publicKeys: [], problems: [] };
  const files: string[] = [];
  await walk(dir, '', files, acc.problems);
  files.sort();
  for (const path of files) {
    const read = await readTextOrProblem(join(dir, path), 'latin1');
    if ('problem' in read) {
      // Say what the path is (a dangling link, a directory, no permission), not a bare errno.
      acc.problems.push({
        path,
        problem: read.problem.kind === 'permission-denied' ? 'unreadable' : 'not-a-file',
        message: pathError(path, read.problem, { provide: '' }).message,
      });
      continue;
    }
    collectFile(path, read.text, acc);
  }
  await resolveChains(acc.certs);
  matchKeys(acc);
  return {
    root: dir,
    certificates: acc.certs.map((c) => c.info),
    keys: acc.keys,
    publicKeys: acc.publicKeys,
    problems: acc.problems,
  };
}

// ---------------------------------------------------------------------------------------------
// Usability gate

/**
 * Throws an input error (exit 2) naming the first problem's file and listing all of them when the
 * inventory cannot be used: unreadable, non-PEM or damaged files, encrypted or mismatched keys, or
 * a directory without ca.crt.
 */
export function assertPkiUsable(inv: PkiInventory, dir: string): void {
  const issues: { path: string; kind: PkiProblem['problem'] | 'missing'; message: string }[] =
    inv.problems.map((p) => ({ path: p.path, kind: p.problem, message: p.message }));
  const caSeen =
    inv.certificates.some((c) => c.path === 'ca.crt') || inv.problems.some((p) => p.path === 'ca.crt');
  if (!caSeen)
    issues.push({
      path: 'ca.crt',
      kind: 'missing',
      message: 'ca.crt is missing: the directory is incomplete',
    });
  const first = issues[0];
  if (!first) return;
  const message =
    issues.length === 1
      ? first.message
      : `${issues.length} problems in the PKI directory: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`;
  throw inputError(message, { file: join(dir, first.path) }, PROBLEM_REMEDIATION[first.kind]);
}
