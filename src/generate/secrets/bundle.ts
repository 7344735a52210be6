/**
 * The Talos secrets bundle (`talosctl gen secrets` output, CABPT's `<cluster>-talos` `bundle`), as
 * plain data. PEM texts are kept decoded here; the base64 wrapping is a property of the file format
 * (read.ts / render.ts). Shape and field order: knowledge/talos.md §1.
 */

/** A certificate and its private key, both PEM text. */
export interface CertAndKey {
  crt: string;
  key: string;
}

export interface TalosSecretsBundle {
  cluster: {
    /** 32 random bytes; rendered StdEncoding for Talos ≥1.14, URLEncoding for ≤1.13. */
    id: Uint8Array;
    /** base64 (Std) of 32 bytes, kept as written. */
    secret: string;
  };
  secrets: {
    bootstrapToken: string;
    /** base64 of 32 bytes; absent when ferry deliberately leaves encryption out (see from-kubeadm.ts). */
    secretboxEncryptionSecret?: string;
    aescbcEncryptionSecret?: string;
  };
  trustdInfo: { token: string };
  certs: {
    etcd: CertAndKey;
    k8s: CertAndKey;
    k8sAggregator: CertAndKey;
    /** No certificate: Talos derives the public key from the private key. */
    k8sServiceAccount: { key: string };
    os: CertAndKey;
  };
}

/** `[a-z0-9]{6}.[a-z0-9]{16}`: the bootstrap and trustd token format (talos.md §1). */
export const TOKEN_PATTERN = /^[a-z0-9]{6}\.[a-z0-9]{16}$/;
