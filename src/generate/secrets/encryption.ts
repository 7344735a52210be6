import { inputError } from '../../errors.js';
import { coversSecrets } from '../../facts/encryption.js';
import { TALOS_ENCRYPTION_KEY_NAMES } from '../../knowledge/talos.js';
import { parseEncryptionConfig } from '../../snapshot/encryption.js';
import { describeSource, type EncryptionConfig } from '../../snapshot/model.js';
import { encryptionKeyProblem } from '../../snapshot/values.js';
import { parseYamlDocuments } from '../../snapshot/yaml.js';
import { decodeStdBase64 } from './encoding.js';

/**
 * The kube-apiserver EncryptionConfiguration *with* its secrets: only `generate` reads them, to
 * carry the cluster's key into the Talos bundle or to write the key-rename files. Snapshots keep
 * names and fingerprints only.
 */
export interface EncryptionKey {
  name: string;
  secret: string;
}

export interface EncryptionProviderWithKeys {
  /** aescbc, aesgcm, secretbox, kms, identity, or whatever else the file names. */
  type: string;
  keys: EncryptionKey[];
  /** The provider block as written (kms settings etc.), for re-rendering unchanged. */
  raw: Record<string, unknown>;
}

export interface EncryptionResourceRule {
  resources: string[];
  providers: EncryptionProviderWithKeys[];
}

export interface EncryptionConfigWithKeys {
  file: string;
  apiVersion: string;
  kind: string;
  resources: EncryptionResourceRule[];
}

/** Talos ≤1.13 (and its v1.14 fallback template) fixes the key names (talos.md §4.6). */
const TALOS_KEY_NAMES = TALOS_ENCRYPTION_KEY_NAMES;

export function parseEncryptionConfigWithKeys(text: string, file: string): EncryptionConfigWithKeys {
  // The snapshot's parser does the validation (kinds, providers, base64) with line numbers.
  parseEncryptionConfig(text, file);
  const doc = parseYamlDocuments(text, { file })[0];
  const v = doc?.value as Record<string, unknown> | undefined;
  const kind = typeof v?.['kind'] === 'string' ? (v['kind'] as string) : '';
  if (!v || (kind !== 'EncryptionConfiguration' && kind !== 'EncryptionConfig')) {
    throw inputError(
      'not an EncryptionConfiguration',
      { file, field: 'kind' },
      'pass the file named by kube-apiserver --encryption-provider-config (kind: EncryptionConfiguration)',
    );
  }
  const rules = Array.isArray(v['resources']) ? (v['resources'] as unknown[]) : [];
  const resources: EncryptionResourceRule[] = rules.map((rule, i) => {
    const r = (rule ?? {}) as Record<string, unknown>;
    const names = Array.isArray(r['resources']) ? (r['resources'] as unknown[]).map(String) : [];
    const providers = Array.isArray(r['providers']) ? (r['providers'] as unknown[]) : [];
    return {
      resources: names,
      providers: providers.map((p, j) => {
        const block = (p ?? {}) as Record<string, unknown>;
        const type = Object.keys(block)[0];
        if (!type) {
          throw inputError(
            'empty provider',
            { file, field: `resources[${i}].providers[${j}]` },
            'remove the empty entry',
          );
        }
        const body = (block[type] ?? {}) as Record<string, unknown>;
        const keys = Array.isArray(body['keys']) ? (body['keys'] as Record<string, unknown>[]) : [];
        return {
          type,
          raw: block,
          keys: keys.map((k) => ({ name: String(k?.['name'] ?? ''), secret: String(k?.['secret'] ?? '') })),
        };
      }),
    };
  });
  return { file, apiVersion: String(v['apiVersion'] ?? ''), kind, resources };
}

/** The rule that covers core Secrets (the only resource Talos encrypts). */
export function secretsRule(cfg: {
  resources: EncryptionResourceRule[];
}): EncryptionResourceRule | undefined {
  return cfg.resources.find((r) => coversSecrets(r.resources));
}

export type EncryptionDecision =
  /** The cluster writes Secrets in plaintext (no config, or identity first): Talos must not encrypt either. */
  | { kind: 'plaintext'; reason: string }
  /** The write key already has Talos's provider and name: carry it into the bundle. */
  | { kind: 'import'; field: 'secretbox' | 'aescbc'; keyName: string; secret: string }
  /** The write key cannot be expressed in Talos ≤1.13 terms: rotate it on the kubeadm side first. */
  | { kind: 'rename-needed'; provider: string; keyName: string; reason: string };

/**
 * Whether Talos can share the cluster's encryption key. Stored values are prefixed
 * `k8s:enc:<provider>:v1:<name>:` and the apiserver picks the key by that name, so only the
 * write key under Talos's provider *and* name is importable (talos.md §4.6, blockers.md encryption.key-name).
 */
export function decideEncryption(cfg: EncryptionConfigWithKeys | undefined): EncryptionDecision {
  if (!cfg) return { kind: 'plaintext', reason: 'kube-apiserver has no --encryption-provider-config' };
  const rule = secretsRule(cfg);
  const writer = rule?.providers[0];
  if (!rule || !writer) return { kind: 'plaintext', reason: `${cfg.file} does not cover secrets` };
  if (writer.type === 'identity')
    return { kind: 'plaintext', reason: `${cfg.file} writes secrets with identity (plaintext)` };
  const key = writer.keys[0];
  if ((writer.type === 'secretbox' || writer.type === 'aescbc') && key) {
    const talosName = TALOS_KEY_NAMES[writer.type];
    if (key.name === talosName) {
      const bytes = decodeStdBase64(key.secret);
      if (!bytes || encryptionKeyProblem(writer.type, bytes)) {
        throw inputError(
          `the ${writer.type} key "${key.name}" is not base64 of ${writer.type === 'secretbox' ? '32' : '16, 24 or 32'} bytes`,
          { file: cfg.file, field: `${writer.type}.keys[0].secret` },
          'pass the intact EncryptionConfiguration file from a control-plane node',
        );
      }
      return { kind: 'import', field: writer.type, keyName: key.name, secret: key.secret };
    }
    return {
      kind: 'rename-needed',
      provider: writer.type,
      keyName: key.name,
      reason: `the write key is ${writer.type} "${key.name}"; Talos names its ${writer.type} key "${talosName}"`,
    };
  }
  return {
    kind: 'rename-needed',
    provider: writer.type,
    keyName: key?.name ?? '',
    reason: `the write provider is ${writer.type}; Talos ≤1.13 writes only with secretbox "key2" or aescbc "key1"`,
  };
}

/**
 * Checks that the file handed to ferry is the one the snapshot saw: same providers, key names
 * and secret fingerprints (both sides normalized by the snapshot's own parser). A stale copy would
 * import a key the cluster no longer writes with.
 */
export function checkMatchesSnapshot(file: string, text: string, seen: EncryptionConfig): void {
  const here = parseEncryptionConfig(text, file);
  const shape = (c: EncryptionConfig) =>
    JSON.stringify(
      c.resources.map((r) => ({
        resources: r.resources,
        providers: r.providers.map((p) => ({
          type: p.type,
          keyNames: p.keyNames,
          keyFingerprints: p.keyFingerprints,
        })),
      })),
    );
  if (shape(here) !== shape(seen)) {
    throw inputError(
      `${file} differs from the EncryptionConfiguration in the snapshot (${describeSource(seen.source)}): providers, key names or key secrets changed`,
      { file },
      'pass the file the apiservers use now (--encryption-provider-config on a control-plane node), or take a fresh snapshot',
    );
  }
}

/**
 * Keys other than the write key that Talos's template will not have: Secrets still stored under
 * them are unreadable by Talos apiservers until re-encrypted. `identity` is always in Talos's list.
 */
export function keysTalosCannotRead(cfg: EncryptionConfigWithKeys): string[] {
  const rule = secretsRule(cfg);
  if (!rule) return [];
  const out: string[] = [];
  rule.providers.forEach((p, i) => {
    if (p.type === 'identity') return;
    p.keys.forEach((k, j) => {
      if (i === 0 && j === 0) return;
      const talosName = (TALOS_KEY_NAMES as Record<string, string | undefined>)[p.type];
      if (talosName !== k.name) out.push(`${p.type} "${k.name}"`);
    });
  });
  return out;
}
