/**
 * apiserver serving certificates: loopback SANs for KubePrism (apiserver.san-loopback) and the
 * endpoint host / Service IP / extra SANs (apiserver.san-endpoint).
 */

import type { Fact } from '../../../facts/model.js';
import { LOOPBACK_SANS } from '../../../knowledge/kit-values.js';
import { KUBEPRISM } from '../../../knowledge/talos.js';
import type { CertificateInfo, Snapshot } from '../../../snapshot/model.js';
import { canonicalIp, parseIp } from '../../../util/ip.js';
import type { Evidence, Subject } from '../../findings.js';
import { type KitCheck, patchChecks, settingPath } from '../../kit-checks.js';
import { type AuditContext, HOW_TO_PROVIDE, type Rule, type RuleFinding, skip } from '../../rule.js';
import { CLUSTER_INFO } from '../../rule-reads.js';
import { KIT } from '../kit-paths.js';
import { fileEvidence, firstCert, pkiSubject } from '../pki.js';
import { factEvidence, isV114, targetEvidence } from './evidence.js';

interface ServingCert {
  label: string;
  cert: CertificateInfo;
  subject: Subject;
  evidence(field: string, obs: { observed?: string; expected?: string; note?: string }): Evidence;
}

/** kubeadm apiserver serving certificates ferry can see: pki/apiserver.crt and served certificates. */
function apiserverCerts(s: Snapshot): ServingCert[] {
  const out: ServingCert[] = [];
  const inv = s.pki;
  const c = inv ? firstCert(inv, 'apiserver.crt') : undefined;
  if (inv && c) {
    out.push({
      label: 'apiserver.crt (the PKI copy of one control plane)',
      cert: c,
      subject: pkiSubject('apiserver.crt'),
      evidence: (field, obs) => fileEvidence(inv, 'apiserver.crt', field, obs),
    });
  }
  for (const sc of s.servedCertificates) {
    if ((sc.role !== 'control-plane' && sc.role !== 'endpoint') || !sc.certificate) continue;
    out.push({
      label: `the certificate served at ${sc.address}${sc.node ? ` (${sc.node})` : ''}`,
      cert: sc.certificate,
      subject: { kind: 'Endpoint', name: sc.address, ...(sc.node ? { node: sc.node } : {}) },
      evidence: (field, obs) => ({ kind: 'tls', address: sc.address, field, ...obs }),
    });
  }
  return out;
}

/**
 * The control planes none of whose serving certificates ferry saw: the PKI copy belongs to one
 * control plane the snapshot does not name, a served certificate to the node it was read from.
 */
function controlPlanesNotSeen(ctx: AuditContext, certs: ServingCert[]): string {
  const seen = new Set(certs.flatMap((c) => (c.subject.node ? [c.subject.node] : [])));
  const unseen = (ctx.facts.nodes.controlPlane.value ?? []).map((n) => n.name).filter((n) => !seen.has(n));
  if (unseen.length === 0) return '';
  const pki = certs.some((c) => c.subject.kind === 'PkiFile');
  return ` No certificate served by ${unseen.join(', ')} is in the snapshot${pki ? ' (the PKI copy is of one control plane, which one is not recorded)' : ''}: check theirs too.`;
}

const CERT_INPUT_HINT = `${HOW_TO_PROVIDE.pki} (apiserver.crt), or ${HOW_TO_PROVIDE['served-certs']}`;

function sanList(c: CertificateInfo): string {
  return [...c.dnsNames, ...c.ipAddresses].join(', ') || '(none)';
}

/** Does the certificate cover this host name or IP, as Go's x509 hostname check would? */
export function coversHost(c: CertificateInfo, host: string): boolean {
  if (parseIp(host)) {
    const want = canonicalIp(host);
    return c.ipAddresses.some((a) => canonicalIp(a) === want);
  }
  const name = host.toLowerCase().replace(/\.$/, '');
  return c.dnsNames.some((d) => {
    const dns = d.toLowerCase().replace(/\.$/, '');
    if (dns === name) return true;
    // One wildcard label, leftmost only.
    if (!dns.startsWith('*.')) return false;
    const rest = dns.slice(1);
    return name.endsWith(rest) && !name.slice(0, -rest.length).includes('.') && name.length > rest.length;
  });
}

/** The kit's steps 10 and 15: re-issue each kubeadm apiserver certificate, record the certSANs. */
const SANS_ARTIFACTS = [KIT.apiserverSans, KIT.kubeadmConfigUpload, KIT.clusterConfiguration];
const LOOPBACK = LOOPBACK_SANS.join(' and ');
/** The kit resolves a missing loopback SAN when step 10 re-issues, step 15 records, and its config lists them. */
const LOOPBACK_KIT: KitCheck[] = [
  { kind: 'step', script: KIT.apiserverSans, mentions: [...LOOPBACK_SANS] },
  { kind: 'step', script: KIT.kubeadmConfigUpload, mentions: [] },
  {
    kind: 'value',
    file: KIT.clusterConfiguration,
    doc: 'ClusterConfiguration',
    path: ['apiServer', 'certSANs'],
    test: { op: 'includes', values: [...LOOPBACK_SANS] },
  },
];

export const sanLoopback: Rule = {
  id: 'apiserver.san-loopback',
  family: 'apiserver',
  severity: 'blocker',
  title: 'kubeadm apiserver certificate lacks 127.0.0.1 (KubePrism)',
  inputs: ['pki', 'target'],
  reads: ['nodes'],
  // The PKI copy or a served certificate will do; the rule says itself when it has neither.
  requires: [],
  description:
    'Talos nodes reach every apiserver through KubePrism on 127.0.0.1:7445, so each kubeadm apiserver serving certificate needs 127.0.0.1 (and localhost) among its SANs; kubeadm leaves them out by default.',
  docs: 'docs/rules.md#apiserver.san-loopback',
  notApplicable: (t) =>
    t.kubeprism === 'off'
      ? 'KubePrism is off in the target: Talos nodes do not dial apiservers at 127.0.0.1'
      : undefined,
  check(ctx) {
    const certs = apiserverCerts(ctx.snapshot);
    if (certs.length === 0) return skip(['pki', 'served-certs'], CERT_INPUT_HINT);
    const v14 = isV114(ctx.target);
    const disable = v14
      ? 'delete the `KubePrismConfig` document (or set `KubePrismConfig.tlsServerName` to a name the kubeadm certificates carry)'
      : 'set `machine.features.kubePrism.enabled: false`';
    const out: RuleFinding[] = [];
    const notSeen = controlPlanesNotSeen(ctx, certs);
    for (const sc of certs) {
      const lacking = LOOPBACK_SANS.filter((h) => !coversHost(sc.cert, h));
      if (lacking.length === 0) continue;
      const noIp = lacking.includes(KUBEPRISM.host);
      const missing = lacking.join(' and ');
      out.push({
        severity: noIp ? 'blocker' : 'risk',
        message: `${sc.label} has SANs ${sanList(sc.cert)} but not ${missing}: Talos kubelets and pods reach this apiserver through KubePrism at ${KUBEPRISM.host}:${KUBEPRISM.port} and fail with "x509: certificate is valid for …, not ${KUBEPRISM.host}".${notSeen}`,
        evidence: [
          sc.evidence('subjectAltName', {
            observed: sanList(sc.cert),
            expected: `includes ${LOOPBACK}`,
          }),
          targetEvidence(ctx.target, 'kubeprism', {
            observed: 'on',
            note: `KubePrism dials ${KUBEPRISM.host}:${KUBEPRISM.port}`,
          }),
        ],
        remediation: `Re-issue the apiserver certificate on each kubeadm control plane, one at a time, with ${LOOPBACK} added to apiServer.certSANs (the kit's ${KIT.apiserverSans} runs \`kubeadm init phase certs apiserver\` and restarts the apiserver; ${KIT.kubeadmConfigUpload} records the SANs in kubeadm-config). Alternatively, keep KubePrism off while kubeadm control planes remain: ${disable}.`,
        subject: sc.subject,
        field: 'subjectAltName.loopback',
        artifacts: SANS_ARTIFACTS,
        kitChecks: LOOPBACK_KIT,
      });
    }
    return out;
  },
};

/** Names and addresses Talos puts in its own apiserver certificate without being told (talos.md §4.7). */
function talosAutoSans(
  endpointHost: string,
  dnsDomain: string | undefined,
  serviceIp: string | undefined,
): string[] {
  return [
    endpointHost,
    'kubernetes',
    'kubernetes.default',
    'kubernetes.default.svc',
    ...(dnsDomain ? [`kubernetes.default.svc.${dnsDomain}`] : []),
    'localhost',
    KUBEPRISM.host,
    ...(serviceIp ? [serviceIp] : []),
  ];
}

function sameHost(a: string, b: string): boolean {
  if (parseIp(a) && parseIp(b)) return canonicalIp(a) === canonicalIp(b);
  return a.toLowerCase().replace(/\.$/, '') === b.toLowerCase().replace(/\.$/, '');
}

/** Which of the certificates seen carry every one of `sans`: what kubeadm-config lists may not be issued yet. */
function carriedBy(certs: ServingCert[], sans: string[]): string {
  if (certs.length === 0) return '';
  const carrying = certs.filter((c) => sans.every((h) => coversHost(c.cert, h)));
  if (carrying.length === certs.length)
    return certs.length === 1
      ? `, and ${certs[0]!.label} carries them`
      : ', and every certificate seen carries them';
  return `; of the certificates seen, ${carrying.length === 0 ? 'none carries them all' : `only ${carrying.map((c) => c.label).join(', ')} carries them all`}`;
}

export const sanEndpoint: Rule = {
  id: 'apiserver.san-endpoint',
  family: 'apiserver',
  severity: 'blocker',
  title: 'Endpoint or kubernetes Service IP missing from apiserver certificate SANs',
  inputs: ['pki', 'kubeadm'],
  reads: ['services', CLUSTER_INFO],
  // The endpoint may come from cluster-info, the certificate from served-certs; the rule checks.
  requires: [],
  description:
    'Clients switch between old and new apiservers behind the same endpoint; every kubeadm and Talos apiserver certificate must carry the endpoint host (and the kubernetes Service IP) before the first handover.',
  docs: 'docs/rules.md#apiserver.san-endpoint',
  check(ctx) {
    const ep = ctx.facts.cluster.controlPlaneEndpoint;
    if (!ep.value) return skip(['kubeadm'], ep.missing ?? HOW_TO_PROVIDE.kubeadm);
    const certs = apiserverCerts(ctx.snapshot);
    if (certs.length === 0) return skip(['pki', 'served-certs'], CERT_INPUT_HINT);
    const svc = ctx.facts.network.kubernetesServiceIP;
    const needed: { host: string; what: string; fact: Fact<unknown> }[] = [
      { host: ep.value.host, what: 'control-plane endpoint host', fact: ep as Fact<unknown> },
    ];
    if (svc.value)
      needed.push({ host: svc.value, what: '`kubernetes` Service IP', fact: svc as Fact<unknown> });
    const out: RuleFinding[] = [];
    const kitReissues = ctx.target.kubeprism === 'on';
    for (const sc of certs) {
      const missing = needed.filter((n) => !coversHost(sc.cert, n.host));
      if (missing.length === 0) continue;
      out.push({
        message: `${sc.label} does not cover ${missing.map((m) => `the ${m.what} ${m.host}`).join(' or ')} (SANs: ${sanList(sc.cert)}): clients reaching this apiserver by that name fail TLS verification once traffic is shared with Talos apiservers.`,
        evidence: [
          sc.evidence('subjectAltName', {
            observed: sanList(sc.cert),
            expected: `includes ${missing.map((m) => m.host).join(', ')}`,
          }),
          ...missing.flatMap((m) => factEvidence(m.fact, { note: m.what })),
        ],
        // The kit re-issues certificates only for KubePrism (step 10); it adds kubeadm's own SANs back.
        remediation: `Add ${missing.map((m) => m.host).join(' and ')} to apiServer.certSANs and re-issue the certificate on every kubeadm control plane, one at a time (${kitReissues ? `the kit's ${KIT.apiserverSans}` : '`kubeadm init phase certs apiserver` with the updated configuration'}), before the first Talos control plane joins.`,
        subject: sc.subject,
        field: 'subjectAltName.endpoint',
        artifacts: kitReissues ? SANS_ARTIFACTS : [],
      });
    }
    // The other direction: names kubeadm certificates carry on purpose that Talos would not add itself.
    const certSans = ctx.facts.apiserver.certSANs;
    const auto = talosAutoSans(ep.value.host, ctx.facts.network.dnsDomain.value, svc.value);
    const extra = (certSans.value ?? []).filter((s) => !auto.some((a) => sameHost(a, s)));
    if (extra.length > 0) {
      const at = isV114(ctx.target)
        ? { doc: 'KubeAPIServerConfig', path: ['certExtraSANs'] }
        : { path: ['cluster', 'apiServer', 'certSANs'] };
      const carry = { op: 'includes', values: extra } as const;
      const field = `\`${settingPath(at)}\``;
      out.push({
        severity: 'risk',
        message: `kubeadm-config lists the extra apiserver certificate SANs ${extra.join(', ')} (apiServer.certSANs)${carriedBy(certs, extra)}; Talos adds only the endpoint host, kubernetes.*, localhost, 127.0.0.1, the Service IP and node addresses. Clients using ${extra.join(', ')} fail against Talos apiservers unless the Talos config lists them.`,
        evidence: factEvidence(certSans, {
          observed: (certSans.value ?? []).join(', '),
          note: `not added by Talos: ${extra.join(', ')}`,
        }),
        remediation: `Put ${extra.join(', ')} into ${field} of every Talos control plane.`,
        subject: { kind: 'TalosConfig', name: 'apiserver-certificate' },
        field: 'certSANs',
        artifacts: [KIT.controlPlanePatch],
        kitChecks: patchChecks([KIT.controlPlanePatch], at, carry),
      });
    }
    return out;
  },
};
