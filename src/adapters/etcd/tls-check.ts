/**
 * What the etcd client TLS files hold, checked before anything connects: --etcd-cacert PEM
 * certificates, --etcd-cert a PEM certificate, --etcd-key the unencrypted PEM private key of that
 * certificate. Unchecked, a wrong file surfaces from the gRPC client as an OpenSSL decoder error
 * that names no file, after a connection attempt. Messages name the flag and the file and say what
 * is in it by kind only: never a byte of the content.
 */
import { type KeyObject, X509Certificate } from 'node:crypto';
import { inputError } from '../../errors.js';
import {
  describeLabel,
  isEncryptedKeyBlock,
  type PemBlock,
  parsePem,
  privateKeyFromBlock,
} from '../../pki/pem.js';
import type { EtcdTlsBytes, EtcdTlsFiles } from './tls-files.js';

type Flag = '--etcd-cacert' | '--etcd-cert' | '--etcd-key';

const FIX: Record<Flag, string> = {
  '--etcd-cacert':
    'pass --etcd-cacert the etcd CA certificate in PEM (kubeadm: /etc/kubernetes/pki/etcd/ca.crt)',
  '--etcd-cert':
    'pass --etcd-cert a client certificate the etcd CA signed, in PEM (kubeadm: /etc/kubernetes/pki/etcd/healthcheck-client.crt)',
  '--etcd-key':
    'pass --etcd-key the unencrypted private key of the --etcd-cert certificate, in PEM (kubeadm: /etc/kubernetes/pki/etcd/healthcheck-client.key)',
};

function refuse(flag: Flag, file: string, what: string, fix = FIX[flag]) {
  return inputError(`${flag} ${file} ${what}`, { file, field: flag }, fix);
}

const isKeyLabel = (label: string) => label.endsWith('PRIVATE KEY');

/** What the blocks of a file are, by kind ("a certificate", "2 private keys"), for "it holds …". */
function holds(blocks: PemBlock[]): string {
  const counts = new Map<string, number>();
  for (const b of blocks) {
    const kind = describeLabel(b.label);
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return [...counts].map(([kind, n]) => (n === 1 ? `a ${kind}` : `${n} ${kind}s`)).join(' and ');
}

function pemBlocks(bytes: Buffer, flag: Flag, file: string, expected: string): PemBlock[] {
  const text = bytes.toString('utf8');
  if (text.trim() === '') throw refuse(flag, file, `is empty, not a PEM ${expected}`);
  const { blocks, errors } = parsePem(text);
  if (errors.length > 0) throw refuse(flag, file, `is not a valid PEM ${expected}: ${errors.join('; ')}`);
  if (blocks.length === 0)
    throw refuse(flag, file, `is not a PEM ${expected}: it has no PEM block (DER or another format?)`);
  return blocks;
}

/** The certificates of a PEM file, in order; at least one, each of them parsing. */
function certificates(bytes: Buffer, flag: Flag, file: string): X509Certificate[] {
  const blocks = pemBlocks(bytes, flag, file, 'certificate');
  const certs: X509Certificate[] = [];
  for (const [i, b] of blocks.entries()) {
    if (b.label !== 'CERTIFICATE') continue;
    try {
      certs.push(new X509Certificate(b.der));
    } catch {
      throw refuse(flag, file, `is not a valid PEM certificate: block ${i + 1} is not an X.509 certificate`);
    }
  }
  if (certs.length === 0) throw refuse(flag, file, `is not a PEM certificate: it holds ${holds(blocks)}`);
  return certs;
}

function privateKey(bytes: Buffer, file: string): KeyObject {
  const flag = '--etcd-key';
  const blocks = pemBlocks(bytes, flag, file, 'private key');
  const keys = blocks.filter((b) => isKeyLabel(b.label));
  if (keys.length === 0) throw refuse(flag, file, `is not a PEM private key: it holds ${holds(blocks)}`);
  if (keys.length > 1)
    throw refuse(flag, file, `holds ${keys.length} private keys; the etcd client takes one`);
  const block = keys[0]!;
  if (isEncryptedKeyBlock(block))
    throw refuse(
      flag,
      file,
      'is encrypted with a passphrase; the etcd client needs the key unencrypted',
      'decrypt a copy (`openssl pkey -in KEY -out KEY.plain`, kept 0600) and pass that as --etcd-key',
    );
  try {
    return privateKeyFromBlock(block);
  } catch {
    throw refuse(flag, file, 'is not a valid PEM private key: its key block does not parse');
  }
}

/**
 * Throws an input error (exit 2) naming the flag and the file when the etcd CA, the client
 * certificate or its key cannot be what they are passed as, or the key is not the certificate's.
 */
export function checkEtcdTls(tls: EtcdTlsBytes, files: EtcdTlsFiles): void {
  certificates(tls.ca, '--etcd-cacert', files.caFile);
  const [leaf] = certificates(tls.cert, '--etcd-cert', files.certFile);
  const key = privateKey(tls.key, files.keyFile);
  // The first certificate is the one TLS presents: the key must be its own.
  if (!leaf!.checkPrivateKey(key))
    throw refuse(
      '--etcd-key',
      files.keyFile,
      `does not match the certificate in ${files.certFile} (--etcd-cert)`,
      'pass the certificate and the key of one pair (kubeadm: /etc/kubernetes/pki/etcd/healthcheck-client.crt and .key)',
    );
}
