import { parse } from 'yaml';
import type { CertAndKey, TalosSecretsBundle } from './bundle.js';
import { encodeClusterId, toStdBase64 } from './encoding.js';

/**
 * Renders a bundle exactly as `talosctl gen secrets` writes it: go-yaml block style with a 4-space
 * indent, lower-cased Go field names in struct order, `crt`/`key` as standard base64 of the PEM
 * text, empty encryption secrets omitted (omitempty), and `cluster.id` encoded per target version.
 */
export function renderTalosSecretsBundle(bundle: TalosSecretsBundle, talosVersion: string): string {
  const lines: string[] = [];
  const put = (indent: number, key: string, value?: string) => {
    const pad = ' '.repeat(indent * 4);
    lines.push(value === undefined ? `${pad}${key}:` : `${pad}${key}: ${scalar(value)}`);
  };
  const pair = (name: string, ck: CertAndKey) => {
    put(1, name);
    put(2, 'crt', pem64(ck.crt));
    put(2, 'key', pem64(ck.key));
  };

  put(0, 'cluster');
  put(1, 'id', encodeClusterId(bundle.cluster.id, talosVersion));
  put(1, 'secret', bundle.cluster.secret);
  put(0, 'secrets');
  put(1, 'bootstraptoken', bundle.secrets.bootstrapToken);
  if (bundle.secrets.aescbcEncryptionSecret)
    put(1, 'aescbcencryptionsecret', bundle.secrets.aescbcEncryptionSecret);
  if (bundle.secrets.secretboxEncryptionSecret) {
    put(1, 'secretboxencryptionsecret', bundle.secrets.secretboxEncryptionSecret);
  }
  put(0, 'trustdinfo');
  put(1, 'token', bundle.trustdInfo.token);
  put(0, 'certs');
  pair('etcd', bundle.certs.etcd);
  pair('k8s', bundle.certs.k8s);
  pair('k8saggregator', bundle.certs.k8sAggregator);
  put(1, 'k8sserviceaccount');
  put(2, 'key', pem64(bundle.certs.k8sServiceAccount.key));
  pair('os', bundle.certs.os);
  return `${lines.join('\n')}\n`;
}

function pem64(pem: string): string {
  return toStdBase64(Buffer.from(pem, 'utf8'));
}

/**
 * go-yaml writes a string plain unless reading it back would give another type (a number, a bool,
 * null) or it has YAML syntax in it; then it double-quotes. Checked under YAML 1.1 and 1.2 so a
 * token such as "123456.1234567890123456" (a float) stays a string for every reader.
 */
function scalar(value: string): string {
  const plainSafe =
    /^[A-Za-z0-9+/=_.-]+$/.test(value) &&
    parse(value, { version: '1.2' }) === value &&
    parse(value, { version: '1.1' }) === value;
  return plainSafe ? value : JSON.stringify(value);
}
