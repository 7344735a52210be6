/** Encryption at rest: which config file the apiservers use, its providers and key names. */
import type { EncryptionConfig } from '../snapshot/model.js';
import { absent, podCandidates, runningBeatsDeclared } from './components.js';
import { decide, known, missingFact } from './decide.js';
import type { EncryptionFacts, EncryptionRule, Fact, WriteKey } from './model.js';
import { atField, derivedRef } from './sources.js';
import { flagValues, lastFlag, type SnapshotView } from './view.js';

const FLAG = 'encryption-provider-config';

export function deriveEncryptionFacts(v: SnapshotView): EncryptionFacts {
  const file = providerConfigFile(v);
  const providers = providersFact(v, file);
  return { providerConfigFile: file, providers, secretsWriteKey: writeKey(v, file, providers) };
}

function providerConfigFile(v: SnapshotView): Fact<string | null> {
  const candidates = podCandidates<string | null>(v.apiservers, FLAG, (f) => {
    const val = lastFlag(f, FLAG);
    return val === undefined ? absent(null, 'no encryption at rest') : val;
  });
  const declared = v.cc ? flagValues(v.cc.apiServer.extraArgs, FLAG).at(-1) : undefined;
  if (v.cc && declared !== undefined)
    candidates.push({ value: declared, source: atField(v.cc.source, 'apiServer.extraArgs') });
  return decide({
    key: 'encryption.providerConfigFile',
    title: 'encryption provider config file (--encryption-provider-config)',
    candidates,
    reason: runningBeatsDeclared('kube-apiserver --encryption-provider-config'),
    missing: 'the kube-apiserver manifest(s) (--encryption-provider-config)',
  });
}

function rules(cfg: EncryptionConfig): EncryptionRule[] {
  return cfg.resources.map((r) => ({
    resources: r.resources,
    providers: r.providers.map((p) => {
      const out: EncryptionRule['providers'][number] = {
        type: p.type,
        keyNames: p.keyNames,
        keyFingerprints: p.keyFingerprints,
      };
      if (p.kms) out.kms = p.kms;
      return out;
    }),
  }));
}

function providersFact(v: SnapshotView, file: Fact<string | null>): Fact<EncryptionRule[] | null> {
  const key = 'encryption.providers';
  const title = 'encryption providers and key names';
  const cfg = v.snapshot.encryption;
  if (cfg) {
    const note =
      file.value === null
        ? 'the apiservers have no --encryption-provider-config: this configuration is not in use'
        : undefined;
    return known(key, title, rules(cfg), [cfg.source], note);
  }
  if (file.value === null) {
    return known(key, title, null, file.provenance, 'Secrets are stored in etcd unencrypted');
  }
  if (typeof file.value === 'string') {
    return missingFact(
      key,
      title,
      `encryption-config.yaml: a copy of ${file.value} from a control-plane host`,
    );
  }
  return missingFact(
    key,
    title,
    'the kube-apiserver manifest(s) and, if they name one, encryption-config.yaml',
  );
}

/** Does an EncryptionConfiguration resources entry cover core Secrets (as the apiserver matches them)? */
export function coversSecrets(resources: readonly string[]): boolean {
  return resources.some((r) => r === 'secrets' || r === '*.' || r === '*.*');
}

function writeKey(
  v: SnapshotView,
  file: Fact<string | null>,
  providers: Fact<EncryptionRule[] | null>,
): Fact<WriteKey | null> {
  const key = 'encryption.secretsWriteKey';
  const title = 'provider and key that encrypt new Secrets';
  if (file.value === null)
    return known(key, title, null, file.provenance, 'Secrets are written in plaintext');
  const list = providers.value;
  if (list === undefined) return missingFact(key, title, providers.missing ?? 'the encryption configuration');
  if (list === null) return known(key, title, null, providers.provenance);
  const rule = list.find((r) => coversSecrets(r.resources));
  const from = v.snapshot.encryption ? [v.snapshot.encryption.source] : providers.provenance;
  if (!rule) {
    return known(key, title, { provider: 'identity', keyName: null }, [
      derivedRef('no resources entry covers secrets: they are written in plaintext', from),
    ]);
  }
  const first = rule.providers[0];
  if (!first) return known(key, title, { provider: 'identity', keyName: null }, from);
  // The first provider of the first matching entry writes; identity writes plaintext.
  return known(
    key,
    title,
    { provider: first.type, keyName: first.type === 'identity' ? null : (first.keyNames[0] ?? null) },
    [derivedRef('first provider (and its first key) of the first resources entry covering secrets', from)],
  );
}
