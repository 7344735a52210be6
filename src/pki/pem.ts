/**
 * PEM as ferry meets it: kubeadm's files (PKCS#1, SEC1, PKCS#8, certificates), legacy encrypted
 * keys with RFC 1421 headers, and Talos's non-standard "ED25519 PRIVATE KEY" label. One parser for
 * the snapshot's PKI inventory and for the secrets ferry generates.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

export interface PemBlock {
  label: string;
  /** RFC 1421 headers (legacy encrypted keys: Proc-Type, DEK-Info). */
  headers: Record<string, string>;
  der: Buffer;
}

export type PemParse = { blocks: PemBlock[]; errors: string[] };

const BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END ([A-Z0-9 ]+)-----/g;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** True when the text has at least one BEGIN line. */
export function isPem(text: string): boolean {
  return /-----BEGIN [A-Z0-9 ]+-----/.test(text);
}

/**
 * Splits PEM text into blocks; reports blocks that are cut off, closed by another label or not valid
 * base64. Error texts never quote a private key's label or bytes.
 */
export function parsePem(text: string): PemParse {
  const blocks: PemBlock[] = [];
  const errors: string[] = [];
  let ends = 0;
  for (const m of text.matchAll(BLOCK)) {
    const [, label = '', body = '', endLabel = ''] = m;
    ends++;
    if (label !== endLabel) {
      errors.push(
        `block ${blocks.length + errors.length + 1}: BEGIN ${describeLabel(label)} closed by END ${describeLabel(endLabel)}`,
      );
      continue;
    }
    const headers: Record<string, string> = {};
    const lines = body.split(/\r?\n/);
    // RFC 1421 headers (legacy encrypted keys: Proc-Type, DEK-Info) come before a blank line.
    if (lines.some((l) => l.includes(':'))) {
      while (lines.length > 0 && lines[0]?.trim() !== '') {
        const line = lines.shift() ?? '';
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim()] = line.slice(i + 1).trim();
      }
    }
    const b64 = lines.join('').replace(/\s+/g, '');
    if (b64.length === 0 || b64.length % 4 !== 0 || !BASE64.test(b64)) {
      errors.push(
        `block ${blocks.length + errors.length + 1} (${describeLabel(label)}): body is not valid base64`,
      );
      continue;
    }
    blocks.push({ label, headers, der: Buffer.from(b64, 'base64') });
  }
  const begins = text.match(/-----BEGIN [A-Z0-9 ]+-----/g)?.length ?? 0;
  if (begins > ends) errors.push(`${begins - ends} PEM block(s) have no END line: the file is truncated`);
  return { blocks, errors };
}

/** Labels are named without quoting private-key labels, so no message looks like key material. */
export function describeLabel(label: string): string {
  return label.endsWith('PRIVATE KEY') ? 'private key' : label.toLowerCase();
}

/** A legacy PEM-encrypted key (`Proc-Type: 4,ENCRYPTED`) or a PKCS#8 EncryptedPrivateKeyInfo. */
export function isEncryptedKeyBlock(b: PemBlock): boolean {
  return b.label === 'ENCRYPTED PRIVATE KEY' || /ENCRYPTED/i.test(b.headers['Proc-Type'] ?? '');
}

/** The key inside a private-key block: PKCS#1 (RSA), SEC1 (EC) or PKCS#8 (any other label, Talos's Ed25519 one too). */
export function privateKeyFromBlock(b: PemBlock): KeyObject {
  const type = b.label === 'RSA PRIVATE KEY' ? 'pkcs1' : b.label === 'EC PRIVATE KEY' ? 'sec1' : 'pkcs8';
  return createPrivateKey({ key: b.der, format: 'der', type });
}

export function publicKeyFromBlock(b: PemBlock): KeyObject {
  return createPublicKey({
    key: b.der,
    format: 'der',
    type: b.label === 'RSA PUBLIC KEY' ? 'pkcs1' : 'spki',
  });
}

/**
 * Parses a private key PEM, accepting Talos's non-standard "ED25519 PRIVATE KEY" label (PKCS#8
 * inside), which OpenSSL rejects.
 */
export function parsePrivateKeyPem(pem: string): KeyObject {
  return createPrivateKey({
    key: pem.replace(/(-----(?:BEGIN|END)) ED25519 PRIVATE KEY-----/g, '$1 PRIVATE KEY-----'),
  });
}

/** Talos writes its Ed25519 keys as PKCS#8 DER under "ED25519 PRIVATE KEY" (crypto x509/options.go). */
export function toTalosEd25519Pem(pkcs8Pem: string): string {
  return pkcs8Pem.replace(/(-----(?:BEGIN|END)) PRIVATE KEY-----/g, '$1 ED25519 PRIVATE KEY-----');
}

/** DER SubjectPublicKeyInfo of a key (of a private key: its public half); what key↔certificate matching compares. */
export function spkiDer(key: KeyObject): Buffer {
  const pub = key.type === 'public' ? key : createPublicKey(key);
  return pub.export({ type: 'spki', format: 'der' });
}

/** Hex SHA-256 of spkiDer: the value inventories match keys and certificates by. */
export function publicKeySha256(key: KeyObject): string {
  return createHash('sha256').update(spkiDer(key)).digest('hex');
}
