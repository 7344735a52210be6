/**
 * Issues real X.509 material: keys from node:crypto, certificates built and signed with
 * @peculiar/x509 over Node's WebCrypto. Used by the lab (a kubeadm-layout PKI for etcd), by tests
 * and by examples; the shapes mirror what kubeadm writes so that ferry's readers see the real thing.
 */
import { createPublicKey, generateKeyPair, type KeyObject, randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import { parsePrivateKeyPem, spkiDer } from './pem.js';
import { formatName, literalName, x509 } from './x509.js';

export type KeySpec =
  | { algorithm: 'RSA'; size?: 2048 | 3072 | 4096 }
  | { algorithm: 'ECDSA'; curve?: 'P-256' | 'P-384' }
  | { algorithm: 'Ed25519' };

export type CertUsage = 'server' | 'client' | 'peer' | 'ca';

export interface Issued {
  certPem: string;
  /** PEM as kubeadm writes it: PKCS#1 for RSA, SEC1 for ECDSA, PKCS#8 for Ed25519. */
  keyPem: string;
  /** RFC 4514 string, most specific RDN first (e.g. "CN=kube-apiserver"). */
  subject: string;
  notAfter: Date;
  certificate: x509.X509Certificate;
  privateKey: KeyObject;
  /** The same private key imported into WebCrypto, for signing certificates it issues. */
  signingKey: webcrypto.CryptoKey;
  signingAlgorithm: webcrypto.Algorithm | webcrypto.EcdsaParams;
}

interface CommonOpts {
  commonName: string;
  organization?: string[];
  key?: KeySpec;
  /**
   * Use this existing private key (PEM) instead of generating one; `key` is then ignored. Lets a
   * caller re-issue for a key it already has, or reuse one key across certificates in tests.
   */
  existingKeyPem?: string;
  notBefore?: Date;
  notAfter?: Date;
  validityDays?: number;
}

const DAY_MS = 86_400_000;
/** kubeadm backdates NotBefore so that slightly skewed clocks accept a fresh certificate. */
const BACKDATE_MS = 5 * 60_000;
const CA_VALIDITY_DAYS = 3650;
const LEAF_VALIDITY_DAYS = 365;

const generateKeyPairAsync = promisify(generateKeyPair) as unknown as (
  type: string,
  options: Record<string, unknown>,
) => Promise<{ privateKey: KeyObject; publicKey: KeyObject }>;

async function generatePrivateKey(spec: KeySpec): Promise<KeyObject> {
  switch (spec.algorithm) {
    case 'RSA':
      return (await generateKeyPairAsync('rsa', { modulusLength: spec.size ?? 2048 })).privateKey;
    case 'ECDSA':
      return (await generateKeyPairAsync('ec', { namedCurve: spec.curve ?? 'P-256' })).privateKey;
    case 'Ed25519':
      return (await generateKeyPairAsync('ed25519', {})).privateKey;
  }
}

/** The PEM encoding kubeadm (Go's keyutil) writes for each key type. */
export function privateKeyToPem(key: KeyObject): string {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return key.export({ type: 'pkcs1', format: 'pem' }) as string;
    case 'ec':
      return key.export({ type: 'sec1', format: 'pem' }) as string;
    default:
      return key.export({ type: 'pkcs8', format: 'pem' }) as string;
  }
}

export async function generateKeyPairPem(
  key: KeySpec,
): Promise<{ privateKeyPem: string; publicKeyPem: string }> {
  const priv = await generatePrivateKey(key);
  return {
    privateKeyPem: privateKeyToPem(priv),
    publicKeyPem: createPublicKey(priv).export({ type: 'spki', format: 'pem' }) as string,
  };
}

function ecHash(curve: string | undefined): 'SHA-256' | 'SHA-384' | 'SHA-512' {
  if (curve === 'secp384r1' || curve === 'P-384') return 'SHA-384';
  if (curve === 'secp521r1' || curve === 'P-521') return 'SHA-512';
  return 'SHA-256';
}

const WEBCRYPTO_CURVES: Record<string, string> = {
  prime256v1: 'P-256',
  secp384r1: 'P-384',
  secp521r1: 'P-521',
};

/** Imports a node:crypto private key into WebCrypto with the signature algorithm Go would use for it. */
async function toSigningKey(key: KeyObject): Promise<{
  signingKey: webcrypto.CryptoKey;
  signingAlgorithm: webcrypto.Algorithm | webcrypto.EcdsaParams;
}> {
  const der = key.export({ type: 'pkcs8', format: 'der' });
  let importAlg: webcrypto.Algorithm | webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams;
  let signingAlgorithm: webcrypto.Algorithm | webcrypto.EcdsaParams;
  switch (key.asymmetricKeyType) {
    case 'rsa':
      importAlg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
      signingAlgorithm = { name: 'RSASSA-PKCS1-v1_5' };
      break;
    case 'ec': {
      const nodeCurve = key.asymmetricKeyDetails?.namedCurve;
      const namedCurve = nodeCurve ? WEBCRYPTO_CURVES[nodeCurve] : undefined;
      if (!namedCurve) throw new Error(`unsupported EC curve ${nodeCurve ?? '(unknown)'}`);
      importAlg = { name: 'ECDSA', namedCurve };
      signingAlgorithm = { name: 'ECDSA', hash: ecHash(nodeCurve) };
      break;
    }
    case 'ed25519':
      importAlg = { name: 'Ed25519' };
      signingAlgorithm = { name: 'Ed25519' };
      break;
    default:
      throw new Error(`unsupported key type ${key.asymmetricKeyType ?? '(unknown)'}`);
  }
  const signingKey = await webcrypto.subtle.importKey('pkcs8', der, importAlg, false, ['sign']);
  return { signingKey, signingAlgorithm };
}

/** Positive, non-zero-led 128-bit serial, as Go's crypto/x509 callers (kubeadm) use. */
function randomSerial(): string {
  const b = randomBytes(16);
  b[0] = ((b[0] ?? 0) & 0x7f) | 0x40;
  return b.toString('hex');
}

function validity(o: CommonOpts, defaultDays: number): { notBefore: Date; notAfter: Date } {
  const notBefore = o.notBefore ?? new Date(Date.now() - BACKDATE_MS);
  const notAfter = o.notAfter ?? new Date(notBefore.getTime() + (o.validityDays ?? defaultDays) * DAY_MS);
  if (notAfter.getTime() <= notBefore.getTime()) {
    throw new Error(`certificate for ${o.commonName}: notAfter must be later than notBefore`);
  }
  return { notBefore, notAfter };
}

/** Go's pkix.Name order: O before CN in the DER sequence (so "CN=..,O=.." in RFC 4514). */
function subjectName(commonName: string, organization: string[] | undefined): x509.Name {
  const rdns: [string, string[]][] = [];
  if (organization && organization.length > 0) rdns.push(['O', organization]);
  rdns.push(['CN', [commonName]]);
  return literalName(rdns);
}

async function keyFor(o: CommonOpts): Promise<KeyObject> {
  if (o.existingKeyPem !== undefined) return parsePrivateKeyPem(o.existingKeyPem);
  return generatePrivateKey(o.key ?? { algorithm: 'RSA', size: 2048 });
}

function keyIdentifier(cert: x509.X509Certificate): string | undefined {
  return cert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
}

async function build(
  o: CommonOpts,
  usage: CertUsage,
  issuer: Issued | undefined,
  extra: { dnsNames?: string[]; ipAddresses?: string[]; pathLength?: number },
  defaultDays: number,
): Promise<Issued> {
  const privateKey = await keyFor(o);
  const { signingKey, signingAlgorithm } = await toSigningKey(privateKey);
  const publicKeyDer = spkiDer(privateKey);
  const { notBefore, notAfter } = validity(o, defaultDays);
  const subject = subjectName(o.commonName, o.organization);

  const extensions: x509.Extension[] = [];
  // SHA-1 of the subjectPublicKey bits (RFC 5280 method 1), as Go's crypto/x509 computes it.
  const ski = await x509.SubjectKeyIdentifierExtension.create(publicKeyDer);
  if (usage === 'ca') {
    extensions.push(new x509.BasicConstraintsExtension(true, extra.pathLength, true));
    extensions.push(
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
        true,
      ),
    );
  } else {
    extensions.push(new x509.BasicConstraintsExtension(false, undefined, true));
    // keyEncipherment only means something for RSA key transport; Go/kubeadm sets it for RSA leaves.
    const rsa = privateKey.asymmetricKeyType === 'rsa';
    extensions.push(
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | (rsa ? x509.KeyUsageFlags.keyEncipherment : 0),
        true,
      ),
    );
    const ekus: string[] = [];
    if (usage === 'server' || usage === 'peer') ekus.push(x509.ExtendedKeyUsage.serverAuth);
    if (usage === 'client' || usage === 'peer') ekus.push(x509.ExtendedKeyUsage.clientAuth);
    extensions.push(new x509.ExtendedKeyUsageExtension(ekus, false));
  }
  extensions.push(ski);
  // Like Go: no AKI on a self-signed certificate; otherwise the issuer's SKI.
  const issuerKeyId = issuer ? keyIdentifier(issuer.certificate) : undefined;
  if (issuerKeyId) extensions.push(new x509.AuthorityKeyIdentifierExtension(issuerKeyId, false));
  const sans: x509.JsonGeneralName[] = [
    ...(extra.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(extra.ipAddresses ?? []).map((value) => {
      if (isIP(value) === 0)
        throw new Error(`certificate for ${o.commonName}: "${value}" is not an IP address`);
      return { type: 'ip' as const, value };
    }),
  ];
  if (sans.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(sans, false));

  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject,
    issuer: issuer ? issuer.certificate.subjectName : subject,
    notBefore,
    notAfter,
    publicKey: publicKeyDer,
    signingKey: issuer ? issuer.signingKey : signingKey,
    signingAlgorithm: issuer ? issuer.signingAlgorithm : signingAlgorithm,
    extensions,
  });
  return {
    certPem: `${certificate.toString('pem')}\n`,
    keyPem: privateKeyToPem(privateKey),
    subject: formatName(certificate.subjectName),
    notAfter: certificate.notAfter,
    certificate,
    privateKey,
    signingKey,
    signingAlgorithm,
  };
}

/** A self-signed root CA (kubeadm: 10 years, CA:TRUE critical, keyCertSign|cRLSign|digitalSignature). */
export async function createCA(opts: CommonOpts & { pathLength?: number }): Promise<Issued> {
  return build(opts, 'ca', undefined, { pathLength: opts.pathLength }, CA_VALIDITY_DAYS);
}

/**
 * A certificate signed by `issuer`. `usage: 'ca'` makes an intermediate CA; leaves get serverAuth
 * (server), clientAuth (client) or both (peer), like kubeadm's etcd server/peer certificates.
 */
export async function issueCertificate(
  opts: CommonOpts & {
    issuer: Issued;
    dnsNames?: string[];
    ipAddresses?: string[];
    usage: CertUsage;
    pathLength?: number;
  },
): Promise<Issued> {
  const days = opts.usage === 'ca' ? CA_VALIDITY_DAYS : LEAF_VALIDITY_DAYS;
  return build(
    opts,
    opts.usage,
    opts.issuer,
    { dnsNames: opts.dnsNames, ipAddresses: opts.ipAddresses, pathLength: opts.pathLength },
    days,
  );
}

/** Loads an existing certificate and its key (e.g. a CA from /etc/kubernetes/pki) to issue from it. */
export async function loadIssued(certPem: string, keyPem: string): Promise<Issued> {
  const certificate = new x509.X509Certificate(certPem);
  const privateKey = parsePrivateKeyPem(keyPem);
  const certSpki = Buffer.from(certificate.publicKey.rawData);
  if (!certSpki.equals(spkiDer(privateKey))) {
    throw new Error(`the private key does not match the certificate ${formatName(certificate.subjectName)}`);
  }
  const { signingKey, signingAlgorithm } = await toSigningKey(privateKey);
  return {
    certPem,
    keyPem,
    subject: formatName(certificate.subjectName),
    notAfter: certificate.notAfter,
    certificate,
    privateKey,
    signingKey,
    signingAlgorithm,
  };
}
