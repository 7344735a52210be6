/**
 * The `<cluster>-kubeconfig` Secret adoption writes in the paused control-plane provider's stead
 * (capi.md §9, docs/knowledge/capi.md §4.9): Cluster API reaches the workload cluster only through
 * it (a Machine gets no nodeRef without it). Its client certificate is minted from the kit's
 * `<cluster>-ca` (the cluster's own CA) with a name an operator can find in audit logs and a
 * lifetime below CACPPT's renewal threshold, so CACPPT replaces it with its own at its first
 * reconcile once unpaused. The Secret's data is never printed; the kubeconfig's cluster entry is
 * keyed by the Cluster's name, which Cluster API's renewal reads.
 */
import { stringify } from 'yaml';
import { issueCertificate, loadIssued } from '../pki/forge.js';
import { parsePrivateKeyPem } from '../pki/pem.js';
import type { KubeObject } from '../snapshot/model.js';
import { CAPI_SECRET_TYPE, CLUSTER_NAME_LABEL, KUBECONFIG_SECRET_KEY, kubeconfigSecretName } from './view.js';

/** Who the minted credential is: user (CN), groups (O), lifetime. */
export const ADOPT_CLIENT = {
  commonName: 'ferry-capi-adopt',
  // The group Cluster API's own kubeconfig carries: its controllers drain and delete Nodes cluster-wide.
  organization: ['system:masters'],
  /** Under CACPPT's renewal threshold (half of a year): it renews ours at its first reconcile. */
  validityDays: 180,
} as const;

const BACKDATE_MS = 5 * 60_000;

/** How the credential is described wherever the Secret is shown (never its data). */
export function describeAdoptClient(notAfter?: Date): string {
  return `client certificate CN=${ADOPT_CLIENT.commonName}, O=${ADOPT_CLIENT.organization.join('+')}, signed by the cluster CA, valid ${ADOPT_CLIENT.validityDays} days${notAfter ? ` (until ${notAfter.toISOString()})` : ''}`;
}

const fromB64 = (v: unknown) =>
  typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : undefined;

export type MintResult =
  | { kind: 'minted'; secret: KubeObject; notAfter: Date }
  /** The kit cannot mint one: why (the plan refuses when the Secret is also missing live). */
  | { kind: 'unavailable'; reason: string };

/**
 * The Secret for the kit's Cluster, its kubeconfig pointing at the Cluster's controlPlaneEndpoint
 * and trusting the cluster CA. Labelled with the cluster name; its owner (the Cluster) is set by
 * the plan's own-secrets step, once the Cluster has a uid.
 */
export async function mintKubeconfigSecret(kit: KubeObject[], now: Date): Promise<MintResult> {
  const cluster = kit.find((o) => o.kind === 'Cluster');
  if (!cluster) return { kind: 'unavailable', reason: 'the kit has no Cluster' };
  const name = cluster.metadata.name;
  const ns = cluster.metadata.namespace ?? 'default';
  const ep = cluster.spec?.['controlPlaneEndpoint'] as { host?: unknown; port?: unknown } | undefined;
  if (typeof ep?.host !== 'string' || ep.host === '' || typeof ep.port !== 'number')
    return { kind: 'unavailable', reason: `Cluster ${name} has no spec.controlPlaneEndpoint` };
  const caSecret = kit.find((o) => o.kind === 'Secret' && o.metadata.name === `${name}-ca`);
  const data = caSecret?.['data'] as Record<string, unknown> | undefined;
  const crt = fromB64(data?.['tls.crt']);
  const key = fromB64(data?.['tls.key']);
  if (!crt || !key)
    return { kind: 'unavailable', reason: `the kit's Secret ${name}-ca has no tls.crt and tls.key` };
  let ca: Awaited<ReturnType<typeof loadIssued>>;
  try {
    ca = await loadIssued(crt, parsePrivateKeyPem(key).export({ type: 'pkcs8', format: 'pem' }) as string);
  } catch (err) {
    return {
      kind: 'unavailable',
      reason: `the kit's Secret ${name}-ca does not hold a usable CA: ${(err as Error).message}`,
    };
  }
  const client = await issueCertificate({
    issuer: ca,
    commonName: ADOPT_CLIENT.commonName,
    organization: [...ADOPT_CLIENT.organization],
    key: { algorithm: 'ECDSA', curve: 'P-256' },
    usage: 'client',
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    validityDays: ADOPT_CLIENT.validityDays,
  });
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  const user = `${name}-admin`;
  const context = `${user}@${name}`;
  const host = ep.host.includes(':') ? `[${ep.host}]` : ep.host;
  const kubeconfig = stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name, cluster: { server: `https://${host}:${ep.port}`, 'certificate-authority-data': b64(crt) } },
    ],
    users: [
      {
        name: user,
        user: { 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(client.keyPem) },
      },
    ],
    contexts: [{ name: context, context: { cluster: name, user } }],
    'current-context': context,
  });
  return {
    kind: 'minted',
    notAfter: client.notAfter,
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      type: CAPI_SECRET_TYPE,
      metadata: {
        name: kubeconfigSecretName(name),
        namespace: ns,
        labels: { [CLUSTER_NAME_LABEL]: name },
        annotations: { 'ferry.dev/credential': describeAdoptClient(client.notAfter) },
      },
      data: { [KUBECONFIG_SECRET_KEY]: b64(kubeconfig) },
    } as KubeObject,
  };
}
