/**
 * kube-apiserver (blockers.md "kube-apiserver"). Talos renders its own apiserver command line and
 * serving certificate; for old and new apiservers to live behind one endpoint, their certificates,
 * service-account issuer, authentication, flags and admission must agree before the first Talos
 * control plane joins `default/kubernetes`.
 */

import { canonicalIp, cidrContains, parseIp } from '../../facts/ip.js';
import type { ComponentInstance, Fact } from '../../facts/model.js';
import { atField } from '../../facts/sources.js';
import type { Target } from '../../facts/target.js';
import {
  ADDITIVE_EXTRA_ARGS,
  apiserverDeniedArgs,
  CONTROLLER_MANAGER_DENIED_ARGS,
  ETCD_DENIED_ARGS,
  KUBEPRISM,
  SCHEDULER_DENIED_ARGS,
  TALOS_POD_SECURITY,
} from '../../knowledge/talos.js';
import type { AnonymousAccess, CertificateInfo, Flag, KubeObject, Snapshot } from '../../snapshot/model.js';
import { type Evidence, evidenceFromSource, type ObjectRef, type Subject } from '../findings.js';
import type { Workload } from '../index.js';
import { HOW_TO_PROVIDE, type Rule, type RuleFinding, skip } from '../rule.js';
import { baselineViolations } from './apiserver-baseline.js';
import { KIT } from './kit-paths.js';
import { fileEvidence, firstCert, pkiSubject } from './pki.js';

// ---------------------------------------------------------------------------------------------
// Shared helpers

const isV114 = (t: Target) => t.talos.configFormat === 'multidoc';
/** Talos minor as a number (13 for "1.13"). */
const talosMinor = (t: Target) => Number(t.talos.minor.split('.')[1] ?? 0);

/** Where a component's extraArgs live in kubeadm's ClusterConfiguration. */
const KUBEADM_EXTRA_ARGS: Record<string, string> = {
  'kube-apiserver': 'apiServer.extraArgs',
  'kube-controller-manager': 'controllerManager.extraArgs',
  'kube-scheduler': 'scheduler.extraArgs',
  etcd: 'etcd.local.extraArgs',
};

/**
 * Evidence that a component runs with a flag: one line per flag, naming every node that carries it;
 * falls back on kubeadm-config's extraArgs when no manifest was supplied.
 */
export function flagEvidence(
  snapshot: Snapshot,
  component: string,
  instances: readonly ComponentInstance[] | undefined,
  flag: string,
  obs: { expected?: string; note?: string } = {},
): Evidence[] {
  const carrying = (instances ?? []).filter((i) => i.flags.some((f) => f.name === flag));
  const first = carrying[0];
  if (first) {
    const values = [
      ...new Set(carrying.flatMap((i) => i.flags.filter((f) => f.name === flag).map((f) => f.value))),
    ];
    const nodes = carrying.map((i) => i.node ?? '(node unknown)');
    const note = [`on ${nodes.join(', ')}`, obs.note].filter(Boolean).join('; ');
    return [
      {
        kind: 'flag',
        component,
        ...(first.node ? { node: first.node } : {}),
        flag,
        from: first.source,
        observed: values.join(' | '),
        ...(obs.expected !== undefined ? { expected: obs.expected } : {}),
        note,
      },
    ];
  }
  const cc = snapshot.kubeadm.clusterConfiguration;
  const path = KUBEADM_EXTRA_ARGS[component];
  if (cc && path) {
    return [evidenceFromSource(atField(cc.source, `${path}[${flag}]`), { ...obs })];
  }
  return [];
}

function factEvidence<T>(
  fact: Fact<T>,
  obs: { observed?: string; expected?: string; note?: string } = {},
): Evidence[] {
  return fact.provenance.map((p) => evidenceFromSource(p, obs));
}

function targetEvidence(
  t: Target,
  field: string,
  obs: { observed?: string; expected?: string; note?: string } = {},
): Evidence {
  return { kind: 'target', field, observed: obs.observed ?? t.talosVersion, ...obs };
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

// ---------------------------------------------------------------------------------------------
// Serving certificates and SANs

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

const SANS_ARTIFACTS = [
  'kubeadm/10-apiserver-sans.sh',
  'kubeadm/15-kubeadm-config.sh',
  'kubeadm/cluster-configuration.yaml',
];

export const sanLoopback: Rule = {
  id: 'apiserver.san-loopback',
  family: 'apiserver',
  severity: 'blocker',
  title: 'kubeadm apiserver certificate lacks 127.0.0.1 (KubePrism)',
  inputs: ['pki', 'target'],
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
    for (const sc of certs) {
      const noIp = !coversHost(sc.cert, KUBEPRISM.host);
      const noName = !coversHost(sc.cert, 'localhost');
      if (!noIp && !noName) continue;
      const missing = [noIp ? KUBEPRISM.host : undefined, noName ? 'localhost' : undefined]
        .filter(Boolean)
        .join(' and ');
      out.push({
        severity: noIp ? 'blocker' : 'risk',
        message: `${sc.label} has SANs ${sanList(sc.cert)} but not ${missing}: Talos kubelets and pods reach this apiserver through KubePrism at ${KUBEPRISM.host}:${KUBEPRISM.port} and fail with "x509: certificate is valid for …, not ${KUBEPRISM.host}". kubeadm issues every control plane's certificate the same way; check each.`,
        evidence: [
          sc.evidence('subjectAltName', {
            observed: sanList(sc.cert),
            expected: `includes ${KUBEPRISM.host} and localhost`,
          }),
          targetEvidence(ctx.target, 'kubeprism', {
            observed: 'on',
            note: `KubePrism dials ${KUBEPRISM.host}:${KUBEPRISM.port}`,
          }),
        ],
        remediation: `Re-issue the apiserver certificate on each kubeadm control plane, one at a time, with ${KUBEPRISM.host} and localhost added to apiServer.certSANs (the kit's kubeadm/10-apiserver-sans.sh runs \`kubeadm init phase certs apiserver\` and restarts the apiserver; kubeadm/15-kubeadm-config.sh records the SANs in kubeadm-config). Alternatively, keep KubePrism off while kubeadm control planes remain: ${disable}.`,
        subject: sc.subject,
        field: 'subjectAltName.loopback',
        artifacts: SANS_ARTIFACTS,
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

export const sanEndpoint: Rule = {
  id: 'apiserver.san-endpoint',
  family: 'apiserver',
  severity: 'blocker',
  title: 'Endpoint or kubernetes Service IP missing from apiserver certificate SANs',
  inputs: ['pki', 'kubeadm'],
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
        remediation: `Add ${missing.map((m) => m.host).join(' and ')} to apiServer.certSANs and re-issue the certificate on every kubeadm control plane, one at a time (the kit's kubeadm/10-apiserver-sans.sh), before the first Talos control plane joins.`,
        subject: sc.subject,
        field: 'subjectAltName.endpoint',
        artifacts: SANS_ARTIFACTS,
      });
    }
    // The other direction: names kubeadm certificates carry on purpose that Talos would not add itself.
    const certSans = ctx.facts.apiserver.certSANs;
    const auto = talosAutoSans(ep.value.host, ctx.facts.network.dnsDomain.value, svc.value);
    const extra = (certSans.value ?? []).filter((s) => !auto.some((a) => sameHost(a, s)));
    if (extra.length > 0) {
      const field = isV114(ctx.target)
        ? '`KubeAPIServerConfig.certExtraSANs`'
        : '`cluster.apiServer.certSANs`';
      out.push({
        severity: 'risk',
        message: `kubeadm apiserver certificates carry the extra SANs ${extra.join(', ')} (apiServer.certSANs); Talos adds only the endpoint host, kubernetes.*, localhost, 127.0.0.1, the Service IP and node addresses. Clients using ${extra.join(', ')} fail against Talos apiservers unless the Talos config lists them.`,
        evidence: factEvidence(certSans, {
          observed: (certSans.value ?? []).join(', '),
          note: `not added by Talos: ${extra.join(', ')}`,
        }),
        remediation: `Put ${extra.join(', ')} into ${field} of every Talos control plane.`,
        subject: { kind: 'TalosConfig', name: 'apiserver-certificate' },
        field: 'certSANs',
        artifacts: [KIT.controlPlanePatch],
      });
    }
    return out;
  },
};

// ---------------------------------------------------------------------------------------------
// Service-account issuer, audiences, JWKS

function sameUrl(a: string, b: string): boolean {
  return a.trim().replace(/\/+$/, '').toLowerCase() === b.trim().replace(/\/+$/, '').toLowerCase();
}

export const saIssuer: Rule = {
  id: 'apiserver.sa-issuer',
  family: 'apiserver',
  severity: 'blocker',
  title: 'Service-account issuer or audiences differ from Talos (endpoint URL)',
  inputs: ['flags', 'target'],
  description:
    'Talos sets --service-account-issuer and --api-audiences to the endpoint URL. Tokens minted by one side are rejected by the other (401 "invalid bearer token", Cilium first) unless both sides list each other.',
  docs: 'docs/rules.md#apiserver.sa-issuer',
  check(ctx) {
    const ep = ctx.facts.cluster.controlPlaneEndpoint;
    const issuers = ctx.facts.apiserver.serviceAccountIssuers;
    if (!ep.value) return skip(['kubeadm'], ep.missing ?? HOW_TO_PROVIDE.kubeadm);
    if (!issuers.value) return skip(['flags'], issuers.missing ?? HOW_TO_PROVIDE.flags);
    const url = ep.value.url;
    const minor = talosMinor(ctx.target);
    const talosSide =
      minor <= 12
        ? `Talos v1.${minor} takes a single issuer (extraArgs are strings): after the switch, recreate the pods so every projected token carries ${url} before the first Talos control plane serves`
        : minor === 13
          ? `in the Talos config set extraArgs \`service-account-issuer: [${url}, ${issuers.value.join(', ')}]\` and \`api-audiences\` to the union of both sides`
          : `in the Talos config set \`KubeServiceAccountConfig.accepted.issuers\` to ${issuers.value.join(', ')} and \`accepted.audiences\` to the union of both sides`;
    const out: RuleFinding[] = [];
    const first = issuers.value[0];
    const audiences = ctx.facts.apiserver.apiAudiences;
    // Half-way through the kubeadm-side change the control planes disagree: each one still
    // signing with the old issuer counts, whatever ferry believes for the cluster as a whole.
    const running = issuers.conflict
      ? issuers.conflict.candidates.filter((c) => c.source.kind === 'flag')
      : [];
    const lagging = running.filter((c) => !sameUrl(c.value[0] ?? '', url));
    const firstWrong = first === undefined || !sameUrl(first, url);
    if (firstWrong || lagging.length > 0) {
      const expected = `${url} first`;
      const who = firstWrong
        ? `kubeadm apiservers sign service-account tokens with issuer ${first ?? '(none)'}`
        : `${lagging.length} of ${running.length} kubeadm apiservers still sign service-account tokens with ${[...new Set(lagging.map((c) => c.value[0] ?? '(none)'))].join(', ')}`;
      out.push({
        message: `${who}; Talos apiservers use ${url}. Tokens from either side get 401 on the other once both serve behind the endpoint.`,
        evidence: [
          ...(firstWrong
            ? factEvidence(issuers, { observed: issuers.value.join(', ') || '(none)', expected })
            : lagging.map((c) =>
                evidenceFromSource(c.source, { observed: c.value.join(', ') || '(none)', expected }),
              )),
          ...factEvidence(ep, { note: 'the Talos issuer is this endpoint URL' }),
        ],
        remediation: `On every kubeadm apiserver, add --service-account-issuer=${url} as the first issuer and keep the old one after it (all listed issuers are accepted, the first signs), restarting one control plane at a time (the kit's kubeadm/20-sa-issuer.sh); ${talosSide}. Then restart workloads so their tokens are re-issued.`,
        subject: { kind: 'Component', name: 'kube-apiserver' },
        field: '--service-account-issuer',
        artifacts: [KIT.saIssuer, KIT.controlPlanePatch],
      });
    } else if (audiences.value && !audiences.value.some((a) => sameUrl(a, url))) {
      out.push({
        message: `kubeadm apiservers accept the audiences ${audiences.value.join(', ')} but not ${url}, the audience Talos apiservers put in the tokens they mint: those tokens get 401 on kubeadm apiservers.`,
        evidence: factEvidence(audiences, {
          observed: audiences.value.join(', '),
          expected: `includes ${url}`,
        }),
        remediation: `Add ${url} to --api-audiences on every kubeadm apiserver (one at a time), and carry kubeadm's audiences into the Talos config (${minor >= 14 ? '`KubeServiceAccountConfig.accepted.audiences`' : 'extraArgs `api-audiences`'}).`,
        subject: { kind: 'Component', name: 'kube-apiserver' },
        field: '--api-audiences',
        artifacts: [KIT.saIssuer, KIT.controlPlanePatch],
      });
    }
    return out;
  },
};

export const saJwksUri: Rule = {
  id: 'apiserver.sa-jwks-uri',
  family: 'apiserver',
  severity: 'info',
  title: 'kubeadm sets --service-account-jwks-uri (Talos does not)',
  inputs: ['flags'],
  description:
    'External OIDC consumers of the service-account discovery document (workload identity federation) read the JWKS URI; Talos never sets it, so it changes unless carried over.',
  docs: 'docs/rules.md#apiserver.sa-jwks-uri',
  check(ctx) {
    const jwks = ctx.facts.apiserver.serviceAccountJwksUri;
    if (jwks.value === undefined) return skip(['flags'], jwks.missing ?? HOW_TO_PROVIDE.flags);
    if (jwks.value === null) return [];
    const at = isV114(ctx.target) ? '`KubeAPIServerConfig.extraArgs`' : '`cluster.apiServer.extraArgs`';
    return [
      {
        message: `kubeadm apiservers publish ${jwks.value} as the service-account JWKS URI; Talos apiservers would publish their own address instead, which external token consumers may not reach.`,
        evidence: flagEvidence(
          ctx.snapshot,
          'kube-apiserver',
          ctx.facts.apiserver.instances.value,
          'service-account-jwks-uri',
        ),
        remediation: `Carry it over: \`service-account-jwks-uri: ${jwks.value}\` in ${at} (the flag is not on Talos's deny-list).`,
        subject: { kind: 'Component', name: 'kube-apiserver' },
        field: '--service-account-jwks-uri',
        artifacts: [KIT.controlPlanePatch],
      },
    ];
  },
};

// ---------------------------------------------------------------------------------------------
// Anonymous authentication

const HEALTH_PATHS = new Set(['/healthz', '/readyz', '/livez']);
/** User agents of load balancers and health checkers (HTTP checks without credentials). */
const LB_AGENT =
  /haproxy|keepalived|kube-vip|nginx|envoy|traefik|elb-healthchecker|googlehc|f5|health.?check/i;
/** kube-system/public bindings kubeadm and Kubernetes create for anonymous users themselves. */
const DEFAULT_ANONYMOUS_BINDINGS = new Set([
  'system:public-info-viewer',
  'kubeadm:bootstrap-signer-clusterinfo',
]);

function nodeAddresses(ctx: Parameters<Rule['check']>[0]): Set<string> {
  const out = new Set<string>();
  for (const n of [...(ctx.facts.nodes.controlPlane.value ?? []), ...(ctx.facts.nodes.workers.value ?? [])])
    for (const a of n.addresses) out.add(canonicalIp(a.address));
  return out;
}

function isHealthPath(path: string): boolean {
  return HEALTH_PATHS.has(path) || [...HEALTH_PATHS].some((p) => path.startsWith(`${p}/`));
}

/** An HTTP health check by something outside the cluster: an LB agent, or a caller that is no node and no pod. */
function looksLikeLbCheck(a: AnonymousAccess, nodes: Set<string>, podCidrs: string[]): boolean {
  if (!isHealthPath(a.path)) return false;
  if (a.userAgent && LB_AGENT.test(a.userAgent)) return true;
  return (
    a.sourceIPs.length > 0 &&
    a.sourceIPs.every((ip) => !nodes.has(canonicalIp(ip)) && !podCidrs.some((c) => cidrContains(c, ip)))
  );
}

function customAnonymousBindings(s: Snapshot): KubeObject[] {
  return s.resources.anonymousBindings.filter(
    (b) =>
      !DEFAULT_ANONYMOUS_BINDINGS.has(b.metadata.name) &&
      b.metadata.labels?.['kubernetes.io/bootstrapping'] !== 'rbac-defaults',
  );
}

function bindingEvidence(b: KubeObject): Evidence {
  const subjects = Array.isArray(b['subjects'])
    ? (b['subjects'] as { kind?: string; name?: string }[]).map((x) => `${x.kind}:${x.name}`).join(', ')
    : '';
  return {
    kind: 'object',
    object: {
      apiVersion: b.apiVersion,
      kind: b.kind,
      name: b.metadata.name,
      ...(b.metadata.namespace ? { namespace: b.metadata.namespace } : {}),
      ...(b.metadata.uid ? { uid: b.metadata.uid } : {}),
    },
    field: 'subjects',
    observed: subjects,
    note: `grants ${b['roleRef']?.kind ?? 'role'} ${b['roleRef']?.name ?? '?'}`,
  };
}

export const anonymousAuthDependents: Rule = {
  id: 'apiserver.anonymous-auth-dependents',
  family: 'apiserver',
  severity: 'risk',
  title: 'Clients depend on anonymous access that Talos apiservers refuse',
  inputs: ['flags', 'audit', 'node'],
  // The flags decide whether anonymous access exists; the audit log (optional) shows who uses it.
  // Load-balancer configs (node) are not in a snapshot.
  requires: ['flags'],
  description:
    'Talos ≤v1.13 runs kube-apiserver with --anonymous-auth=false, v1.14 allows anonymous requests only on /livez, /readyz and /healthz: unauthenticated callers (LB HTTP health checks first) get 401 and mark Talos backends down.',
  docs: 'docs/rules.md#apiserver.anonymous-auth-dependents',
  check(ctx) {
    const anon = ctx.facts.apiserver.anonymousAuth;
    if (anon.value === undefined) return skip(['flags'], anon.missing ?? HOW_TO_PROVIDE.flags);
    // kubeadm already refuses anonymous requests on every control plane: nobody can depend on them.
    const allowedSomewhere =
      anon.value === true || anon.conflict?.candidates.some((c) => c.value === true) === true;
    if (!allowedSomewhere) return [];
    const v14 = isV114(ctx.target);
    const nodes = nodeAddresses(ctx);
    const podCidrs = ctx.facts.network.podSubnets.value ?? [];
    const log = ctx.snapshot.auditLog;
    const talosPolicy = v14
      ? 'Talos v1.14 allows anonymous requests only on /livez, /readyz and /healthz (generated KubeAuthenticationConfig)'
      : `Talos ${ctx.target.talosVersion} runs kube-apiserver with --anonymous-auth=false`;
    const fixLb = v14
      ? 'keep the generated `KubeAuthenticationConfig` and point HTTP checks at /readyz, /livez or /healthz'
      : 'switch the load balancer to TCP checks or to an authenticated check (the kit\'s rbac/health-probe.yaml creates a token that may read only the health paths), or set extraArgs `anonymous-auth: "true"` in the Talos config (overridable, ≤v1.13)';
    const out: RuleFinding[] = [];
    for (const a of log?.anonymous ?? []) {
      // kube-probe: the kubelet probing the kubeadm apiserver next to it, never a Talos apiserver.
      if (a.userAgent?.startsWith('kube-probe/')) continue;
      const exactHealth = HEALTH_PATHS.has(a.path);
      if (v14 && exactHealth) continue;
      const lb = looksLikeLbCheck(a, nodes, podCidrs);
      const who = `${a.userAgent ?? 'a client without user agent'} from ${a.sourceIPs.join(', ') || 'unknown addresses'}`;
      out.push({
        severity: lb && !v14 ? 'blocker' : 'risk',
        message: `${who} calls ${a.path} anonymously (${plural(a.count, 'request')} in the audit log)${lb ? ', an HTTP health check from outside the cluster' : ''}. ${talosPolicy}: it gets 401 from Talos apiservers${lb ? ' and the load balancer marks them down' : ''}.`,
        evidence: [
          {
            kind: 'file',
            path: log?.source.kind === 'file' ? log.source.path : 'audit.log',
            field: `user.username=system:anonymous requestURI=${a.path}`,
            observed: `${plural(a.count, 'request')}, userAgent ${a.userAgent ?? '(none)'}, sourceIPs ${a.sourceIPs.join(', ') || '(none)'}`,
          },
          ...factEvidence(anon, { observed: 'anonymous requests allowed' }),
        ],
        remediation: lb
          ? `Before the first Talos control plane joins the load balancer: ${fixLb}.`
          : `Give this client credentials (a ServiceAccount token) or stop it calling ${a.path}; ${v14 ? 'Talos v1.14 cannot allow anonymous access beyond the health paths without replacing KubeAuthenticationConfig' : 'or set extraArgs `anonymous-auth: "true"` in the Talos config (≤v1.13)'}.`,
        subject: { kind: 'AnonymousClient', name: `${a.userAgent ?? 'unknown'} ${a.path}` },
        field: 'anonymous',
        // ≤v1.13: the control-plane patch keeps anonymous-auth as kubeadm has it; the probe token serves LB checks.
        artifacts: v14 ? [] : lb ? [KIT.healthProbe, KIT.controlPlanePatch] : [KIT.controlPlanePatch],
      });
    }
    const custom = customAnonymousBindings(ctx.snapshot);
    if (!log || (custom.length > 0 && out.length === 0)) {
      out.push({
        message: `kubeadm apiservers accept anonymous requests${custom.length ? ` and ${plural(custom.length, 'binding')} grant anonymous users access (${custom.map((b) => b.metadata.name).join(', ')})` : ''}; ${talosPolicy}. ${log ? 'The audit log shows no caller, but it covers only a short time.' : 'Without the audit log ferry cannot see who depends on it; load-balancer HTTP checks are the usual callers.'}`,
        evidence: [
          ...factEvidence(anon, { observed: 'anonymous requests allowed' }),
          ...custom.map(bindingEvidence),
        ],
        remediation:
          `Check the load balancer's health checks (haproxy \`option httpchk\`, keepalived scripts) and other unauthenticated callers; ${fixLb}. ${log ? '' : 'Add the apiserver audit log (audit.log) to the snapshot to see the callers.'}`.trim(),
        subject: { kind: 'Component', name: 'kube-apiserver' },
        field: '--anonymous-auth',
        artifacts: v14 ? [] : [KIT.healthProbe, KIT.controlPlanePatch],
      });
    }
    return out;
  },
};

// ---------------------------------------------------------------------------------------------
// extraArgs: carried over, or denied

type ComponentName = 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'etcd';

interface ComponentFlags {
  component: ComponentName;
  extra: Fact<Flag[]>;
  instances: readonly ComponentInstance[] | undefined;
  denied: readonly string[];
  /** Talos config path for extraArgs. */
  where: string;
}

function componentFlags(ctx: Parameters<Rule['check']>[0]): ComponentFlags[] {
  const f = ctx.facts;
  const v14 = isV114(ctx.target);
  return [
    {
      component: 'kube-apiserver',
      extra: f.apiserver.extraFlags,
      instances: f.apiserver.instances.value,
      denied: apiserverDeniedArgs(ctx.target.talos),
      where: v14 ? 'KubeAPIServerConfig.extraArgs' : 'cluster.apiServer.extraArgs',
    },
    {
      component: 'kube-controller-manager',
      extra: f.controllerManager.extraFlags,
      instances: f.controllerManager.instances.value,
      denied: CONTROLLER_MANAGER_DENIED_ARGS,
      where: v14 ? 'KubeControllerManagerConfig.extraArgs' : 'cluster.controllerManager.extraArgs',
    },
    {
      component: 'kube-scheduler',
      extra: f.scheduler.extraFlags,
      instances: f.scheduler.instances.value,
      denied: SCHEDULER_DENIED_ARGS,
      where: v14 ? 'KubeSchedulerConfig.extraArgs' : 'cluster.scheduler.extraArgs',
    },
    {
      component: 'etcd',
      extra: f.etcd.extraArgs,
      instances: f.etcd.instances.value,
      denied: ETCD_DENIED_ARGS,
      where: 'cluster.etcd.extraArgs',
    },
  ];
}

/** apiserver flags another rule owns (so a finding is never reported twice under two ids). */
function ownedElsewhere(component: ComponentName, name: string): string | undefined {
  if (component !== 'kube-apiserver') return undefined;
  if (name.startsWith('oidc-') || name === 'authentication-config') return 'apiserver.oidc';
  if (name === 'encryption-provider-config') return 'encryption.*';
  if (name === 'service-account-issuer' || name === 'api-audiences') return 'apiserver.sa-issuer';
  if (name === 'service-account-jwks-uri') return 'apiserver.sa-jwks-uri';
  if (name === 'anonymous-auth') return 'apiserver.anonymous-auth-dependents';
  if (name === 'service-account-key-file') return 'pki.sa-extra-verify-keys';
  return undefined;
}

/**
 * Denied flags whose non-default value carries no cluster behaviour: credentials and file locations
 * Talos provides itself (a kubeconfig path, where etcd keeps its certificates or data).
 */
const PLUMBING: Partial<Record<ComponentName, ReadonlySet<string>>> = {
  'kube-controller-manager': new Set(['authentication-kubeconfig', 'authorization-kubeconfig']),
  'kube-scheduler': new Set(['kubeconfig', 'authentication-kubeconfig', 'authorization-kubeconfig']),
  etcd: new Set([
    'name',
    'data-dir',
    'cert-file',
    'key-file',
    'trusted-ca-file',
    'peer-cert-file',
    'peer-key-file',
    'peer-trusted-ca-file',
  ]),
};

/** How the behaviour of a denied flag can be had on Talos, if at all. */
function deniedHint(component: ComponentName, name: string, t: Target): string {
  const v14 = isV114(t);
  if (component === 'kube-apiserver') {
    if (name === 'authorization-config')
      return v14
        ? 'express the authorizers as `KubeAuthorizerConfig` documents'
        : 'use `cluster.apiServer.authorizationConfig`';
    if (name === 'tls-min-version')
      return 'none: Talos v1.14 enforces TLS 1.3 on the apiserver (see apiserver.tls13-clients)';
    if (name === 'client-ca-file' || name === 'requestheader-client-ca-file')
      return v14
        ? 'list the extra client CAs in `KubeAPIServerCAConfig.acceptedCAs` / `KubeAggregatorCAConfig.acceptedCAs`'
        : 'list the extra client CAs in `cluster.acceptedCAs`';
    if (name.startsWith('etcd-'))
      return 'none: Talos apiservers talk only to their local etcd member (external etcd: see etcd.external)';
    return 'none: Talos issues and mounts these files itself from the imported CAs and keys';
  }
  if (component === 'kube-controller-manager')
    return 'none: Talos signs with the imported cluster CA and service-account key (see pki.intermediate-ca)';
  if (component === 'kube-scheduler' && name === 'config')
    return v14
      ? 'inline the KubeSchedulerConfiguration into `KubeSchedulerConfig.config`'
      : 'inline the KubeSchedulerConfiguration into `cluster.scheduler.config`';
  if (component === 'etcd' && name.startsWith('listen-'))
    return 'use `cluster.etcd.listenSubnets` / `advertisedSubnets`';
  return 'none: Talos sets it itself';
}

/** Equivalent to what Talos sets anyway: nothing is lost by dropping it. */
function sameAsTalos(component: ComponentName, f: Flag, t: Target): boolean {
  return (
    component === 'kube-apiserver' && f.name === 'tls-min-version' && isV114(t) && f.value === 'VersionTLS13'
  );
}

export const extraArgDenied: Rule = {
  id: 'apiserver.extra-arg-denied',
  family: 'apiserver',
  severity: 'blocker',
  title: 'A flag the cluster relies on is on the Talos deny-list',
  inputs: ['flags', 'target'],
  // kubeadm-config's extraArgs also show the flags; the rule needs one of the two.
  requires: [],
  description:
    'Talos rejects some extraArgs outright (`extra arg "X" is not allowed`, at render time; `talosctl validate` does not catch it). A cluster that depends on one of them with a non-default value needs a redesign.',
  docs: 'docs/rules.md#apiserver.extra-arg-denied',
  check(ctx) {
    const comps = componentFlags(ctx);
    if (comps.every((c) => c.extra.value === undefined))
      return skip(['flags', 'kubeadm'], `${HOW_TO_PROVIDE.flags}; or ${HOW_TO_PROVIDE.kubeadm}`);
    const out: RuleFinding[] = [];
    for (const c of comps) {
      const seen = new Set<string>();
      for (const f of c.extra.value ?? []) {
        if (seen.has(f.name) || !c.denied.includes(f.name)) continue;
        seen.add(f.name);
        if (
          ownedElsewhere(c.component, f.name) ||
          PLUMBING[c.component]?.has(f.name) ||
          sameAsTalos(c.component, f, ctx.target)
        )
          continue;
        out.push({
          message: `${c.component} runs with --${f.name}=${f.value}, which kubeadm does not set by default; Talos ${ctx.target.talosVersion} refuses it in ${c.where} ("extra arg \\"${f.name}\\" is not allowed") and sets its own value.`,
          evidence: [
            ...flagEvidence(ctx.snapshot, c.component, c.instances, f.name),
            targetEvidence(ctx.target, `${c.where} deny-list`, { note: `${f.name} is denied` }),
          ],
          remediation: `Redesign before migrating: ${deniedHint(c.component, f.name, ctx.target)}. Otherwise the migration is unsupported for this cluster.`,
          subject: { kind: 'Component', name: c.component },
          field: `--${f.name}`,
          artifacts: [],
        });
      }
    }
    return out;
  },
};

/** Talos-native homes for file-valued flags (an inline document instead of a host file). */
function nativeHome(name: string, v14: boolean): string | undefined {
  switch (name) {
    case 'audit-policy-file':
      return v14 ? '`KubeAuditPolicyConfig`' : '`cluster.apiServer.auditPolicy`';
    case 'admission-control-config-file':
      return v14 ? '`KubeAdmissionControlConfig`' : '`cluster.apiServer.admissionControl`';
    default:
      return undefined;
  }
}

export const extraArgsCarryover: Rule = {
  id: 'apiserver.extra-args-carryover',
  family: 'apiserver',
  severity: 'risk',
  title: 'Control-plane flags Talos defaults would silently drop',
  inputs: ['flags', 'kubeadm'],
  requires: [],
  description:
    'Talos renders its own kube-apiserver, kube-controller-manager and kube-scheduler command lines; flags kubeadm clusters added (audit, feature gates, admission, bind addresses…) are gone unless carried in extraArgs, and host-file flags need the file on Talos.',
  docs: 'docs/rules.md#apiserver.extra-args-carryover',
  artifacts: [KIT.controlPlanePatch],
  check(ctx) {
    const comps = componentFlags(ctx).filter((c) => c.component !== 'etcd'); // etcd.extra-args owns etcd
    if (comps.every((c) => c.extra.value === undefined))
      return skip(['flags', 'kubeadm'], `${HOW_TO_PROVIDE.flags}; or ${HOW_TO_PROVIDE.kubeadm}`);
    const v14 = isV114(ctx.target);
    const minor = talosMinor(ctx.target);
    const out: RuleFinding[] = [];
    for (const c of comps) {
      const flags = (c.extra.value ?? []).filter(
        (f) => !ownedElsewhere(c.component, f.name) && !c.denied.includes(f.name),
      );
      if (flags.length === 0) continue;
      const names = [...new Set(flags.map((f) => f.name))];
      const additive: readonly string[] =
        c.component === 'kube-apiserver'
          ? ADDITIVE_EXTRA_ARGS.apiserver
          : c.component === 'kube-controller-manager'
            ? ADDITIVE_EXTRA_ARGS.controllerManager
            : [];
      const files = flags.filter((f) => f.value.startsWith('/'));
      const merged = names.filter((n) => additive.includes(n));
      const evidence = names.flatMap((n) => {
        const notes = [
          additive.includes(n) ? 'Talos merges this flag with its own value' : '',
          files.some((f) => f.name === n) ? 'names a host file' : '',
        ].filter(Boolean);
        return flagEvidence(
          ctx.snapshot,
          c.component,
          c.instances,
          n,
          notes.length ? { note: notes.join('; ') } : {},
        );
      });
      const parts = [
        `${c.component} runs ${plural(names.length, 'flag')} kubeadm does not set (${flags.map((f) => `--${f.name}=${f.value}`).join(' ')}); Talos replaces its command line and drops them unless they are carried in ${c.where}.`,
      ];
      if (files.length > 0)
        parts.push(
          `${files.map((f) => `--${f.name}`).join(', ')} name host files that must also exist on Talos nodes.`,
        );
      if (c.extra.conflict) parts.push(`The control planes disagree: ${c.extra.conflict.reason}.`);
      const fileFix = v14
        ? 'The v1.14 schema has no extraVolumes: prefer inline documents'
        : 'Host files need `cluster.apiServer.extraVolumes` plus `machine.files` (which can only create files under /var), or an inline document';
      const natives = files
        .map((f) => [f.name, nativeHome(f.name, v14)] as const)
        .filter((x): x is readonly [string, string] => x[1] !== undefined)
        .map(([n, home]) => `--${n} → ${home}`);
      const remediation = [
        `Carry each flag you keep into ${c.where} (${minor >= 13 ? 'a repeated flag may be a list' : '≤v1.12 values are strings only: one value per flag'}) and list the ones you drop in the migration record.`,
        merged.length > 0
          ? `${merged.map((n) => `--${n}`).join(', ')} merge with Talos's own value instead of replacing it.`
          : '',
        files.length > 0 ? `${fileFix}${natives.length ? ` (${natives.join('; ')})` : ''}.` : '',
      ]
        .filter(Boolean)
        .join(' ');
      out.push({
        message: parts.join(' '),
        evidence,
        remediation,
        subject: { kind: 'Component', name: c.component },
        field: 'extraArgs',
        artifacts: [KIT.controlPlanePatch],
      });
    }
    return out;
  },
};

// ---------------------------------------------------------------------------------------------
// OIDC

export const oidc: Rule = {
  id: 'apiserver.oidc',
  family: 'apiserver',
  severity: 'risk',
  title: 'OIDC / structured authentication must be carried to Talos',
  inputs: ['flags'],
  description:
    'User logins through OIDC break on Talos apiservers unless the --oidc-* flags (or --authentication-config) are carried over; on v1.14 they must become jwt authenticators of KubeAuthenticationConfig.',
  docs: 'docs/rules.md#apiserver.oidc',
  artifacts: [KIT.controlPlanePatch],
  check(ctx) {
    const fact = ctx.facts.apiserver.oidc;
    if (fact.value === undefined) return skip(['flags'], fact.missing ?? HOW_TO_PROVIDE.flags);
    if (fact.value.length === 0) return [];
    const v14 = isV114(ctx.target);
    const names = [...new Set(fact.value.map((f) => f.name))];
    const caFile = fact.value.find((f) => f.name === 'oidc-ca-file');
    const authConfig = fact.value.find((f) => f.name === 'authentication-config');
    const remediation = v14
      ? `Talos v1.14 generates \`KubeAuthenticationConfig\` (--authentication-config, which it then denies as an extraArg, and kube-apiserver does not take --oidc-* together with it): express ${authConfig ? `the AuthenticationConfiguration in ${authConfig.value}` : 'the --oidc-* settings'} as \`jwt\` authenticators in that document${caFile ? `, with the CA from ${caFile.value} inline (certificateAuthority)` : ''}.`
      : `Carry ${names.map((n) => `--${n}`).join(', ')} into \`cluster.apiServer.extraArgs\`${caFile ? `; ${caFile.value} must exist on Talos nodes (\`cluster.apiServer.extraVolumes\` + \`machine.files\` under /var)` : ''}${authConfig ? `; the file ${authConfig.value} likewise` : ''}.`;
    return [
      {
        message: `kube-apiserver authenticates users with ${names.map((n) => `--${n}`).join(', ')} (${
          fact.value
            .filter((f) => f.name === 'oidc-issuer-url')
            .map((f) => f.value)
            .join(', ') ||
          authConfig?.value ||
          'OIDC'
        }); Talos apiservers know nothing of it, so user logins fail whenever the endpoint sends a request to them.`,
        evidence: names.flatMap((n) =>
          flagEvidence(ctx.snapshot, 'kube-apiserver', ctx.facts.apiserver.instances.value, n),
        ),
        remediation,
        subject: { kind: 'Component', name: 'kube-apiserver' },
        field: 'oidc',
        artifacts: [KIT.controlPlanePatch],
      },
    ];
  },
};

// ---------------------------------------------------------------------------------------------
// PodSecurity

const ENFORCE_LABEL = 'pod-security.kubernetes.io/enforce';

function workloadRef(w: Workload): ObjectRef & { apiVersion: string; namespace: string } {
  return {
    apiVersion: w.object.apiVersion,
    kind: w.object.kind,
    namespace: w.namespace,
    name: w.object.metadata.name,
    ...(w.object.metadata.uid ? { uid: w.object.metadata.uid } : {}),
  };
}

function templateAnnotations(w: Workload): {
  annotations: Record<string, string> | undefined;
  metaPath: string;
} {
  if (w.kind === 'Pod') return { annotations: w.object.metadata.annotations, metaPath: 'metadata' };
  const metaPath = w.specPath.replace(/\.spec$/, '.metadata');
  let cur: unknown = w.object;
  for (const k of metaPath.split('.')) cur = (cur as Record<string, unknown> | undefined)?.[k];
  const annotations = (cur as { annotations?: Record<string, string> } | undefined)?.annotations;
  return { annotations, metaPath };
}

export const podSecurityDefault: Rule = {
  id: 'apiserver.podsecurity-default',
  family: 'apiserver',
  severity: 'blocker',
  title: 'Workloads violate the PodSecurity baseline Talos enforces cluster-wide',
  inputs: ['api', 'target'],
  description:
    'Talos-generated configs enforce PodSecurity "baseline" in every namespace but kube-system. Once a Talos apiserver admits a pod (a Talos KCM leading, or the endpoint sending a request there), pods that violate baseline in unlabelled namespaces are rejected.',
  docs: 'docs/rules.md#apiserver.podsecurity-default',
  artifacts: [KIT.controlPlanePatch],
  check(ctx) {
    const exempt = new Set<string>(TALOS_POD_SECURITY.exemptNamespaces);
    const v14 = isV114(ctx.target);
    const fixCluster = v14
      ? "replicate the cluster's admission configuration in `KubeAdmissionControlConfig` (e.g. PodSecurity defaults enforce: privileged)"
      : "replicate the cluster's admission configuration in `cluster.apiServer.admissionControl` (e.g. PodSecurity defaults enforce: privileged)";
    const out: RuleFinding[] = [];
    const unlabelled = new Set<string>();
    for (const w of ctx.index.workloads()) {
      if (exempt.has(w.namespace)) continue;
      if (w.kind === 'Pod' && w.object.metadata.annotations?.['kubernetes.io/config.mirror'] !== undefined)
        continue;
      const ns = ctx.index.namespacesByName.get(w.namespace);
      const level = ns?.metadata.labels?.[ENFORCE_LABEL];
      if (level !== undefined) continue; // the namespace decides for itself, on both sides
      unlabelled.add(w.namespace);
      const { annotations, metaPath } = templateAnnotations(w);
      const violations = baselineViolations(w.podSpec, w.specPath, annotations, metaPath);
      if (violations.length === 0) continue;
      const ref = workloadRef(w);
      out.push({
        message: `${w.kind} ${w.namespace}/${ref.name} violates PodSecurity "baseline" (${[...new Set(violations.map((v) => v.control))].join(', ')}) in namespace ${w.namespace}, which has no ${ENFORCE_LABEL} label: Talos apiservers reject its pods ("violates PodSecurity \\"baseline:latest\\"").`,
        evidence: [
          ...violations.map(
            (v): Evidence => ({
              kind: 'object',
              object: ref,
              field: v.field,
              observed: v.observed,
              note: `baseline control: ${v.control}`,
            }),
          ),
          {
            kind: 'object',
            object: { apiVersion: 'v1', kind: 'Namespace', name: w.namespace },
            field: `metadata.labels[${ENFORCE_LABEL}]`,
            observed: ns ? '(absent)' : '(namespace not in the snapshot)',
            expected: 'privileged, or a workload that meets baseline',
          },
        ],
        remediation: `Label namespace ${w.namespace} with ${ENFORCE_LABEL}=privileged (\`kubectl label ns ${w.namespace} ${ENFORCE_LABEL}=privileged\`) if the workload needs these rights, or change the workload to meet baseline; or ${fixCluster}.`,
        subject: {
          kind: ref.kind,
          namespace: ref.namespace,
          name: ref.name,
          group: ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0]! : '',
          ...(ref.uid ? { uid: ref.uid } : {}),
          ...(w.object.metadata.labels ? { labels: w.object.metadata.labels } : {}),
        },
        field: w.specPath,
        artifacts: [KIT.controlPlanePatch],
      });
    }
    const psa = ctx.facts.apiserver.podSecurityDefaults;
    const admission = ctx.facts.apiserver.admission;
    const configFile = admission.value?.configFile ?? null;
    const defaults = psa.value;
    const differs = defaults
      ? defaults.mode === 'disabled' || defaults.enforce !== 'baseline'
      : configFile !== null;
    if (differs && unlabelled.size > 0) {
      const current = defaults
        ? defaults.mode === 'disabled'
          ? 'PodSecurity is disabled'
          : `PodSecurity enforces "${defaults.enforce}" by default`
        : `PodSecurity defaults come from ${configFile} (not in the snapshot)`;
      const list = [...unlabelled].sort();
      out.push({
        severity: 'risk',
        message: `On the kubeadm apiservers ${current}; Talos enforces "${TALOS_POD_SECURITY.enforce}" (exempt: ${[...exempt].join(', ')}). ${out.length === 0 ? 'No current workload violates baseline, but' : 'Besides the workloads reported,'} new pods in the ${plural(list.length, 'unlabelled namespace')} (${list.slice(0, 10).join(', ')}${list.length > 10 ? ', …' : ''}) will be judged by the stricter default.`,
        evidence: [
          ...(defaults
            ? factEvidence(psa, { observed: current })
            : factEvidence(admission, { observed: `--admission-control-config-file=${configFile}` })),
          targetEvidence(ctx.target, 'podSecurity.enforce', {
            observed: TALOS_POD_SECURITY.enforce,
            note: 'generated Talos config',
          }),
        ],
        remediation: `Decide explicitly: ${fixCluster}; or label the namespaces with ${ENFORCE_LABEL}.`,
        subject: { kind: 'Cluster', name: 'pod-security-defaults' },
        field: 'enforce',
        artifacts: [KIT.controlPlanePatch],
      });
    }
    return out;
  },
};

// ---------------------------------------------------------------------------------------------
// TLS 1.3

export const tls13Clients: Rule = {
  id: 'apiserver.tls13-clients',
  family: 'apiserver',
  severity: 'risk',
  title: 'Talos components accept TLS 1.3 only',
  inputs: ['target', 'audit'],
  // The audit log only adds hints (who calls anonymously); the target decides.
  requires: [],
  description:
    'Talos runs kubelet, kube-controller-manager and kube-scheduler with TLS 1.3 minimum (v1.13.9), and from v1.14 kube-apiserver and etcd too (not overridable for the apiserver): TLS 1.2-only clients (old LB checks, client libraries, scrapers) fail the handshake.',
  docs: 'docs/rules.md#apiserver.tls13-clients',
  check(ctx) {
    const v14 = isV114(ctx.target);
    const evidence: Evidence[] = [
      targetEvidence(ctx.target, 'talosVersion', {
        note: v14
          ? 'kube-apiserver, etcd, kubelet, KCM and scheduler: TLS 1.3 minimum'
          : 'kubelet :10250, KCM :10257, scheduler :10259: TLS 1.3 minimum',
      }),
    ];
    const instances = ctx.facts.apiserver.instances.value ?? [];
    const apiserverTls13 =
      instances.length > 0 &&
      instances.every((i) => i.flags.some((f) => f.name === 'tls-min-version' && f.value === 'VersionTLS13'));
    const kubelet = ctx.snapshot.kubelet;
    const kubeletTls = kubelet ? kubelet.spec['tlsMinVersion'] : undefined;
    const kubeletTls13 = kubeletTls === 'VersionTLS13';
    if (kubelet)
      evidence.push(
        evidenceFromSource(atField(kubelet.source, 'tlsMinVersion'), {
          observed: typeof kubeletTls === 'string' ? kubeletTls : '(unset: TLS 1.2 accepted)',
          expected: 'VersionTLS13 on Talos',
        }),
      );
    if (v14)
      evidence.push(
        ...flagEvidence(ctx.snapshot, 'kube-apiserver', instances, 'tls-min-version', {
          expected: 'VersionTLS13 on Talos v1.14',
        }),
      );
    // Nothing changes for clients that already negotiate TLS 1.3 everywhere.
    if (kubeletTls13 && (!v14 || apiserverTls13)) return [];
    for (const a of ctx.snapshot.auditLog?.anonymous ?? []) {
      if (!a.userAgent || a.userAgent.startsWith('kube-probe/')) continue;
      evidence.push({
        kind: 'file',
        path: ctx.snapshot.auditLog?.source.kind === 'file' ? ctx.snapshot.auditLog.source.path : 'audit.log',
        field: `userAgent=${a.userAgent}`,
        observed: `${a.path} from ${a.sourceIPs.join(', ') || '?'}`,
        note: 'a client to check for TLS 1.3 support',
      });
    }
    const what = v14
      ? 'kube-apiserver and etcd (v1.14, not overridable for the apiserver) as well as the kubelet (:10250), kube-controller-manager and kube-scheduler'
      : 'the kubelet (:10250), kube-controller-manager (:10257) and kube-scheduler (:10259)';
    return [
      {
        message: `On Talos ${ctx.target.talosVersion}, ${what} accept TLS 1.3 only; the kubeadm side accepts TLS 1.2. Clients limited to TLS 1.2 (old load-balancer health checks, metrics scrapers of the kubelet, old client libraries) fail the handshake against Talos nodes.`,
        evidence,
        remediation:
          'Inventory the clients of these endpoints (LB health checks, Prometheus scrape jobs, backup and monitoring agents) and upgrade any that cannot speak TLS 1.3 before the first Talos node serves; test one with `openssl s_client -tls1_3 -connect HOST:PORT`.',
        subject: { kind: 'Target', name: 'tls' },
        field: 'tls-min-version',
        artifacts: [],
      },
    ];
  },
};

// ---------------------------------------------------------------------------------------------
// default/kubernetes

export const coexistenceEndpoints: Rule = {
  id: 'apiserver.coexistence-endpoints',
  family: 'apiserver',
  severity: 'info',
  title: 'Talos apiservers join default/kubernetes as soon as they run',
  inputs: ['api'],
  description:
    'Every apiserver adds itself to the default/kubernetes endpoints; in-cluster clients reach a Talos apiserver the moment it starts, so issuer, encryption and PodSecurity must already agree.',
  docs: 'docs/rules.md#apiserver.coexistence-endpoints',
  check(ctx) {
    const slices = ctx.snapshot.resources.endpointslices.filter(
      (s) =>
        (s.metadata.namespace ?? 'default') === 'default' &&
        s.metadata.labels?.['kubernetes.io/service-name'] === 'kubernetes',
    );
    const addresses = slices.flatMap((s) =>
      Array.isArray(s['endpoints'])
        ? (s['endpoints'] as { addresses?: string[] }[]).flatMap((e) => e.addresses ?? [])
        : [],
    );
    const evidence: Evidence[] = slices.map((s) => ({
      kind: 'object',
      object: {
        apiVersion: s.apiVersion,
        kind: 'EndpointSlice',
        namespace: 'default',
        name: s.metadata.name,
        ...(s.metadata.uid ? { uid: s.metadata.uid } : {}),
      },
      field: 'endpoints[*].addresses',
      observed: addresses.join(', ') || '(none)',
    }));
    if (evidence.length === 0) {
      const svc = ctx.index.servicesByNamespace.get('default')?.find((s) => s.metadata.name === 'kubernetes');
      evidence.push({
        kind: 'object',
        object: { apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 'kubernetes' },
        field: 'spec.clusterIP',
        observed: svc ? String(svc.spec?.clusterIP ?? '?') : '(not in the snapshot)',
        note: 'no default/kubernetes EndpointSlice in the snapshot',
      });
    }
    return [
      {
        message: `default/kubernetes lists ${addresses.length ? `${plural(addresses.length, 'kubeadm apiserver')} (${addresses.join(', ')})` : 'the kubeadm apiservers'}; each Talos apiserver adds itself when it starts, so in-cluster clients reach it at once. The service-account issuer (apiserver.sa-issuer), encryption at rest (encryption.*) and PodSecurity (apiserver.podsecurity-default) must be settled before the first Talos control plane.`,
        evidence,
        remediation:
          'Fix the issuer, encryption and PodSecurity findings before the first Talos control plane. If Talos apiservers must stay out of default/kubernetes for a while, `endpoint-reconciler-type: none` on them does that, and it must be removed before the last kubeadm control plane goes.',
        subject: {
          kind: 'EndpointSlice',
          namespace: 'default',
          name: 'kubernetes',
          group: 'discovery.k8s.io',
        },
        field: 'endpoints',
        artifacts: [],
      },
    ];
  },
};

export const APISERVER_RULES: Rule[] = [
  sanLoopback,
  sanEndpoint,
  saIssuer,
  saJwksUri,
  anonymousAuthDependents,
  extraArgsCarryover,
  extraArgDenied,
  oidc,
  podSecurityDefault,
  tls13Clients,
  coexistenceEndpoints,
];
