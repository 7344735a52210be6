/**
 * Anonymous authentication (apiserver.anonymous-auth-dependents): who calls the apiserver without
 * credentials, told apart as load-balancer health checks or other clients, and anonymous bindings.
 */

import { lastFlag } from '../../../snapshot/flags.js';
import type { AnonymousAccess, Flag, KubeObject, Snapshot } from '../../../snapshot/model.js';
import { canonicalIp, cidrContains } from '../../../util/ip.js';
import type { Evidence } from '../../findings.js';
import { type KitCheck, patchChecks } from '../../kit-checks.js';
import { HOW_TO_PROVIDE, type Rule, type RuleFinding, skip } from '../../rule.js';
import { CILIUM_CONFIG } from '../../rule-reads.js';
import { KIT } from '../kit-paths.js';
import { factEvidence, isV114, plural } from './evidence.js';

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

/**
 * Which kubeadm apiservers accept anonymous requests, as their flags say: all of those seen, or
 * the ones without --anonymous-auth=false when the control planes differ.
 */
function whoAllowsAnonymous(ctx: Parameters<Rule['check']>[0]): string {
  const instances = ctx.facts.apiserver.instances.value ?? [];
  const allows = (flags: Flag[]) => lastFlag(flags, 'anonymous-auth') !== 'false';
  const allowing = instances.filter((i) => allows(i.flags));
  const refusing = instances.filter((i) => !allows(i.flags));
  const nodes = (is: typeof instances) => is.map((i) => i.node ?? '(node unknown)').join(', ');
  if (refusing.length === 0)
    return `The kubeadm apiservers (${plural(instances.length, 'instance')} seen) accept anonymous requests`;
  return `kube-apiserver on ${nodes(allowing)} accepts anonymous requests (on ${nodes(refusing)} it runs with --anonymous-auth=false)`;
}

export const anonymousAuthDependents: Rule = {
  id: 'apiserver.anonymous-auth-dependents',
  family: 'apiserver',
  severity: 'risk',
  title: 'Clients depend on anonymous access that Talos apiservers refuse',
  inputs: ['flags', 'audit', 'node'],
  reads: ['nodes', 'anonymousBindings', CILIUM_CONFIG],
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
      ? 'point HTTP checks at /readyz, /livez or /healthz (the generated `KubeAuthenticationConfig` allows them), or allow anonymous requests on every path (`anonymous.enabled: true` without conditions, as ferry generate writes it when the kubeadm apiservers allow them)'
      : `switch the load balancer to TCP checks or to an authenticated check (the kit's ${KIT.healthProbe} creates a token that may read only the health paths), or set extraArgs \`anonymous-auth: "true"\` in the Talos config (overridable, ≤v1.13)`;
    // The kit keeps anonymous requests allowed as kubeadm has them: ≤v1.13 by the flag, v1.14 by
    // an authentication configuration allowing them on every path (no conditions).
    const kitChecks: KitCheck[] = v14
      ? [
          ...patchChecks(
            [KIT.controlPlanePatch],
            { doc: 'KubeAuthenticationConfig', path: ['configuration', 'anonymous', 'enabled'] },
            { op: 'equals', value: true },
          ),
          ...patchChecks(
            [KIT.controlPlanePatch],
            { doc: 'KubeAuthenticationConfig', path: ['configuration', 'anonymous', 'conditions'] },
            { op: 'absent' },
          ),
        ]
      : patchChecks(
          [KIT.controlPlanePatch],
          { path: ['cluster', 'apiServer', 'extraArgs', 'anonymous-auth'] },
          { op: 'equals', value: 'true' },
        );
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
          : `Give this client credentials (a ServiceAccount token) or stop it calling ${a.path}; ${v14 ? 'Talos v1.14 cannot allow anonymous access beyond the health paths without replacing KubeAuthenticationConfig (`anonymous.enabled: true` without conditions, as ferry generate writes it when the kubeadm apiservers allow anonymous requests)' : 'or set extraArgs `anonymous-auth: "true"` in the Talos config (≤v1.13)'}.`,
        subject: { kind: 'AnonymousClient', name: `${a.userAgent ?? 'unknown'} ${a.path}` },
        field: 'anonymous',
        // ≤v1.13: the control-plane patch keeps anonymous-auth as kubeadm has it; the probe token serves LB checks.
        artifacts: !v14 && lb ? [KIT.healthProbe, KIT.controlPlanePatch] : [KIT.controlPlanePatch],
        kitChecks,
      });
    }
    const custom = customAnonymousBindings(ctx.snapshot);
    if (!log || (custom.length > 0 && out.length === 0)) {
      out.push({
        message: `${whoAllowsAnonymous(ctx)}${custom.length ? `, and ${plural(custom.length, 'binding')} grant anonymous users access (${custom.map((b) => b.metadata.name).join(', ')})` : ''}; ${talosPolicy}. ${log ? `The audit log in the snapshot (${plural(log.events, 'event')}) shows no anonymous caller Talos apiservers would refuse; callers outside the time it covers are not seen.` : 'Without the audit log ferry cannot see who depends on it; load-balancer HTTP checks are the usual callers.'}`,
        evidence: [
          ...factEvidence(anon, { observed: 'anonymous requests allowed' }),
          ...custom.map(bindingEvidence),
        ],
        remediation:
          `Check the load balancer's health checks (haproxy \`option httpchk\`, keepalived scripts) and other unauthenticated callers; ${fixLb}. ${log ? '' : 'Add the apiserver audit log (audit.log) to the snapshot to see the callers.'}`.trim(),
        subject: { kind: 'Component', name: 'kube-apiserver' },
        field: '--anonymous-auth',
        artifacts: v14 ? [KIT.controlPlanePatch] : [KIT.healthProbe, KIT.controlPlanePatch],
        kitChecks,
      });
    }
    return out;
  },
};
