import { createPublicKey, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { FerryError, inputError } from '../../errors.js';
import { KIT } from '../../knowledge/kit-paths.js';
import { KIT_ENCRYPTION_KEY_LABEL } from '../../knowledge/kit-values.js';
import { spkiDer } from '../../pki/pem.js';
import type { SourceRef } from '../../snapshot/model.js';
import { readOptionalTextFile, requireDirectory } from '../../util/input-file.js';
import type { GenerateNote } from '../artifact.js';
import type { TalosSecretsBundle } from './bundle.js';
import { checkCaPair } from './ca-check.js';
import {
  decideEncryption,
  type EncryptionConfigWithKeys,
  type EncryptionDecision,
  keysTalosCannotRead,
} from './encryption.js';
import { createTalosOsCa } from './os-ca.js';
import { parseTalosPrivateKey } from './pem.js';
import { random32Base64, randomToken } from './tokens.js';

export interface FromKubeadmOptions {
  /** Already checked against the token pattern (tokens.ts checkBootstrapToken). */
  bootstrapToken: string;
  /** The cluster's EncryptionConfiguration with secrets, when it has one. */
  encryption?: EncryptionConfigWithKeys;
  now?: Date;
}

export interface BuiltBundle {
  bundle: TalosSecretsBundle;
  encryption: EncryptionDecision;
  /** Bundle value path (e.g. "certs.k8s") → where it came from. */
  provenance: Record<string, SourceRef[]>;
  notes: GenerateNote[];
}

/** The kubeadm files Talos imports, in the order `talosctl gen secrets --from-kubernetes-pki` reads them (talos.md §2). */
const CA_FILES = [
  { field: 'k8s', role: 'Kubernetes CA', crt: 'ca.crt', key: 'ca.key', rule: 'pki.ca-key-missing' },
  { field: 'etcd', role: 'etcd CA', crt: 'etcd/ca.crt', key: 'etcd/ca.key', rule: 'pki.etcd-ca-missing' },
  {
    field: 'k8saggregator',
    role: 'front-proxy (aggregator) CA',
    crt: 'front-proxy-ca.crt',
    key: 'front-proxy-ca.key',
    rule: 'pki.front-proxy-ca-missing',
  },
] as const;

/**
 * Builds the Talos secrets bundle from a kubeadm PKI directory: the three CAs and sa.key byte for
 * byte, the given bootstrap token, a new Talos API CA, random trustd token, cluster id and secret,
 * and the encryption secret only when the cluster's write key is already Talos-named. Every CA pair
 * is checked first (ca-check.ts); any problem is bad input and nothing is built.
 */
export async function buildBundleFromKubeadmPki(
  pkiDir: string,
  opts: FromKubeadmOptions,
): Promise<BuiltBundle> {
  const now = opts.now ?? new Date();
  const provide = 'pass --pki a copy of /etc/kubernetes/pki from a control-plane node';
  await requireDirectory(pkiDir, { flag: '--pki', provide });
  const wanted = [...CA_FILES.flatMap((c) => [c.crt, c.key]), 'sa.key'];
  const texts = new Map<string, string>();
  const missing: string[] = [];
  for (const rel of wanted) {
    const text = await readOptionalTextFile(join(pkiDir, rel), { provide });
    if (text === undefined) missing.push(rel);
    else texts.set(rel, text);
  }
  if (missing.length > 0) {
    throw new FerryError(
      'input',
      `the kubeadm PKI in ${pkiDir} lacks ${missing.join(', ')}; Talos re-issues every certificate from these CAs and keys`,
      {
        location: { file: join(pkiDir, missing[0] ?? '') },
        remediation:
          'copy them from /etc/kubernetes/pki on a control-plane node (external-CA mode or an external etcd without its CA key cannot be migrated)',
      },
    );
  }
  const at = (rel: string) => texts.get(rel) ?? '';
  const notes: GenerateNote[] = [];
  for (const c of CA_FILES) {
    notes.push(
      ...(await checkCaPair(
        {
          role: c.role,
          certFile: join(pkiDir, c.crt),
          certPem: at(c.crt),
          keyFile: join(pkiDir, c.key),
          keyPem: at(c.key),
        },
        now,
      )),
    );
  }
  await checkServiceAccountKey(pkiDir, at('sa.key'));

  const decision = decideEncryption(opts.encryption);
  const fileRef = (rel: string): SourceRef => ({ kind: 'file', path: join(pkiDir, rel) });
  const random = (note: string): SourceRef[] => [{ kind: 'derived', from: [], note }];
  const bundle: TalosSecretsBundle = {
    cluster: { id: new Uint8Array(randomBytes(32)), secret: random32Base64() },
    secrets: { bootstrapToken: opts.bootstrapToken },
    trustdInfo: { token: randomToken() },
    certs: {
      k8s: { crt: at('ca.crt'), key: at('ca.key') },
      etcd: { crt: at('etcd/ca.crt'), key: at('etcd/ca.key') },
      k8sAggregator: { crt: at('front-proxy-ca.crt'), key: at('front-proxy-ca.key') },
      k8sServiceAccount: { key: at('sa.key') },
      os: await createTalosOsCa(now),
    },
  };
  const provenance: Record<string, SourceRef[]> = {
    'cluster.id': random('32 random bytes, new for this Talos cluster identity'),
    'cluster.secret': random('32 random bytes (discovery service key)'),
    'secrets.bootstraptoken': [{ kind: 'derived', from: [], note: 'ferry generate --bootstrap-token' }],
    'trustdinfo.token': random('random token'),
    'certs.k8s': [fileRef('ca.crt'), fileRef('ca.key')],
    'certs.etcd': [fileRef('etcd/ca.crt'), fileRef('etcd/ca.key')],
    'certs.k8saggregator': [fileRef('front-proxy-ca.crt'), fileRef('front-proxy-ca.key')],
    'certs.k8sserviceaccount.key': [fileRef('sa.key')],
    'certs.os': random('new Ed25519 Talos API CA (kubeadm has none)'),
  };
  if (decision.kind === 'import' && opts.encryption) {
    const field = decision.field === 'secretbox' ? 'secretboxencryptionsecret' : 'aescbcencryptionsecret';
    if (decision.field === 'secretbox') bundle.secrets.secretboxEncryptionSecret = decision.secret;
    else bundle.secrets.aescbcEncryptionSecret = decision.secret;
    provenance[`secrets.${field}`] = [
      {
        kind: 'file',
        path: opts.encryption.file,
        field: `${decision.field} key "${decision.keyName}" (the write key)`,
      },
    ];
  }
  notes.push(...encryptionNotes(decision, opts.encryption));
  const unreadable = opts.encryption ? keysTalosCannotRead(opts.encryption) : [];
  if (unreadable.length > 0 && decision.kind !== 'rename-needed') {
    notes.push({
      severity: 'warning',
      message: `Secrets written with ${unreadable.join(', ')} cannot be read by Talos apiservers (only secretbox "key2", aescbc "key1" and identity): re-encrypt every Secret (kubectl get secrets -A -o json | kubectl replace -f -) before the first Talos control plane joins`,
      source: { kind: 'file', path: opts.encryption?.file ?? '' },
    });
  }
  return { bundle, encryption: decision, provenance, notes };
}

/** sa.key must parse as Talos reads it; when sa.pub is there it must be sa.key's public half. */
async function checkServiceAccountKey(pkiDir: string, saKeyPem: string): Promise<void> {
  const keyFile = join(pkiDir, 'sa.key');
  const key = parseTalosPrivateKey(saKeyPem, keyFile);
  const pubFile = join(pkiDir, 'sa.pub');
  const pub = await readOptionalTextFile(pubFile, { provide: 'copy sa.pub again from a control-plane node' });
  if (pub === undefined) return;
  let pubDer: Buffer;
  try {
    pubDer = createPublicKey(pub).export({ type: 'spki', format: 'der' });
  } catch (cause) {
    throw inputError(
      'cannot parse sa.pub',
      { file: pubFile },
      'copy sa.pub again from a control-plane node',
      cause,
    );
  }
  if (!pubDer.equals(spkiDer(key))) {
    throw inputError(
      'sa.pub is not the public key of sa.key (pki.cert-key-mismatch): tokens signed by Talos would not verify on kubeadm apiservers',
      { file: pubFile },
      'copy sa.key and sa.pub together from the same control-plane node',
    );
  }
}

function encryptionNotes(
  decision: EncryptionDecision,
  cfg: EncryptionConfigWithKeys | undefined,
): GenerateNote[] {
  const source: SourceRef | undefined = cfg ? { kind: 'file', path: cfg.file } : undefined;
  const withSource = (n: GenerateNote): GenerateNote => (source ? { ...n, source } : n);
  switch (decision.kind) {
    case 'plaintext':
      return [
        withSource({
          severity: 'info',
          message: `secrets.yaml has no encryption secret: ${decision.reason}, so Talos must not encrypt either (encryption.absent). Enable encryption after the migration as its own step. talosctl gen config --with-secrets refuses a bundle without one; use the kit's machine configs instead`,
        }),
      ];
    case 'import':
      return [
        withSource({
          severity: 'info',
          message: `secrets.yaml carries the cluster's ${decision.field} key "${decision.keyName}": Talos apiservers read and write Secrets with the same key as kubeadm's`,
        }),
      ];
    case 'rename-needed':
      return [
        withSource({
          severity: 'warning',
          message: `secrets.yaml has no encryption secret yet: ${decision.reason} (encryption.key-name). Run the key-rename steps ${KIT.encryptionPhase1}, ${KIT.encryptionPhase2} and ${KIT.reencrypt}, which move the write key to ${KIT_ENCRYPTION_KEY_LABEL}, then take a fresh snapshot and run ferry generate again (--encryption-config the rotated file) so that key is imported`,
        }),
      ];
  }
}
