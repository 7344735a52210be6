/**
 * What clients see once Talos apiservers serve: TLS 1.3 only (apiserver.tls13-clients), and Talos
 * apiservers joining default/kubernetes as soon as they run (apiserver.coexistence-endpoints).
 */

import { atField } from '../../../facts/sources.js';
import { lastFlag } from '../../../snapshot/flags.js';
import { canonicalIp } from '../../../util/ip.js';
import { type Evidence, evidenceFromSource } from '../../findings.js';
import type { AuditContext, Rule } from '../../rule.js';
import { flagEvidence, isV114, plural, targetEvidence } from './evidence.js';

// ---------------------------------------------------------------------------------------------
// TLS 1.3

/** What the snapshot shows of the kubeadm components' TLS minimum: set values, unset flags, or nothing seen. */
function kubeadmTlsSeen(ctx: AuditContext, v14: boolean): string[] {
  const out: string[] = [];
  const kubelet = ctx.snapshot.kubelet;
  const tls = kubelet?.spec['tlsMinVersion'];
  if (!kubelet) out.push('the KubeletConfiguration is not in the snapshot');
  else if (tls !== 'VersionTLS13')
    out.push(
      `the kubelets run with tlsMinVersion ${typeof tls === 'string' ? tls : 'unset (TLS 1.2 accepted)'}`,
    );
  const components = [
    ['kube-controller-manager', ctx.facts.controllerManager.instances.value],
    ['kube-scheduler', ctx.facts.scheduler.instances.value],
    ...(v14 ? ([['kube-apiserver', ctx.facts.apiserver.instances.value]] as const) : []),
  ] as const;
  for (const [name, instances] of components) {
    if (!instances || instances.length === 0) {
      out.push(`no ${name} manifest is in the snapshot`);
      continue;
    }
    const below = instances.filter((i) => lastFlag(i.flags, 'tls-min-version') !== 'VersionTLS13');
    if (below.length === 0) continue;
    const values = [...new Set(below.map((i) => lastFlag(i.flags, 'tls-min-version')))];
    const shown = values.map((v) =>
      v === undefined ? 'no --tls-min-version (TLS 1.2 accepted)' : `--tls-min-version=${v}`,
    );
    const where =
      below.length === instances.length
        ? ''
        : ` on ${below.map((i) => i.node ?? '(node unknown)').join(', ')}`;
    out.push(`${name} runs with ${shown.join(' or ')}${where}`);
  }
  return out;
}

export const tls13Clients: Rule = {
  id: 'apiserver.tls13-clients',
  family: 'apiserver',
  severity: 'risk',
  title: 'Talos components accept TLS 1.3 only',
  inputs: ['target', 'audit'],
  reads: [],
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
        message: `On Talos ${ctx.target.talosVersion}, ${what} accept TLS 1.3 only. On the kubeadm side ${kubeadmTlsSeen(ctx, v14).join('; ')}. Clients limited to TLS 1.2 (old load-balancer health checks, metrics scrapers of the kubelet, old client libraries) fail the handshake against Talos nodes.`,
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

/** An address listed in default/kubernetes, with the control plane it belongs to when ferry knows it. */
function endpointLabel(address: string, nodes: ReadonlyMap<string, string>, ready: boolean): string {
  const node = nodes.get(canonicalIp(address));
  return `${address}${node ? ` (${node})` : ''}${ready ? '' : ' (not ready)'}`;
}

/** Control-plane node by each address it advertises or has (Node status), canonical IPs. */
function controlPlaneByAddress(ctx: AuditContext): Map<string, string> {
  const out = new Map<string, string>();
  for (const n of ctx.facts.nodes.controlPlane.value ?? []) {
    for (const a of n.addresses) out.set(canonicalIp(a.address), n.name);
    if (n.advertiseAddress) out.set(canonicalIp(n.advertiseAddress.address), n.name);
  }
  return out;
}

export const coexistenceEndpoints: Rule = {
  id: 'apiserver.coexistence-endpoints',
  family: 'apiserver',
  severity: 'info',
  title: 'Talos apiservers join default/kubernetes as soon as they run',
  inputs: ['api'],
  reads: ['endpointslices', 'services', 'nodes'],
  description:
    'Every apiserver adds itself to the default/kubernetes endpoints; in-cluster clients reach a Talos apiserver the moment it starts, so issuer, encryption and PodSecurity must already agree.',
  docs: 'docs/rules.md#apiserver.coexistence-endpoints',
  check(ctx) {
    const slices = ctx.snapshot.resources.endpointslices.filter(
      (s) =>
        (s.metadata.namespace ?? 'default') === 'default' &&
        s.metadata.labels?.['kubernetes.io/service-name'] === 'kubernetes',
    );
    const endpoints = slices.flatMap((s) =>
      Array.isArray(s['endpoints'])
        ? (s['endpoints'] as { addresses?: string[]; conditions?: { ready?: boolean } }[]).flatMap((e) =>
            (e.addresses ?? []).map((address) => ({ address, ready: e.conditions?.ready !== false })),
          )
        : [],
    );
    const nodes = controlPlaneByAddress(ctx);
    const labels = endpoints.map((e) => endpointLabel(e.address, nodes, e.ready));
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
      observed: endpoints.map((e) => e.address).join(', ') || '(none)',
    }));
    // Say what the snapshot shows, and no more: an address list, an empty one, or nothing to read.
    let seen: string;
    if (slices.length > 0) {
      const names = slices.map((s) => `default/${s.metadata.name}`).join(', ');
      seen =
        endpoints.length > 0
          ? `EndpointSlice ${names} of Service default/kubernetes lists ${plural(endpoints.length, 'address', 'addresses')} (${labels.join(', ')})`
          : `EndpointSlice ${names} of Service default/kubernetes lists no endpoints: no apiserver was registered in it when the snapshot was taken`;
    } else {
      const svc = ctx.index.servicesByNamespace.get('default')?.find((s) => s.metadata.name === 'kubernetes');
      evidence.push({
        kind: 'object',
        object: { apiVersion: 'v1', kind: 'Service', namespace: 'default', name: 'kubernetes' },
        field: 'spec.clusterIP',
        observed: svc ? String(svc.spec?.clusterIP ?? '?') : '(not in the snapshot)',
        note: 'no default/kubernetes EndpointSlice in the snapshot',
      });
      seen = svc
        ? `Service default/kubernetes is in the snapshot but no EndpointSlice or Endpoints of it is, so which apiservers it lists could not be checked`
        : 'Neither Service default/kubernetes nor an EndpointSlice or Endpoints of it is in the snapshot, so which apiservers it lists could not be checked';
    }
    return [
      {
        message: `${seen}. Each Talos apiserver adds itself to default/kubernetes when it starts, so in-cluster clients reach it at once. The service-account issuer (apiserver.sa-issuer), encryption at rest (encryption.*) and PodSecurity (apiserver.podsecurity-default) must be settled before the first Talos control plane.`,
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
