/**
 * Encryption at rest (blockers.md "Encryption at rest"). Old and new apiservers share one etcd, so
 * they must write Secrets in a form the other can read. Stored values carry the prefix
 * `k8s:enc:<provider>:v1:<key name>:` and the apiserver picks the key by that name (talos.md §4.6):
 * ≤v1.13 Talos fixes the names (secretbox "key2", aescbc "key1") and covers only `secrets`;
 * v1.14 takes a KubeEtcdEncryptionConfig document verbatim, but its generated one is wrong.
 */
import { coversSecrets } from '../../facts/encryption.js';
import type { EncryptionRule, Fact } from '../../facts/model.js';
import type { Target } from '../../facts/target.js';
import { KIT } from '../../knowledge/kit-paths.js';
import { KIT_ENCRYPTION_KEY_LABEL } from '../../knowledge/kit-values.js';
import { TALOS_ENCRYPTION_KEY_NAMES } from '../../knowledge/talos.js';
import type { EncryptionConfig, SourceRef } from '../../snapshot/model.js';
import { type Evidence, evidenceFromSource, type Subject } from '../findings.js';
import type { KitCheck } from '../kit-checks.js';
import {
  HOW_TO_PROVIDE,
  notApplicable,
  type Rule,
  type RuleFinding,
  type RuleNotApplicable,
  type RuleSkip,
  skip,
} from '../rule.js';

const isV114 = (t: Target) => t.talos.configFormat === 'multidoc';
const SUBJECT: Subject = { kind: 'EncryptionConfiguration', name: 'kube-apiserver' };
/** The kit's rotation of the Secrets write key (steps 30, 31, 32 and their configurations). */
const ROTATION_SCRIPTS = [KIT.encryptionPhase1, KIT.encryptionPhase2, KIT.reencrypt];
const RENAME_ARTIFACTS = [...ROTATION_SCRIPTS, KIT.encryptionPhase1Config, KIT.encryptionPhase2Config];
/** What the kit's rotation does, in the words of the remediation (the generator's own constants). */
const KIT_ROTATION = `the kit's ${ROTATION_SCRIPTS.join(', ')} rotate the write key to ${KIT_ENCRYPTION_KEY_LABEL}`;
/** The kit resolves a write key Talos cannot use when it carries the whole rotation to that key. */
const ROTATION_KIT: KitCheck[] = [
  {
    kind: 'step',
    script: KIT.encryptionPhase1,
    mentions: [KIT_ENCRYPTION_KEY_LABEL, phaseConfig(KIT.encryptionPhase1Config)],
  },
  {
    kind: 'step',
    script: KIT.encryptionPhase2,
    mentions: [KIT_ENCRYPTION_KEY_LABEL, phaseConfig(KIT.encryptionPhase2Config)],
  },
  { kind: 'step', script: KIT.reencrypt, mentions: [] },
  { kind: 'file', file: KIT.encryptionPhase1Config, mentions: [] },
  { kind: 'file', file: KIT.encryptionPhase2Config, mentions: [] },
];

/** How a phase script names its configuration: relative to the kubeadm/ directory it runs from. */
function phaseConfig(path: string): string {
  return path.slice(path.indexOf('/') + 1);
}
const REWRITE = '`kubectl get secrets -A -o json | kubectl replace -f -`';

/** The configuration in use, or why the rule cannot or need not look at it. */
type Loaded =
  | { kind: 'config'; rules: EncryptionRule[]; cfg: EncryptionConfig | undefined; file: Fact<string | null> }
  | RuleSkip
  | RuleNotApplicable;

function loadConfig(ctx: Parameters<Rule['check']>[0]): Loaded {
  const file = ctx.facts.encryption.providerConfigFile;
  const providers = ctx.facts.encryption.providers;
  if (file.value === null)
    return notApplicable('the apiservers run without encryption at rest (see encryption.absent)');
  if (providers.value === null) return notApplicable('no encryption configuration in use');
  if (providers.value === undefined) {
    const named = typeof file.value === 'string' ? ` (the apiservers use ${file.value})` : '';
    return skip(['encryption'], `${HOW_TO_PROVIDE.encryption}${named}`);
  }
  return { kind: 'config', rules: providers.value, cfg: ctx.snapshot.encryption, file };
}

function isConfig(l: Loaded): l is Extract<Loaded, { kind: 'config' }> {
  return l.kind === 'config';
}

/** Evidence pointing into the EncryptionConfiguration file (line of the document; field path inside). */
function cfgEvidence(
  cfg: EncryptionConfig | undefined,
  providers: Fact<EncryptionRule[] | null>,
  field: string,
  obs: { observed?: string; expected?: string; note?: string },
): Evidence {
  const src: SourceRef | undefined = cfg?.source ?? providers.provenance[0];
  if (!src) return { kind: 'target', field, ...obs };
  if (src.kind === 'file')
    return {
      kind: 'file',
      path: src.path,
      ...(src.line !== undefined ? { line: src.line } : {}),
      field,
      ...obs,
    };
  return evidenceFromSource(src, { ...obs, note: [field, obs.note].filter(Boolean).join('; ') });
}

function flagEvidence(file: Fact<string | null>): Evidence[] {
  return file.provenance.map((p) => evidenceFromSource(p, { observed: file.value ?? '(not set)' }));
}

// ---------------------------------------------------------------------------------------------

export const absent: Rule = {
  id: 'encryption.absent',
  family: 'encryption',
  severity: 'blocker',
  title: 'kubeadm stores Secrets in plaintext; a generated Talos config would encrypt them',
  inputs: ['flags', 'target'],
  reads: [],
  description:
    'Without --encryption-provider-config the kubeadm apiservers cannot read Secrets a Talos apiserver writes with the secretbox key every generated Talos config carries; the v1.14 generated document even lacks `identity`, so Talos could not read the existing plaintext Secrets either.',
  docs: 'docs/rules.md#encryption.absent',
  check(ctx) {
    const file = ctx.facts.encryption.providerConfigFile;
    const write = ctx.facts.encryption.secretsWriteKey;
    if (file.value === undefined) return skip(['flags'], file.missing ?? HOW_TO_PROVIDE.flags);
    const plaintext = file.value === null || write.value?.provider === 'identity';
    if (!plaintext) return [];
    const v14 = isV114(ctx.target);
    const talosField = v14 ? 'KubeEtcdEncryptionConfig' : 'cluster.secretboxEncryptionSecret';
    const why =
      file.value === null
        ? 'kube-apiserver runs without --encryption-provider-config'
        : `${file.value} writes Secrets with identity (its first provider)`;
    const evidence: Evidence[] =
      file.value === null
        ? flagEvidence(file)
        : [
            ...flagEvidence(file),
            ...write.provenance.map((p) => evidenceFromSource(p, { observed: 'identity writes' })),
          ];
    evidence.push({
      kind: 'target',
      field: talosField,
      observed: v14 ? 'generated: secretbox "key2", no identity' : 'generated: a new random secretbox key',
      expected: 'absent',
    });
    return [
      {
        message: `${why}: Secrets are stored in plaintext. A Talos ${ctx.target.talosVersion} config as talosctl generates it carries ${v14 ? 'a KubeEtcdEncryptionConfig (secretbox "key2", no identity)' : 'a new secretbox key (cluster.secretboxEncryptionSecret)'}, so Talos apiservers would write Secrets the kubeadm apiservers cannot read${v14 ? ' and could not read the existing plaintext ones' : ''}.`,
        evidence,
        remediation: `Keep encryption off in the Talos config: ${v14 ? 'delete the `KubeEtcdEncryptionConfig` document' : 'remove `cluster.secretboxEncryptionSecret` (the template then falls back to identity)'}. ferry's ${KIT.secrets} carries no encryption secret for such a cluster; never mix in a bundle from \`talosctl gen secrets\`. Enable encryption after the migration, as its own step.`,
        subject: SUBJECT,
        field: 'provider',
        artifacts: [KIT.secrets],
      },
    ];
  },
};

export const keyName: Rule = {
  id: 'encryption.key-name',
  family: 'encryption',
  severity: 'blocker',
  title: 'Encryption key names differ from the ones Talos ≤v1.13 fixes',
  inputs: ['node', 'etcd', 'target'],
  reads: [],
  // The EncryptionConfiguration (a host file) decides; the rule says when it is missing. Sampling
  // etcd for stored prefixes would confirm read keys, but a snapshot does not carry stored values.
  requires: [],
  description:
    'Talos ≤v1.13 names its keys secretbox "key2" and aescbc "key1"; the apiserver selects the key by the name in each stored value, so a kubeadm key under another name is unusable for Talos ("no matching prefix found", "output array was not large enough").',
  docs: 'docs/rules.md#encryption.key-name',
  notApplicable: (t) =>
    isV114(t)
      ? 'Talos v1.14 takes the EncryptionConfiguration verbatim (KubeEtcdEncryptionConfig): key names are free (see encryption.v114-generated-doc)'
      : undefined,
  check(ctx) {
    const loaded = loadConfig(ctx);
    if (!isConfig(loaded)) return loaded;
    const ruleIndex = loaded.rules.findIndex((r) => coversSecrets(r.resources));
    const rule = loaded.rules[ruleIndex];
    if (!rule) return []; // Secrets are not encrypted at all: encryption.absent's case
    const providers = ctx.facts.encryption.providers;
    const out: RuleFinding[] = [];
    rule.providers.forEach((p, j) => {
      if (p.type !== 'secretbox' && p.type !== 'aescbc') return; // other providers: encryption.provider-unsupported
      const talosName = TALOS_ENCRYPTION_KEY_NAMES[p.type];
      // Only the first key of each provider: further keys are provider-unsupported's (one key per provider).
      const name = p.keyNames[0];
      if (name === undefined || name === talosName) return;
      const writes = j === 0;
      const field = `resources[${ruleIndex}].providers[${j}].${p.type}.keys[0].name`;
      out.push({
        severity: writes ? 'blocker' : 'risk',
        message: writes
          ? `Secrets are written with ${p.type} key "${name}"; Talos ${ctx.target.talosVersion} names its ${p.type} key "${talosName}" and the apiserver picks keys by that name, so Talos apiservers cannot read a single Secret the kubeadm apiservers write (and bootstrap tokens stop authenticating: nodes never register).`
          : `${p.type} key "${name}" is still a read key; Talos ${ctx.target.talosVersion} knows only "${talosName}" for ${p.type}, so Secrets still stored under "${name}" are unreadable on Talos apiservers.`,
        evidence: [
          cfgEvidence(loaded.cfg, providers, field, {
            observed: name,
            expected: talosName,
            note: writes ? 'the write key' : 'a read key',
          }),
          ...(writes ? flagEvidence(loaded.file) : []),
        ],
        remediation: writes
          ? `Rotate the kubeadm side's write key to a key Talos names, in two phases — add it as a read key on every apiserver, then make it the write key, then rewrite all Secrets (${REWRITE}) — and bundle that key (${KIT_ROTATION} in these phases; then take a fresh snapshot and run ferry generate again with the rotated file). Or target Talos v1.14 and copy the configuration verbatim into KubeEtcdEncryptionConfig.`
          : `Rewrite all Secrets with the write key (${REWRITE}) and drop "${name}" from the configuration; confirm none remain under it (etcdctl get /registry/secrets --prefix, count values starting k8s:enc:${p.type}:v1:${name}:).`,
        subject: SUBJECT,
        field,
        artifacts: writes ? RENAME_ARTIFACTS : [],
        // A read key under another name is the operator's to rewrite and drop, not the kit's.
        ...(writes ? { kitChecks: ROTATION_KIT } : {}),
      });
    });
    return out;
  },
};

export const providerUnsupported: Rule = {
  id: 'encryption.provider-unsupported',
  family: 'encryption',
  severity: 'blocker',
  title: 'Encryption configuration has a shape Talos ≤v1.13 cannot express',
  inputs: ['node'],
  reads: [],
  requires: [],
  description:
    'The ≤v1.13 Talos template covers only `secrets`, with at most one secretbox and one aescbc key plus identity: kms, aesgcm, several keys per provider or other encrypted resources cannot be carried.',
  docs: 'docs/rules.md#encryption.provider-unsupported',
  notApplicable: (t) =>
    isV114(t)
      ? 'Talos v1.14 takes any EncryptionConfiguration verbatim (KubeEtcdEncryptionConfig)'
      : undefined,
  check(ctx) {
    const loaded = loadConfig(ctx);
    if (!isConfig(loaded)) return loaded;
    const providers = ctx.facts.encryption.providers;
    const out: RuleFinding[] = [];
    const names = TALOS_ENCRYPTION_KEY_NAMES;
    const fix = `Target Talos v1.14 and copy the configuration verbatim into KubeEtcdEncryptionConfig, or first move the kubeadm side to one secretbox ("${names.secretbox}") or aescbc ("${names.aescbc}") key for secrets only (rewrite all Secrets after each change: ${REWRITE}).`;
    const secretsIndex = loaded.rules.findIndex((r) => coversSecrets(r.resources));
    loaded.rules.forEach((r, i) => {
      const encrypting = r.providers.filter((p) => p.type !== 'identity');
      const others = r.resources.filter((x) => x !== 'secrets');
      if (encrypting.length > 0 && others.length > 0) {
        const field = `resources[${i}].resources`;
        out.push({
          message: `The configuration encrypts ${others.join(', ')} (not only secrets) with ${encrypting.map((p) => p.type).join(', ')}; Talos ${ctx.target.talosVersion} encrypts only secrets, so Talos apiservers cannot read these resources from etcd.`,
          evidence: [
            cfgEvidence(loaded.cfg, providers, field, {
              observed: r.resources.join(', '),
              expected: 'secrets',
            }),
          ],
          remediation: fix,
          subject: SUBJECT,
          field,
          artifacts: [],
        });
      }
      r.providers.forEach((p, j) => {
        if (p.type === 'identity') return;
        const at = `resources[${i}].providers[${j}].${p.type}`;
        if (p.type === 'kms' || p.type === 'aesgcm') {
          // The kit rotates a Secrets write key Talos cannot carry; a read provider stays the operator's.
          const writes = i === secretsIndex && j === 0;
          out.push({
            message: `Provider ${p.type}${p.kms?.name ? ` "${p.kms.name}"` : ''} for ${r.resources.join(', ')}: Talos ${ctx.target.talosVersion} supports only secretbox and aescbc.`,
            evidence: [
              cfgEvidence(loaded.cfg, providers, at, { observed: p.type, expected: 'secretbox or aescbc' }),
            ],
            remediation: writes
              ? `${fix} For the Secrets write key: ${KIT_ROTATION}; remove ${p.type} from the configuration once every Secret is rewritten.`
              : fix,
            subject: SUBJECT,
            field: at,
            artifacts: writes ? RENAME_ARTIFACTS : [],
          });
        } else if (p.keyNames.length > 1) {
          out.push({
            message: `${p.type} holds ${p.keyNames.length} keys (${p.keyNames.join(', ')}), a rotation in progress; Talos ${ctx.target.talosVersion} carries one ${p.type} key, so Secrets under the others are unreadable on Talos apiservers.`,
            evidence: [
              cfgEvidence(loaded.cfg, providers, `${at}.keys`, {
                observed: p.keyNames.join(', '),
                expected: 'one key',
              }),
            ],
            remediation: `Finish the rotation: rewrite all Secrets with the write key (${REWRITE}) and remove the other keys; or ${fix.charAt(0).toLowerCase()}${fix.slice(1)}`,
            subject: SUBJECT,
            field: `${at}.keys`,
            artifacts: [],
          });
        }
      });
    });
    return out;
  },
};

export const v114GeneratedDoc: Rule = {
  id: 'encryption.v114-generated-doc',
  family: 'encryption',
  severity: 'risk',
  title: "Talos v1.14's generated KubeEtcdEncryptionConfig does not match the cluster",
  inputs: ['target'],
  reads: [],
  requires: [],
  description:
    'The KubeEtcdEncryptionConfig that Talos v1.14 generates has only secretbox "key2" and no identity, and it emits an AES-CBC secret as secretbox "key1" (siderolabs/talos#13885): it must be written from the live configuration instead.',
  docs: 'docs/rules.md#encryption.v114-generated-doc',
  notApplicable: (t) =>
    isV114(t) ? undefined : 'only Talos v1.14 generates a KubeEtcdEncryptionConfig document',
  check(ctx) {
    const loaded = loadConfig(ctx);
    if (!isConfig(loaded)) return loaded;
    const write = ctx.facts.encryption.secretsWriteKey.value;
    if (!write || write.provider === 'identity') return []; // plaintext: encryption.absent says what to do
    const providers = ctx.facts.encryption.providers;
    const shape = loaded.rules
      .map(
        (r) =>
          `${r.resources.join(',')}: ${r.providers.map((p) => (p.keyNames.length ? `${p.type}(${p.keyNames.join(',')})` : p.type)).join(' > ')}`,
      )
      .join('; ');
    return [
      {
        message: `The cluster writes Secrets with ${write.provider} "${write.keyName ?? ''}" (${shape}). The document Talos ${ctx.target.talosVersion} generates would use secretbox "key2" without identity${write.provider === 'aescbc' ? ', and would turn an AES-CBC key into secretbox "key1"' : ''}: Talos apiservers could not read the existing Secrets.`,
        evidence: [
          cfgEvidence(loaded.cfg, providers, 'resources', { observed: shape }),
          {
            kind: 'target',
            field: 'KubeEtcdEncryptionConfig',
            observed: 'generated: secretbox "key2", no identity',
            expected: 'the live configuration, verbatim',
          },
        ],
        remediation:
          'Write the KubeEtcdEncryptionConfig document explicitly from the live EncryptionConfiguration (same providers, key names and secrets, identity kept where the cluster has it); never keep the generated one.',
        subject: SUBJECT,
        field: 'KubeEtcdEncryptionConfig',
        artifacts: [],
      },
    ];
  },
};

export const ENCRYPTION_RULES: Rule[] = [absent, keyName, providerUnsupported, v114GeneratedDoc];
