/**
 * Key material, new on every run: the bootstrap token, kube-public/cluster-info (signed with it) and the
 * encryption configuration. The PKI is written by pki.ts. Only the files in KEY_MATERIAL_FILES hold any
 * of it, so everything else can be compared byte for byte with the committed example.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { stringify } from 'yaml';
import type { Allocator } from './allocator.js';
import { CLUSTER } from './cluster.js';
import type { K8s } from './objects.js';
import { plus } from './seed.js';
import { toYaml } from './serialize.js';

/** Files whose content includes key material (new on every run); everything else is reproducible. */
export const KEY_MATERIAL_FILES: readonly string[] = [
  'pki/',
  'encryption-config.yaml',
  'resources/bootstrap-token.yaml',
  'resources/cluster-info.yaml',
];

function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}

function b64url(s: string | Buffer): string {
  return Buffer.from(s).toString('base64url');
}

const TOKEN_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function randomTokenSecret(): string {
  const bytes = randomBytes(16);
  let s = '';
  for (const b of bytes) s += TOKEN_ALPHABET[b % TOKEN_ALPHABET.length];
  return s;
}

const TOKEN_CREATED = '2026-11-29T16:40:12Z';

export function bootstrapTokenSecret(alloc: Allocator, tokenSecret: string): K8s {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: alloc.meta(
      'Secret',
      `bootstrap-token-${CLUSTER.bootstrapTokenId}`,
      'kube-system',
      TOKEN_CREATED,
    ),
    type: 'bootstrap.kubernetes.io/token',
    data: {
      'auth-extra-groups': b64('system:bootstrappers:kubeadm:default-node-token'),
      description: b64('Worker join token, created by `kubeadm token create` (default TTL 24h)'),
      expiration: b64(plus(TOKEN_CREATED, 24 * 3600)),
      'token-id': b64(CLUSTER.bootstrapTokenId),
      'token-secret': b64(tokenSecret),
      'usage-bootstrap-authentication': b64('true'),
      'usage-bootstrap-signing': b64('true'),
    },
  };
}

/** kube-public/cluster-info with the JWS the bootstrap signer adds for each signing token. */
export function clusterInfo(alloc: Allocator, caPem: string, tokenSecret: string): K8s {
  const kubeconfig = toYaml({
    apiVersion: 'v1',
    clusters: [
      {
        cluster: {
          'certificate-authority-data': Buffer.from(caPem).toString('base64'),
          server: `https://${CLUSTER.endpointHost}:${CLUSTER.endpointPort}`,
        },
        name: '',
      },
    ],
    contexts: null,
    'current-context': '',
    kind: 'Config',
    preferences: {},
    users: null,
  });
  // Detached JWS (HS256) keyed with the full token, as the bootstrapsigner controller computes it.
  const header = b64url(JSON.stringify({ alg: 'HS256', kid: CLUSTER.bootstrapTokenId }));
  const signingInput = `${header}.${b64url(kubeconfig)}`;
  const sig = createHmac('sha256', `${CLUSTER.bootstrapTokenId}.${tokenSecret}`)
    .update(signingInput)
    .digest();
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: alloc.meta('ConfigMap', 'cluster-info', 'kube-public', '2025-02-11T09:14:34Z'),
    data: { [`jws-kubeconfig-${CLUSTER.bootstrapTokenId}`]: `${header}..${b64url(sig)}`, kubeconfig },
  };
}

export function encryptionConfig(): string {
  const doc = {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'EncryptionConfiguration',
    resources: [
      {
        resources: ['secrets'],
        providers: [
          {
            aescbc: {
              keys: [{ name: CLUSTER.encryptionKeyName, secret: randomBytes(32).toString('base64') }],
            },
          },
          { identity: {} },
        ],
      },
    ],
  };
  return `# ${CLUSTER.encryptionConfigPath} on every control plane (the same file on all three).\n${stringify(
    doc,
    {
      indentSeq: true,
      lineWidth: 0,
    },
  )}`;
}
