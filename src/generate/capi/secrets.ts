/**
 * Secrets Cluster API and the Talos providers look up by name before generating their own
 * (capi.md §3, §4.2; H6): `<cluster>-ca`, `-etcd`, `-sa`, `-proxy` with `tls.crt`/`tls.key`
 * (`-sa`: tls.crt is the *public key*), type cluster.x-k8s.io/secret, and `<cluster>-talos` with the
 * secrets bundle under `bundle`. All carry the cluster-name label and clusterctl's move label,
 * because an ownerRef needs the Cluster's UID, which exists only after it is created (H14).
 */
import { createPublicKey } from 'node:crypto';
import { CAPI_SECRET_TYPE, CLUSTER_NAME_LABEL, MOVE_LABEL } from '../../capi/view.js';
import type { TalosSecretsBundle } from '../secrets/bundle.js';
import { parseTalosPrivateKey } from '../secrets/pem.js';
import { renderTalosSecretsBundle } from '../secrets/render.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

export function clusterSecrets(
  cluster: string,
  namespace: string,
  bundle: TalosSecretsBundle,
  talosVersion: string,
): Record<string, unknown>[] {
  const labels = { [CLUSTER_NAME_LABEL]: cluster, [MOVE_LABEL]: '' };
  const tls = (suffix: string, crt: string, key: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    type: CAPI_SECRET_TYPE,
    metadata: { name: `${cluster}-${suffix}`, namespace, labels },
    data: { 'tls.crt': b64(crt), 'tls.key': b64(key) },
  });
  const saKey = bundle.certs.k8sServiceAccount.key;
  const saPub = createPublicKey(parseTalosPrivateKey(saKey, 'sa.key')).export({
    type: 'spki',
    format: 'pem',
  }) as string;
  return [
    tls('ca', bundle.certs.k8s.crt, bundle.certs.k8s.key),
    tls('etcd', bundle.certs.etcd.crt, bundle.certs.etcd.key),
    tls('sa', saPub, saKey),
    tls('proxy', bundle.certs.k8sAggregator.crt, bundle.certs.k8sAggregator.key),
    {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name: `${cluster}-talos`, namespace, labels },
      data: { bundle: b64(renderTalosSecretsBundle(bundle, talosVersion)) },
    },
  ];
}
