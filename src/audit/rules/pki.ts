/**
 * PKI (blockers.md "PKI"). Talos keeps kubeadm's CAs and service-account key and re-issues every
 * leaf from them, so the four imported files must exist, parse, be plain keys of a supported type,
 * pair with their certificates and be self-signed roots. Talos itself checks none of this beyond
 * parsing (talos.md §1 `utils.go:31-40`): ferry must, before anything is generated.
 *
 * Subjects are PKI-relative paths ("PkiFile ca.key"), never the directory the copy sits in, so a
 * fingerprint does not change when the snapshot is moved.
 */
import type { ComponentInstance, Fact } from '../../facts/model.js';
import { atField } from '../../facts/sources.js';
import type { Target } from '../../facts/target.js';
import type {
  CertificateInfo,
  Flag,
  PkiInventory,
  PkiProblem,
  PrivateKeyInfo,
  ServedCertificate,
  Snapshot,
} from '../../snapshot/model.js';
import { type Evidence, evidenceFromSource, type Subject } from '../findings.js';
import { HOW_TO_PROVIDE, type Rule, type RuleFinding, skip } from '../rule.js';

const DAY_MS = 86_400_000;
/**
 * How long ferry assumes a migration takes and the margin on top, for "expires during the
 * migration" (blockers.md pki.ca-invalid, pki.leaf-expiry). There is no target field for it yet.
 */
export const MIGRATION_WINDOW_DAYS = 30;
export const EXPIRY_MARGIN_DAYS = 30;
const HORIZON_DAYS = MIGRATION_WINDOW_DAYS + EXPIRY_MARGIN_DAYS;

/** What `talosctl gen secrets --from-kubernetes-pki` reads, in its order (talos.md §2). */
export interface ImportedCa {
  role: string;
  crt: string;
  key: string;
  /** Secrets bundle field the pair becomes. */
  bundleField: string;
}

export const IMPORTED_CAS: readonly ImportedCa[] = [
  { role: 'Kubernetes CA', crt: 'ca.crt', key: 'ca.key', bundleField: 'certs.k8s' },
  { role: 'etcd CA', crt: 'etcd/ca.crt', key: 'etcd/ca.key', bundleField: 'certs.etcd' },
  {
    role: 'front-proxy CA',
    crt: 'front-proxy-ca.crt',
    key: 'front-proxy-ca.key',
    bundleField: 'certs.k8saggregator',
  },
];
export const SA_KEY = 'sa.key';
export const SA_PUB = 'sa.pub';
/** Every private key Talos imports. */
const IMPORTED_KEYS: readonly { key: string; role: string; bundleField: string }[] = [
  ...IMPORTED_CAS.map((c) => ({ key: c.key, role: `${c.role} key`, bundleField: c.bundleField })),
  { key: SA_KEY, role: 'service-account signing key', bundleField: 'certs.k8sserviceaccount.key' },
];

const SUPPORTED_KEY_PEM =
  'RSA PRIVATE KEY, EC PRIVATE KEY, ED25519 PRIVATE KEY or PKCS#8 PRIVATE KEY, unencrypted';

// ---------------------------------------------------------------------------------------------
// Inventory lookups (all linear in the inventory, which holds a few dozen entries)

export function pkiPath(inv: PkiInventory, rel: string): string {
  return `${inv.root.replace(/\/+$/, '')}/${rel}`;
}

export function firstCert(inv: PkiInventory, rel: string): CertificateInfo | undefined {
  return inv.certificates.find((c) => c.path === rel && c.index === 0);
}

function certsAt(inv: PkiInventory, rel: string): CertificateInfo[] {
  return inv.certificates.filter((c) => c.path === rel);
}

function keyAt(inv: PkiInventory, rel: string): PrivateKeyInfo | undefined {
  return inv.keys.find((k) => k.path === rel);
}

function problemsAt(inv: PkiInventory, rel: string, kinds: PkiProblem['problem'][]): PkiProblem[] {
  return inv.problems.filter((p) => p.path === rel && kinds.includes(p.problem));
}

export function pkiSubject(rel: string): Subject {
  return { kind: 'PkiFile', name: rel };
}

export function fileEvidence(
  inv: PkiInventory,
  rel: string,
  field: string | undefined,
  obs: { observed?: string; expected?: string; note?: string } = {},
): Evidence {
  return { kind: 'file', path: pkiPath(inv, rel), ...(field !== undefined ? { field } : {}), ...obs };
}

function short(hash: string | undefined): string {
  return hash ? `sha256:${hash.slice(0, 16)}…` : '(unknown)';
}

function day(iso: string): string {
  return iso.slice(0, 10);
}

/** The moment the snapshot was taken: rules are pure, so "now" is the snapshot's time. */
export function snapshotTime(s: Snapshot): number {
  const t = Date.parse(s.manifest.createdAt);
  return Number.isNaN(t) ? Date.now() : t;
}

function inventoryOrSkip(s: Snapshot): PkiInventory | ReturnType<typeof skip> {
  return s.pki ?? skip(['pki'], HOW_TO_PROVIDE.pki);
}

function isSkip(x: unknown): x is ReturnType<typeof skip> {
  return typeof x === 'object' && x !== null && (x as { kind?: string }).kind === 'skipped';
}

// ---------------------------------------------------------------------------------------------
// pki.*-missing

const COPY_HINT =
  'copy the whole /etc/kubernetes/pki of a control-plane node (keys are root-only: use sudo, keep them 0600)';

/** One finding per required file that is absent or does not parse. Encrypted keys are pki.key-type-unsupported's. */
function missingFiles(
  inv: PkiInventory,
  files: { rel: string; kind: 'certificate' | 'key' }[],
  why: string,
  remediation: string,
): RuleFinding[] {
  const out: RuleFinding[] = [];
  for (const { rel, kind } of files) {
    const present = kind === 'certificate' ? firstCert(inv, rel) : keyAt(inv, rel);
    if (present) continue;
    const problems = problemsAt(inv, rel, ['not-pem', 'unparseable', 'unreadable', 'not-a-file']);
    const observed = problems.length
      ? `present but unusable: ${problems.map((p) => p.message).join('; ')}`
      : 'absent from the PKI copy';
    out.push({
      message: `${rel} is ${problems.length ? `not a usable PEM ${kind}` : 'missing'}: ${why}`,
      evidence: [fileEvidence(inv, rel, undefined, { observed, expected: `a PEM ${kind}` })],
      remediation,
      subject: pkiSubject(rel),
      field: kind,
      artifacts: [],
    });
  }
  return out;
}

function caMissingRule(
  id: string,
  ca: ImportedCa,
  title: string,
  description: string,
  why: string,
  remediation: string,
): Rule {
  return {
    id,
    family: 'pki',
    severity: 'blocker',
    title,
    inputs: id === 'pki.etcd-ca-missing' ? ['pki', 'kubeadm'] : ['pki'],
    reads: [],
    // kubeadm only adds context (external etcd); the files decide.
    requires: ['pki'],
    description,
    docs: `docs/rules.md#${id}`,
    check(ctx) {
      const inv = inventoryOrSkip(ctx.snapshot);
      if (isSkip(inv)) return inv;
      const files: { rel: string; kind: 'certificate' | 'key' }[] = [
        { rel: ca.crt, kind: 'certificate' },
        { rel: ca.key, kind: 'key' },
      ];
      const external =
        id === 'pki.etcd-ca-missing' ? ctx.snapshot.kubeadm.clusterConfiguration?.etcd.external : undefined;
      const findings = missingFiles(inv, files, why, remediation);
      if (external && findings.length > 0) {
        const cc = ctx.snapshot.kubeadm.clusterConfiguration!;
        for (const f of findings) {
          f.message += ` kubeadm runs external etcd (${external.endpoints.join(', ') || 'endpoints not listed'}): its CA lives with that etcd, not in /etc/kubernetes/pki, and Talos cannot join an etcd whose CA key it does not hold.`;
          f.evidence.push(
            evidenceFromSource(atField(cc.source, 'etcd.external'), {
              observed: external.caFile ? `caFile ${external.caFile}` : 'external etcd, no caFile',
            }),
          );
        }
      }
      return findings;
    },
  };
}

export const caKeyMissing = caMissingRule(
  'pki.ca-key-missing',
  IMPORTED_CAS[0]!,
  'Kubernetes CA certificate or key missing',
  'Talos re-issues every Kubernetes leaf from ca.crt/ca.key; without the key (kubeadm external-CA mode) the PKI cannot be imported at all.',
  'Talos re-issues every apiserver, kubelet and controller certificate from the cluster CA, and the import stops at the first missing file (ENOENT).',
  `Provide ca.crt and ca.key: ${COPY_HINT}. In kubeadm external-CA mode (no ca.key on any node) the key held outside the cluster must be supplied; there is no migration without it.`,
);

export const etcdCaMissing = caMissingRule(
  'pki.etcd-ca-missing',
  IMPORTED_CAS[1]!,
  'etcd CA certificate or key missing',
  'Talos etcd members get their peer and server certificates from etcd/ca.{crt,key}; without them they cannot peer with the kubeadm members.',
  'Talos issues its etcd peer/server certificates from the etcd CA; without it a Talos member cannot peer with the kubeadm members.',
  `Provide etcd/ca.crt and etcd/ca.key: ${COPY_HINT}. With external etcd, copy them from the etcd hosts' PKI.`,
);

export const frontProxyCaMissing = caMissingRule(
  'pki.front-proxy-ca-missing',
  IMPORTED_CAS[2]!,
  'front-proxy CA certificate or key missing',
  'Talos issues the aggregation-layer client certificate from front-proxy-ca.{crt,key}; the import stops when they are missing.',
  'Talos issues the aggregation-layer (front-proxy) client certificate from this CA; extension apiservers trust only it.',
  `Provide front-proxy-ca.crt and front-proxy-ca.key: ${COPY_HINT}.`,
);

export const saKeyMissing: Rule = {
  id: 'pki.sa-key-missing',
  family: 'pki',
  severity: 'blocker',
  title: 'Service-account signing key missing',
  inputs: ['pki'],
  reads: [],
  description:
    'Talos apiservers sign and verify service-account tokens with sa.key; a different key makes every token from one side invalid on the other.',
  docs: 'docs/rules.md#pki.sa-key-missing',
  check(ctx) {
    const inv = inventoryOrSkip(ctx.snapshot);
    if (isSkip(inv)) return inv;
    return missingFiles(
      inv,
      [{ rel: SA_KEY, kind: 'key' }],
      'Talos apiservers would sign service-account tokens with a new key that kubeadm apiservers reject (and vice versa): every pod token stops verifying somewhere.',
      `Provide sa.key: ${COPY_HINT}.`,
    );
  },
};

// ---------------------------------------------------------------------------------------------
// pki.key-type-unsupported

export const keyTypeUnsupported: Rule = {
  id: 'pki.key-type-unsupported',
  family: 'pki',
  severity: 'blocker',
  title: 'Imported key is encrypted or of an unsupported type',
  inputs: ['pki'],
  reads: [],
  description: `Talos reads the CA and service-account keys only as ${SUPPORTED_KEY_PEM}; anything else fails with "unsupported key type".`,
  docs: 'docs/rules.md#pki.key-type-unsupported',
  check(ctx) {
    const inv = inventoryOrSkip(ctx.snapshot);
    if (isSkip(inv)) return inv;
    const out: RuleFinding[] = [];
    for (const { key, role, bundleField } of IMPORTED_KEYS) {
      const k = keyAt(inv, key);
      if (!k) continue; // absent or unparseable: the *-missing rules report it
      let observed: string | undefined;
      if (k.encrypted)
        observed = 'encrypted with a passphrase (ENCRYPTED PRIVATE KEY or Proc-Type: 4,ENCRYPTED)';
      else if (k.algorithm === 'unknown') observed = 'a key type other than RSA, ECDSA or Ed25519';
      if (!observed) continue;
      out.push({
        message: `${key} (the ${role}, bundle ${bundleField}) is ${observed}: Talos fails with "unsupported key type" and ferry cannot build the secrets bundle.`,
        evidence: [fileEvidence(inv, key, 'PEM type', { observed, expected: SUPPORTED_KEY_PEM })],
        remediation: k.encrypted
          ? `Decrypt the key into PKCS#8 on the control plane (\`openssl pkey -in ${key} -out ${key}.plain\`, enter the passphrase, keep the file 0600) and give ferry the decrypted copy.`
          : `Talos supports RSA, ECDSA and Ed25519 keys only; the ${role} must be replaced by a CA rotation before the migration (out of ferry's scope).`,
        subject: pkiSubject(key),
        field: 'key-type',
        artifacts: [],
      });
    }
    return out;
  },
};

// ---------------------------------------------------------------------------------------------
// pki.cert-key-mismatch

export const certKeyMismatch: Rule = {
  id: 'pki.cert-key-mismatch',
  family: 'pki',
  severity: 'blocker',
  title: 'CA certificate and key (or sa.pub and sa.key) do not pair',
  inputs: ['pki'],
  reads: [],
  description:
    'Talos only parses the imported files and never checks that a key belongs to its certificate: a mismatched pair is accepted and every leaf Talos issues is unverifiable.',
  docs: 'docs/rules.md#pki.cert-key-mismatch',
  check(ctx) {
    const inv = inventoryOrSkip(ctx.snapshot);
    if (isSkip(inv)) return inv;
    const out: RuleFinding[] = [];
    for (const ca of IMPORTED_CAS) {
      const cert = firstCert(inv, ca.crt);
      const key = keyAt(inv, ca.key);
      if (!cert || !key?.publicKeySha256 || key.publicKeySha256 === cert.publicKeySha256) continue;
      out.push({
        message: `${ca.key} is not the key of ${ca.crt} (${cert.subject}; Talos takes the first certificate of the file): every certificate Talos issues with it would fail verification against the ${ca.role}.`,
        evidence: [
          fileEvidence(inv, ca.crt, 'subjectPublicKeyInfo', { observed: short(cert.publicKeySha256) }),
          fileEvidence(inv, ca.key, 'public key', {
            observed: short(key.publicKeySha256),
            expected: short(cert.publicKeySha256),
            note: key.matchesCertificate
              ? `the key belongs to ${key.matchesCertificate}`
              : 'no certificate in the copy matches this key',
          }),
        ],
        remediation: `Copy ${ca.crt} and ${ca.key} together from the same control-plane node (the pair the cluster runs with: \`openssl x509 -noout -pubkey -in ${ca.crt}\` must equal \`openssl pkey -pubout -in ${ca.key}\`); never build a bundle from a mismatched pair.`,
        subject: pkiSubject(ca.key),
        field: 'public key',
        artifacts: [],
      });
    }
    const sa = keyAt(inv, SA_KEY);
    const pubs = inv.publicKeys.filter((p) => p.path === SA_PUB);
    if (
      sa?.publicKeySha256 &&
      pubs.length > 0 &&
      !pubs.some((p) => p.publicKeySha256 === sa.publicKeySha256)
    ) {
      out.push({
        message: `${SA_PUB} does not hold the public half of ${SA_KEY}: kubeadm apiservers verify tokens with sa.pub while Talos derives its verification key from sa.key, so tokens signed by one side fail on the other.`,
        evidence: [
          fileEvidence(inv, SA_PUB, 'public key', {
            observed: pubs.map((p) => short(p.publicKeySha256)).join(', '),
          }),
          fileEvidence(inv, SA_KEY, 'public key', { observed: short(sa.publicKeySha256) }),
        ],
        remediation:
          'Copy sa.key and sa.pub together from the same control-plane node; check with `openssl pkey -pubout -in sa.key | diff - sa.pub`.',
        subject: pkiSubject(SA_KEY),
        field: 'public key',
        artifacts: [],
      });
    }
    return out;
  },
};

// ---------------------------------------------------------------------------------------------
// pki.ca-invalid

export const caInvalid: Rule = {
  id: 'pki.ca-invalid',
  family: 'pki',
  severity: 'blocker',
  title: 'CA certificate expired, not yet valid, not a CA, or expiring during the migration',
  inputs: ['pki'],
  reads: [],
  description:
    'Talos does not check expiry or the CA flag of the imported CAs. An expired CA or a certificate without CA:TRUE/keyCertSign breaks every leaf; one that expires during the migration needs a CA rotation first.',
  docs: 'docs/rules.md#pki.ca-invalid',
  check(ctx) {
    const inv = inventoryOrSkip(ctx.snapshot);
    if (isSkip(inv)) return inv;
    const now = snapshotTime(ctx.snapshot);
    const horizon = now + HORIZON_DAYS * DAY_MS;
    const out: RuleFinding[] = [];
    for (const ca of IMPORTED_CAS) {
      const c = firstCert(inv, ca.crt);
      if (!c) continue;
      const blockers: Evidence[] = [];
      const risks: Evidence[] = [];
      const notAfter = Date.parse(c.notAfter);
      if (!c.isCA)
        blockers.push(
          fileEvidence(inv, ca.crt, 'basicConstraints', {
            observed: 'CA:FALSE or absent',
            expected: 'CA:TRUE',
          }),
        );
      // An absent keyUsage extension permits every usage; a present one must include keyCertSign.
      if (c.keyUsages.length > 0 && !c.keyUsages.includes('keyCertSign'))
        blockers.push(
          fileEvidence(inv, ca.crt, 'keyUsage', {
            observed: c.keyUsages.join(', '),
            expected: 'includes keyCertSign',
          }),
        );
      if (notAfter <= now)
        blockers.push(
          fileEvidence(inv, ca.crt, 'notAfter', {
            observed: c.notAfter,
            note: `expired before the snapshot (${day(ctx.snapshot.manifest.createdAt)})`,
          }),
        );
      else if (notAfter <= horizon)
        risks.push(
          fileEvidence(inv, ca.crt, 'notAfter', {
            observed: c.notAfter,
            note: `expires within ${MIGRATION_WINDOW_DAYS} days of migration + ${EXPIRY_MARGIN_DAYS} days margin after the snapshot`,
          }),
        );
      if (Date.parse(c.notBefore) > now)
        blockers.push(
          fileEvidence(inv, ca.crt, 'notBefore', {
            observed: c.notBefore,
            note: 'not yet valid at snapshot time',
          }),
        );
      if (blockers.length === 0 && risks.length === 0) continue;
      const what = [...blockers, ...risks]
        .map((e) => ('field' in e ? `${e.field} ${e.observed ?? ''}`.trim() : ''))
        .join('; ');
      out.push({
        severity: blockers.length > 0 ? 'blocker' : 'risk',
        message: `${ca.crt} (${ca.role}, ${c.subject}, valid ${day(c.notBefore)} – ${day(c.notAfter)}) ${blockers.length > 0 ? 'cannot sign' : 'expires during the migration'}: ${what}.`,
        evidence: [...blockers, ...risks],
        remediation:
          "Rotate the CA before the migration (kubeadm manual CA rotation; out of ferry's scope), then copy the PKI again and re-audit. Talos would import the CA as it is and issue unusable certificates from it.",
        subject: pkiSubject(ca.crt),
        field: 'validity',
        artifacts: [],
      });
    }
    return out;
  },
};

// ---------------------------------------------------------------------------------------------
// pki.intermediate-ca

/** KCM flags that pick the signing CA or the root CA pods trust (kubeadm: both <certDir>/ca.crt). */
function isSigningFlag(name: string): boolean {
  return name === 'root-ca-file' || (name.startsWith('cluster-signing-') && name.endsWith('-file'));
}

export const intermediateCa: Rule = {
  id: 'pki.intermediate-ca',
  family: 'pki',
  severity: 'blocker',
  title: 'Intermediate CA instead of a self-signed root',
  inputs: ['pki', 'flags'],
  reads: [],
  // Flags only add evidence (KCM signing files); the certificates decide.
  requires: ['pki'],
  description:
    'Talos uses one self-signed root per role as signer and as --root-ca-file (not overridable); PKIs with intermediate CAs cannot be imported.',
  docs: 'docs/rules.md#pki.intermediate-ca',
  check(ctx) {
    const inv = inventoryOrSkip(ctx.snapshot);
    if (isSkip(inv)) return inv;
    const out: RuleFinding[] = [];
    for (const ca of IMPORTED_CAS) {
      const c = firstCert(inv, ca.crt);
      if (!c || c.selfSigned) continue;
      const evidence: Evidence[] = [
        fileEvidence(inv, ca.crt, 'issuer', { observed: c.issuer, expected: c.subject }),
      ];
      if (c.authorityKeyId && c.subjectKeyId && c.authorityKeyId !== c.subjectKeyId)
        evidence.push(
          fileEvidence(inv, ca.crt, 'authorityKeyIdentifier', {
            observed: c.authorityKeyId,
            expected: c.subjectKeyId,
          }),
        );
      if (c.chain.issuerPath && c.chain.issuerPath !== c.path)
        evidence.push(
          fileEvidence(inv, c.chain.issuerPath, 'subject', {
            note: `issuer of ${ca.crt}${c.chain.verified ? ' (signature verified)' : ''}`,
          }),
        );
      out.push({
        message: `${ca.crt} (${ca.role}, ${c.subject}) is not a self-signed root: it is issued by ${c.issuer}. Talos uses the imported certificate as signer and as the only trusted root.`,
        evidence,
        remediation:
          'No automatic fix: an intermediate-CA PKI is unsupported by Talos (docs "Limitations on custom PKI"; siderolabs/talos#5894). Re-PKI the cluster onto a self-signed root first.',
        subject: pkiSubject(ca.crt),
        field: 'issuer',
        artifacts: [],
      });
    }
    out.push(
      ...signingFlagFindings(ctx.facts.controllerManager.extraFlags, ctx.facts.controllerManager.instances),
    );
    return out;
  },
};

function signingFlagFindings(extra: Fact<Flag[]>, instances: Fact<ComponentInstance[]>): RuleFinding[] {
  const out: RuleFinding[] = [];
  const seen = new Set<string>();
  for (const f of extra.value ?? []) {
    if (!isSigningFlag(f.name) || seen.has(f.name)) continue;
    seen.add(f.name);
    const evidence: Evidence[] = (instances.value ?? [])
      .filter((i) => i.flags.some((x) => x.name === f.name))
      .map((i) => ({
        kind: 'flag',
        component: 'kube-controller-manager',
        ...(i.node ? { node: i.node } : {}),
        flag: f.name,
        from: i.source,
        observed: i.flags
          .filter((x) => x.name === f.name)
          .map((x) => x.value)
          .join(', '),
        expected: "kubeadm's <certificatesDir>/ca.crt (or ca.key)",
      }));
    if (evidence.length === 0)
      evidence.push(
        ...extra.provenance.map((p) => evidenceFromSource(p, { observed: `--${f.name}=${f.value}` })),
      );
    out.push({
      message: `kube-controller-manager --${f.name}=${f.value} is not kubeadm's cluster CA: the cluster signs or trusts with a different CA than ca.crt, and Talos always uses the single imported CA for both (not overridable).`,
      evidence,
      remediation:
        'No automatic fix: Talos sets --cluster-signing-cert-file and --root-ca-file to the imported CA and denies overriding them. Move the cluster onto one self-signed root CA first.',
      subject: { kind: 'Component', name: 'kube-controller-manager' },
      field: `--${f.name}`,
      artifacts: [],
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// pki.ca-bundle-multiple

function acceptedCasHint(ca: ImportedCa, target: Target): string {
  const v14 = target.talos.configFormat === 'multidoc';
  switch (ca.crt) {
    case 'ca.crt':
      return v14 ? '`KubeAPIServerCAConfig.acceptedCAs`' : '`cluster.acceptedCAs`';
    case 'front-proxy-ca.crt':
      return v14 ? '`KubeAggregatorCAConfig.acceptedCAs`' : 'nothing in ≤v1.13 (finish the rotation)';
    default:
      return 'nothing (Talos etcd trusts one CA: finish the rotation)';
  }
}

export const caBundleMultiple: Rule = {
  id: 'pki.ca-bundle-multiple',
  family: 'pki',
  severity: 'risk',
  title: 'CA file holds several certificates',
  inputs: ['pki'],
  reads: [],
  description:
    'Talos imports only the first PEM block of a CA file: other CAs the cluster trusts (a rotation in progress, concatenated trust) are dropped.',
  docs: 'docs/rules.md#pki.ca-bundle-multiple',
  check(ctx) {
    const inv = inventoryOrSkip(ctx.snapshot);
    if (isSkip(inv)) return inv;
    const out: RuleFinding[] = [];
    for (const ca of IMPORTED_CAS) {
      const certs = certsAt(inv, ca.crt);
      if (certs.length < 2) continue;
      const dropped = certs.filter((c) => c.index > 0);
      out.push({
        message: `${ca.crt} holds ${certs.length} certificates; Talos imports only the first (${certs[0]?.subject ?? '?'}) and drops ${dropped.map((c) => c.subject).join(', ')}: clients and certificates that chain to a dropped CA fail on Talos nodes.`,
        evidence: certs.map((c) =>
          fileEvidence(inv, ca.crt, `certificate[${c.index}]`, {
            observed: `${c.subject}, expires ${day(c.notAfter)}`,
            note: c.index === 0 ? 'imported by Talos' : 'dropped by Talos',
          }),
        ),
        remediation: `Finish the CA rotation so the file holds one CA, or list the other CAs as accepted CAs on Talos: ${acceptedCasHint(ca, ctx.target)}.`,
        subject: pkiSubject(ca.crt),
        field: 'certificates',
        artifacts: [],
      });
    }
    return out;
  },
};

// ---------------------------------------------------------------------------------------------
// pki.sa-extra-verify-keys

export const saExtraVerifyKeys: Rule = {
  id: 'pki.sa-extra-verify-keys',
  family: 'pki',
  severity: 'risk',
  title: 'Service-account tokens are verified with more than one key',
  inputs: ['flags', 'pki'],
  reads: [],
  // Either input shows extra keys; the rule says itself when it has neither.
  requires: [],
  description:
    'Talos derives a single verification key from sa.key; tokens signed by older keys the kubeadm apiservers still accept are rejected by Talos apiservers (≤v1.13).',
  docs: 'docs/rules.md#pki.sa-extra-verify-keys',
  check(ctx) {
    const files = ctx.facts.apiserver.serviceAccountKeyFiles;
    const inv = ctx.snapshot.pki;
    if (files.value === undefined && !inv)
      return skip(['flags', 'pki'], `${HOW_TO_PROVIDE.flags}; or ${HOW_TO_PROVIDE.pki}`);
    const v14 = ctx.target.talos.configFormat === 'multidoc';
    const remediation = v14
      ? 'Carry the extra public keys into `KubeServiceAccountConfig.accepted.publicKeys` (Talos v1.14) so tokens signed by older keys keep verifying; drop them once no such token is in use.'
      : 'Talos ≤v1.13 accepts only the key derived from sa.key: wait until tokens signed by the older keys have expired (or recreate the pods that hold them) before the first Talos control plane serves, or target Talos v1.14 (`KubeServiceAccountConfig.accepted.publicKeys`).';
    const out: RuleFinding[] = [];
    const distinct = [...new Set(files.value ?? [])];
    if (distinct.length > 1) {
      out.push({
        message: `kube-apiserver verifies service-account tokens with ${distinct.length} key files (${distinct.join(', ')}); Talos apiservers accept only sa.key's public key, so tokens signed by the other keys get 401 there.`,
        evidence: files.provenance.map((p) =>
          evidenceFromSource(p, { observed: distinct.join(', '), expected: 'one key (sa.pub)' }),
        ),
        remediation,
        subject: { kind: 'Component', name: 'kube-apiserver' },
        field: '--service-account-key-file',
        artifacts: [],
      });
    }
    const pubs = inv ? inv.publicKeys.filter((p) => p.path === SA_PUB) : [];
    if (inv && pubs.length > 1) {
      out.push({
        message: `${SA_PUB} holds ${pubs.length} public keys; Talos apiservers accept only the one derived from sa.key, so tokens signed by the others get 401 there.`,
        evidence: [
          fileEvidence(inv, SA_PUB, 'PUBLIC KEY blocks', {
            observed: pubs.map((p) => short(p.publicKeySha256)).join(', '),
          }),
        ],
        remediation,
        subject: pkiSubject(SA_PUB),
        field: 'public keys',
        artifacts: [],
      });
    }
    return out;
  },
};

// ---------------------------------------------------------------------------------------------
// pki.leaf-expiry

function expiringLeaf(c: CertificateInfo, horizon: number): boolean {
  return !c.isCA && Date.parse(c.notAfter) <= horizon;
}

export const leafExpiry: Rule = {
  id: 'pki.leaf-expiry',
  family: 'pki',
  severity: 'risk',
  title: 'kubeadm leaf certificate expires before the migration ends',
  inputs: ['pki'],
  reads: [],
  description:
    'kubeadm nodes must stay healthy until they are removed; a leaf certificate that expires mid-migration takes a control plane or etcd member down.',
  docs: 'docs/rules.md#pki.leaf-expiry',
  check(ctx) {
    const inv = inventoryOrSkip(ctx.snapshot);
    if (isSkip(inv)) return inv;
    const now = snapshotTime(ctx.snapshot);
    const horizon = now + HORIZON_DAYS * DAY_MS;
    const remediation =
      'Renew the kubeadm certificates on every control plane before starting (`kubeadm certs check-expiration`, then `kubeadm certs renew all` and restart the static pods one node at a time).';
    const out: RuleFinding[] = [];
    const state = (c: CertificateInfo) =>
      Date.parse(c.notAfter) <= now
        ? 'has expired'
        : `expires ${day(c.notAfter)}, within the migration window`;
    for (const c of inv.certificates) {
      if (!expiringLeaf(c, horizon)) continue;
      const label = c.index > 0 ? `${c.path}[${c.index}]` : c.path;
      out.push({
        message: `${label} (${c.subject}) ${state(c)} (${MIGRATION_WINDOW_DAYS} days of migration + ${EXPIRY_MARGIN_DAYS} days margin after the snapshot). This copy is from one control plane; check the others too.`,
        evidence: [fileEvidence(inv, c.path, 'notAfter', { observed: c.notAfter })],
        remediation,
        subject: pkiSubject(label),
        field: 'notAfter',
        artifacts: [],
      });
    }
    out.push(...servedExpiry(ctx.snapshot.servedCertificates, now, horizon, remediation));
    return out;
  },
};

function servedExpiry(
  served: ServedCertificate[],
  now: number,
  horizon: number,
  remediation: string,
): RuleFinding[] {
  const out: RuleFinding[] = [];
  for (const s of served) {
    const c = s.certificate;
    if (!c || !expiringLeaf(c, horizon)) continue;
    const state = Date.parse(c.notAfter) <= now ? 'has expired' : `expires ${day(c.notAfter)}`;
    out.push({
      message: `The certificate served at ${s.address}${s.node ? ` (${s.node})` : ''} (${c.subject}) ${state}, before the migration can end.`,
      evidence: [{ kind: 'tls', address: s.address, field: 'notAfter', observed: c.notAfter }],
      remediation,
      subject: { kind: 'Endpoint', name: s.address, ...(s.node ? { node: s.node } : {}) },
      field: 'notAfter',
      artifacts: [],
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

export const PKI_RULES: Rule[] = [
  caKeyMissing,
  etcdCaMissing,
  frontProxyCaMissing,
  saKeyMissing,
  keyTypeUnsupported,
  certKeyMismatch,
  caInvalid,
  intermediateCa,
  caBundleMultiple,
  saExtraVerifyKeys,
  leafExpiry,
];
