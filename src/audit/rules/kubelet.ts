/**
 * The `kubelet` family (blockers.md "Kubelet and nodes"): kubelet settings, pod sysctls and static
 * pods that a Talos node would not reproduce by itself. Talos applies its own kubelet defaults
 * (talos.md §4.4) and has no manifests directory; what the cluster relies on must be carried into
 * the machine config explicitly.
 */

import type { Fact } from '../../facts/model.js';
import { KUBELET_DENIED_ARGS, type TalosRelease } from '../../knowledge/talos.js';
import { KUBELET_PER_NODE_FLAGS } from '../../knowledge/talos-config.js';
import type { ComponentConfig, Flag, KubeObject, SourceRef, StaticPod } from '../../snapshot/model.js';
import { type Evidence, evidenceFromSource } from '../findings.js';
import { patchChecks } from '../kit-checks.js';
import { type AuditContext, HOW_TO_PROVIDE, type Rule, type RuleFinding, skip } from '../rule.js';
import { KUBELET_CONFIG } from '../rule-reads.js';
import { BOTH_PATCHES } from './kit-paths.js';
import { describeObj, isRecord, listSome, objectEvidence, templatesOf } from './workload-pods.js';

const DOCS = (id: string) => `docs/rules.md#${id}`;

function isV114(release: TalosRelease): boolean {
  return release.configFormat === 'multidoc';
}

/** Where kubelet settings go in the target's machine config (talos.md §3.2). */
function kubeletConfigField(release: TalosRelease): string {
  return isV114(release) ? 'KubeletConfig.config' : 'machine.kubelet.extraConfig';
}
function kubeletArgsField(release: TalosRelease): string {
  return isV114(release) ? 'KubeletConfig.extraArgs' : 'machine.kubelet.extraArgs';
}

// ---------------------------------------------------------------------------------------------
// kubelet.config-carryover

/**
 * What a Talos kubelet runs with when nothing is carried: Talos's own KubeletConfiguration values
 * (talos.md §4.4) over the kubelet's built-in defaults. Compared value by value so that a setting
 * equal to what Talos would use anyway is not reported.
 */
export const TALOS_KUBELET_EFFECTIVE: Record<string, { value: unknown; note: string }> = {
  maxPods: { value: 110, note: 'kubelet default' },
  evictionHard: {
    value: {
      'memory.available': '100Mi',
      'nodefs.available': '10%',
      'imagefs.available': '15%',
      'nodefs.inodesFree': '5%',
    },
    note: 'kubelet default',
  },
  systemReserved: {
    value: {
      cpu: '50m',
      pid: '100',
      'ephemeral-storage': '256Mi',
      memory: '512Mi (control plane) / 384Mi (worker)',
    },
    note: 'Talos default',
  },
  kubeReserved: { value: {}, note: 'kubelet default' },
  featureGates: { value: {}, note: 'kubelet default' },
  allowedUnsafeSysctls: { value: [], note: 'kubelet default' },
  serverTLSBootstrap: { value: false, note: 'kubelet default' },
  shutdownGracePeriod: { value: '30s', note: 'Talos default' },
  shutdownGracePeriodCriticalPods: { value: '10s', note: 'Talos default' },
  serializeImagePulls: { value: false, note: 'Talos default' },
  failSwapOn: { value: false, note: 'Talos default' },
  streamingConnectionIdleTimeout: { value: '5m', note: 'Talos default' },
  tlsMinVersion: { value: 'VersionTLS13', note: 'Talos default' },
  imageGCHighThresholdPercent: { value: 85, note: 'kubelet default' },
  imageGCLowThresholdPercent: { value: 80, note: 'kubelet default' },
};

/**
 * Keys not carried, and why: Talos sets them itself (some are protected, talos.md §4.4), other
 * rules own them, or kubeadm writes them as boilerplate.
 */
export const KUBELET_KEYS_NOT_CARRIED: Record<string, string> = {
  apiVersion: 'document header',
  kind: 'document header',
  authentication: 'protected: Talos sets webhook authentication (see the protected-settings finding)',
  authorization: 'protected: Talos sets webhook authorization (see the protected-settings finding)',
  clusterDNS: 'checked by network.kube-dns-ip',
  clusterDomain: 'checked by network.dns-domain-mismatch',
  cgroupDriver: "Talos configures the kubelet for its own containerd's cgroup driver",
  containerRuntimeEndpoint: 'Talos points the kubelet at its own containerd',
  staticPodPath: 'protected; static pods are checked by kubelet.static-pods',
  healthzBindAddress: 'kubelet default',
  healthzPort: 'kubelet default',
  logging: 'Talos configures kubelet logging (JSON)',
  resolvConf: 'protected: Talos uses its own resolver file',
  rotateCertificates: 'protected: Talos always rotates client certificates',
  port: 'protected',
  cgroupRoot: 'protected',
  kubeletCgroups: 'protected',
  systemCgroups: 'protected',
  protectKernelDefaults: 'protected: Talos sets true and tunes the kernel itself',
  seccompDefault: 'protected (see the seccompDefault finding)',
  tlsCertFile: 'Talos manages kubelet serving certificates',
  tlsPrivateKeyFile: 'Talos manages kubelet serving certificates',
  volumePluginDir: 'checked by workload.flexvolume',
  staticPodURL: 'Talos serves static pods itself',
};

/** kubeadm writes "0s", 0 and {} for settings it leaves at the kubelet default. */
function isUnset(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === 0 || v === '0s') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isRecord(v)) return Object.keys(v).length === 0;
  return false;
}

/** Go duration → seconds ("1m30s" → 90), undefined when not a duration. */
export function durationSeconds(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s)/g;
  let total = 0;
  let consumed = 0;
  for (const m of v.matchAll(re)) {
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3600 : m[2] === 'm' ? n * 60 : m[2] === 's' ? n : n / 1000;
    consumed += m[0].length;
  }
  return consumed === v.length && consumed > 0 ? total : undefined;
}

function sameValue(a: unknown, b: unknown): boolean {
  const da = durationSeconds(a);
  const db = durationSeconds(b);
  if (da !== undefined && db !== undefined) return da === db;
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (isRecord(v))
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys(v[k])]),
    );
  return v;
}

function show(v: unknown): string {
  if (isRecord(v)) {
    const entries = Object.entries(v);
    if (entries.length === 0) return 'none';
    return `{${entries.map(([k, x]) => `${k}: ${typeof x === 'string' ? x : JSON.stringify(x)}`).join(', ')}}`;
  }
  if (Array.isArray(v)) return v.length ? `[${v.join(', ')}]` : 'none';
  return String(v);
}

/** The KubeletConfiguration keys the facts hold, by config key. */
function factSettings(ctx: AuditContext): Map<string, Fact<unknown>> {
  const k = ctx.facts.kubelet;
  return new Map<string, Fact<unknown>>([
    ['maxPods', k.maxPods],
    ['evictionHard', k.evictionHard],
    ['systemReserved', k.systemReserved],
    ['kubeReserved', k.kubeReserved],
    ['featureGates', k.featureGates],
    ['serverTLSBootstrap', k.serverTLSBootstrap],
    ['allowedUnsafeSysctls', k.allowedUnsafeSysctls],
  ]);
}

interface Setting {
  key: string;
  value: unknown;
  source: SourceRef;
}

/**
 * Every explicitly set top-level key of the KubeletConfiguration. Keys with a fact are read from the
 * fact (its value and provenance); the others — image GC, shutdown grace periods, CPU manager, … —
 * have no fact, so they are read here from the document, with the same kind of provenance.
 */
export function kubeletSettings(ctx: AuditContext, cfg: ComponentConfig): Setting[] {
  const facts = factSettings(ctx);
  const out: Setting[] = [];
  for (const [key, raw] of Object.entries(cfg.spec)) {
    const fact = facts.get(key);
    if (fact) {
      if (fact.value === undefined || fact.value === null) continue;
      out.push({ key, value: fact.value, source: fact.provenance[0] ?? fieldOf(cfg.source, key) });
      continue;
    }
    out.push({ key, value: raw, source: fieldOf(cfg.source, key) });
  }
  // serverTLSBootstrap may come from --rotate-server-certificates only (no key in the document).
  const tls = ctx.facts.kubelet.serverTLSBootstrap;
  if (!('serverTLSBootstrap' in cfg.spec) && tls.value === true)
    out.push({ key: 'serverTLSBootstrap', value: true, source: tls.provenance.at(-1) ?? cfg.source });
  return out;
}

function fieldOf(ref: SourceRef, field: string): SourceRef {
  if (ref.kind === 'object' || ref.kind === 'file')
    return { ...ref, field: ref.field ? `${ref.field}.${field}` : field };
  return ref;
}

/** Protected keys (talos.md §4.4) whose kubeadm value changes what clients of the kubelet see. */
function protectedDifferences(
  ctx: AuditContext,
  fallback: SourceRef,
): { key: string; observed: string; expected: string; effect: string; source: SourceRef }[] {
  const k = ctx.facts.kubelet;
  const out = [];
  if (k.anonymousAuth.value === true)
    out.push({
      key: 'authentication.anonymous.enabled',
      observed: 'true',
      expected: 'false',
      effect:
        'unauthenticated clients of the kubelet API (:10250, e.g. metrics scrapers) get 401 on Talos nodes',
      source: k.anonymousAuth.provenance[0] ?? fallback,
    });
  const mode = k.authorizationMode.value;
  if (typeof mode === 'string' && mode !== 'Webhook')
    out.push({
      key: 'authorization.mode',
      observed: mode,
      expected: 'Webhook',
      effect:
        'clients of the kubelet API need RBAC on nodes/proxy, nodes/metrics, nodes/stats on Talos nodes',
      source: k.authorizationMode.provenance[0] ?? fallback,
    });
  return out;
}

export const configCarryover: Rule = {
  id: 'kubelet.config-carryover',
  family: 'kubelet',
  severity: 'risk',
  title: 'Kubelet settings Talos defaults would replace',
  inputs: ['kubeadm', 'node', 'api'],
  reads: ['nodes', KUBELET_CONFIG],
  requires: ['kubelet'],
  description:
    "A Talos kubelet runs with Talos's defaults (e.g. systemReserved memory 512Mi on control planes, 384Mi on workers) unless the cluster's settings are carried in the machine config; some keys are protected and cannot be carried at all.",
  docs: DOCS('kubelet.config-carryover'),
  artifacts: BOTH_PATCHES,
  check(ctx) {
    const cfg = ctx.snapshot.kubelet;
    if (!cfg) return skip(['kubelet'], HOW_TO_PROVIDE.kubelet);
    const release = ctx.target.talos;
    const out: RuleFinding[] = [];

    const carry: Setting[] = [];
    for (const s of kubeletSettings(ctx, cfg)) {
      if (s.key in KUBELET_KEYS_NOT_CARRIED || isUnset(s.value)) continue;
      const talos = TALOS_KUBELET_EFFECTIVE[s.key];
      if (talos && sameValue(s.value, talos.value)) continue;
      carry.push(s);
    }
    if (carry.length > 0) {
      const evidence = carry.map((s) => {
        const talos = TALOS_KUBELET_EFFECTIVE[s.key];
        return evidenceFromSource(s.source, {
          observed: show(s.value),
          expected: talos
            ? `${show(talos.value)} (${talos.note}) unless carried`
            : 'the kubelet/Talos default unless carried',
        });
      });
      const yaml = carry.map((s) => `${s.key}: ${JSON.stringify(s.value)}`).join('; ');
      out.push({
        message: `The KubeletConfiguration sets ${carry.length} value(s) a Talos kubelet would not have: ${listSome(
          carry.map((s) => `${s.key}=${show(s.value)}`),
          6,
        )}. Without carrying them, allocatable capacity, eviction and shutdown behaviour change on every replaced node.`,
        evidence,
        remediation: `Carry them into ${kubeletConfigField(release)} (${yaml}) for every role. Per-node kubelet flags in /var/lib/kubelet/kubeadm-flags.env are not part of the snapshot: compare them on each node.`,
        subject: { kind: 'KubeletConfiguration', name: 'kubelet' },
        field: 'config',
        // Resolved when both role patches carry every value (a key the kit leaves out keeps it open).
        kitChecks: carry.flatMap((c) =>
          patchChecks(
            BOTH_PATCHES,
            isV114(release)
              ? { doc: 'KubeletConfig', path: ['config', c.key] }
              : { path: ['machine', 'kubelet', 'extraConfig', c.key] },
            { op: 'equals', value: c.value },
          ),
        ),
      });
    }

    const prot = protectedDifferences(ctx, cfg.source);
    if (prot.length > 0) {
      out.push({
        message: `Protected kubelet setting(s) differ from what Talos enforces and cannot be carried: ${prot.map((p) => `${p.key}=${p.observed} (Talos ${p.expected}): ${p.effect}`).join('; ')}.`,
        evidence: prot.map((p) =>
          evidenceFromSource(p.source, {
            observed: p.observed,
            expected: p.expected,
            note: 'protected on Talos',
          }),
        ),
        remediation:
          'Adapt the clients before the first Talos node joins: give kubelet API clients a ServiceAccount with RBAC on nodes/proxy, nodes/metrics and nodes/stats, and authenticate them.',
        subject: { kind: 'KubeletConfiguration', name: 'kubelet' },
        field: 'protected',
      });
    }

    if (cfg.spec['seccompDefault'] !== true) {
      const explicit = 'seccompDefault' in cfg.spec;
      out.push({
        severity: 'info',
        message: `Talos kubelets run with seccompDefault: true: containers without a seccompProfile get RuntimeDefault instead of Unconfined (this cluster: ${explicit ? `seccompDefault=${String(cfg.spec['seccompDefault'])}` : 'not set, kubelet default false'}). The key is protected on Talos.`,
        evidence: [
          evidenceFromSource(fieldOf(cfg.source, 'seccompDefault'), {
            observed: explicit ? String(cfg.spec['seccompDefault']) : 'not set (false)',
            expected: 'true (Talos, protected)',
          }),
        ],
        remediation:
          'Workloads that need syscalls outside the RuntimeDefault profile must set securityContext.seccompProfile.type: Unconfined (or a Localhost profile); verify sensitive workloads on a canary Talos node.',
        subject: { kind: 'KubeletConfiguration', name: 'kubelet' },
        field: 'seccompDefault',
      });
    }

    const args = ctx.facts.kubelet.extraArgs;
    const flags: Flag[] = args.value ?? [];
    if (flags.length > 0) {
      const perNode = flags.filter((f) => f.name in KUBELET_PER_NODE_FLAGS);
      const denied = flags.filter((f) => (KUBELET_DENIED_ARGS as readonly string[]).includes(f.name));
      const plain = flags.filter((f) => !perNode.includes(f) && !denied.includes(f));
      const parts: string[] = [];
      if (plain.length) parts.push(`carry ${plain.map(flagText).join(' ')} in ${kubeletArgsField(release)}`);
      for (const f of perNode) parts.push(`${flagText(f)} is per node: ${KUBELET_PER_NODE_FLAGS[f.name]}`);
      if (denied.length)
        parts.push(`${denied.map(flagText).join(' ')} cannot be set on Talos (Talos sets it)`);
      const src = args.provenance[0];
      const evidence: Evidence[] = src
        ? [
            evidenceFromSource(src, {
              observed: flags.map(flagText).join(' '),
              ...(args.conflict ? { note: args.conflict.reason } : {}),
            }),
          ]
        : [{ kind: 'target', field: kubeletArgsField(release), observed: flags.map(flagText).join(' ') }];
      out.push({
        message: `kubeadm gives the kubelets extra flags (${flags.map(flagText).join(' ')}) that a Talos kubelet would not get.`,
        evidence,
        remediation: `${parts.join('; ')}.`,
        subject: { kind: 'KubeletConfiguration', name: 'kubelet' },
        field: 'extraArgs',
      });
    }
    return out;
  },
};

function flagText(f: Flag): string {
  return `--${f.name}=${f.value}`;
}

// ---------------------------------------------------------------------------------------------
// kubelet.sysctls

/** The kubelet's safe sysctls (pkg/kubelet/sysctl/safe_sysctls.go; grown over releases). */
export const SAFE_SYSCTLS = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
  'net.ipv4.tcp_rmem',
  'net.ipv4.tcp_wmem',
];

/** Namespaced sysctls: the only ones a pod can set at all (unsafe ones only when allowed). */
export function isNamespacedSysctl(name: string): boolean {
  return (
    name.startsWith('net.') ||
    name.startsWith('kernel.shm') ||
    name.startsWith('kernel.msg') ||
    name === 'kernel.sem' ||
    name.startsWith('fs.mqueue.')
  );
}

/** kubelet allowedUnsafeSysctls semantics: exact names, or a prefix ending in "*". */
export function sysctlAllowed(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => (p.endsWith('*') ? name.startsWith(p.slice(0, -1)) : p === name));
}

export const sysctls: Rule = {
  id: 'kubelet.sysctls',
  family: 'kubelet',
  severity: 'risk',
  title: 'Pods set unsafe sysctls',
  inputs: ['api', 'node'],
  reads: ['nodes', KUBELET_CONFIG],
  requires: ['resources'],
  description:
    "Unsafe sysctls in a pod's securityContext are accepted only by kubelets that list them in allowedUnsafeSysctls; Talos kubelets list none unless configured, so such pods fail with SysctlForbidden on Talos nodes.",
  docs: DOCS('kubelet.sysctls'),
  check(ctx) {
    const release = ctx.target.talos;
    const allowedFact = ctx.facts.kubelet.allowedUnsafeSysctls;
    const allowed = [...(allowedFact.value ?? [])];
    for (const f of ctx.facts.kubelet.extraArgs.value ?? [])
      if (f.name === 'allowed-unsafe-sysctls')
        allowed.push(
          ...f.value
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        );
    const out: RuleFinding[] = [];
    for (const t of templatesOf(ctx.index)) {
      const list: unknown = t.podSpec?.securityContext?.sysctls;
      if (!Array.isArray(list)) continue;
      const unsafe = (list as { name?: unknown; value?: unknown }[])
        .filter((s) => typeof s?.name === 'string' && !SAFE_SYSCTLS.includes(s.name))
        .map((s) => ({ name: s.name as string, value: String(s.value ?? '') }));
      if (unsafe.length === 0) continue;
      const notAllowed = unsafe.filter((s) => !sysctlAllowed(s.name, allowed));
      const nodeLevel = unsafe.filter((s) => !isNamespacedSysctl(s.name));
      const names = unsafe.map((s) => s.name);
      const kubeadmSide =
        allowedFact.value === undefined
          ? 'the cluster-wide allowedUnsafeSysctls is unknown (no KubeletConfiguration in the snapshot)'
          : notAllowed.length === 0
            ? `kubeadm kubelets allow them (allowedUnsafeSysctls ${allowed.join(', ')})`
            : `the cluster-wide KubeletConfiguration does not allow ${notAllowed.map((s) => s.name).join(', ')} (allowed per node by --allowed-unsafe-sysctls, or these pods already fail)`;
      const nodeNote = nodeLevel.length
        ? ` ${nodeLevel.map((s) => s.name).join(', ')} ${nodeLevel.length > 1 ? 'are' : 'is'} not namespaced and cannot be set per pod: set ${nodeLevel.length > 1 ? 'them' : 'it'} on the host with ${isV114(release) ? 'a SysctlConfig document' : 'machine.sysctls'}.`
        : '';
      out.push({
        message: `${describeObj(t.object)} sets unsafe sysctl(s) ${unsafe.map((s) => `${s.name}=${s.value}`).join(', ')}; ${kubeadmSide}. Talos kubelets reject them unless allowedUnsafeSysctls lists them.${nodeNote}`,
        evidence: [
          objectEvidence(t.object, `${t.specPath}.securityContext.sysctls`, {
            observed: names.join(', '),
            ...(allowedFact.value !== undefined
              ? { note: `allowedUnsafeSysctls: ${allowed.join(', ') || 'none'}` }
              : {}),
          }),
        ],
        remediation: `Add ${names.join(', ')} to ${kubeletConfigField(release)}.allowedUnsafeSysctls on the nodes that run ${describeObj(t.object)}.`,
      });
    }
    return out;
  },
};

// ---------------------------------------------------------------------------------------------
// kubelet.static-pods

/** kubeadm's control-plane static pods: Talos runs its own. */
const CONTROL_PLANE_COMPONENTS = new Set([
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'etcd',
]);
/** Static pods that usually carry the API VIP or load balancer (blockers.md endpoint.vip-on-control-plane). */
const VIP_LIKE = /keepalived|haproxy|kube-vip|nginx-proxy|envoy-proxy|vip/i;

function staticNameOfMirror(pod: KubeObject): string {
  const node = pod.spec?.nodeName;
  const name = pod.metadata.name;
  if (typeof node === 'string' && name.endsWith(`-${node}`)) return name.slice(0, -node.length - 1);
  const component = pod.metadata.labels?.['component'];
  return typeof component === 'string' ? component : name;
}

export const staticPods: Rule = {
  id: 'kubelet.static-pods',
  family: 'kubelet',
  severity: 'risk',
  title: 'Static pods besides the control plane',
  inputs: ['api'],
  reads: ['pods'],
  description:
    'Talos has no manifests directory (disableManifestsDirectory: true): static pods such as keepalived, haproxy, kube-vip or node agents disappear from replaced nodes unless re-declared.',
  docs: DOCS('kubelet.static-pods'),
  check(ctx) {
    const release = ctx.target.talos;
    const groups = new Map<string, { namespace: string; nodes: Set<string>; evidence: Evidence[] }>();
    const add = (namespace: string, name: string, node: string | undefined, e: Evidence) => {
      const key = `${namespace}/${name}`;
      let g = groups.get(key);
      if (!g) {
        g = { namespace, nodes: new Set(), evidence: [] };
        groups.set(key, g);
      }
      if (node) g.nodes.add(node);
      if (g.evidence.length < 10) g.evidence.push(e);
    };
    const seen = new Set<string>();
    for (const pod of ctx.index.mirrorPods) {
      const name = staticNameOfMirror(pod);
      if (CONTROL_PLANE_COMPONENTS.has(name)) continue;
      const node = typeof pod.spec?.nodeName === 'string' ? pod.spec.nodeName : undefined;
      seen.add(`${name}@${node ?? ''}`);
      add(
        pod.metadata.namespace ?? 'kube-system',
        name,
        node,
        objectEvidence(pod, 'metadata.annotations["kubernetes.io/config.mirror"]', {
          ...(node ? { note: `static pod on ${node}` } : {}),
        }),
      );
    }
    // Manifests copied from the nodes may hold static pods whose mirror pods were not collected.
    for (const sp of ctx.snapshot.staticPods as StaticPod[]) {
      if (CONTROL_PLANE_COMPONENTS.has(sp.component) || sp.source.kind !== 'file') continue;
      if (seen.has(`${sp.component}@${sp.node ?? ''}`)) continue;
      add(
        'kube-system',
        sp.component,
        sp.node,
        evidenceFromSource(sp.source, { note: 'static pod manifest' }),
      );
    }
    const out: RuleFinding[] = [];
    for (const [key, g] of groups) {
      const name = key.slice(g.namespace.length + 1);
      const nodes = [...g.nodes].sort();
      const vip = VIP_LIKE.test(name)
        ? ' It looks like it serves the API VIP or load balancer: plan it with endpoint.vip-on-control-plane (turning it off early causes apiserver downtime).'
        : '';
      const where = isV114(release) ? 'a KubeStaticPodConfig document' : 'machine.pods';
      out.push({
        message: `Static pod ${name} runs from the manifests directory on ${nodes.length ? listSome(nodes) : 'a node'}; Talos nodes have no manifests directory, so it is gone once those nodes are replaced.${vip}`,
        evidence: g.evidence,
        remediation: `Re-declare ${name} on the Talos nodes that need it (${where}), or run it as a DaemonSet with a node selector; for a VIP, Talos's own Layer2 VIP can replace keepalived/kube-vip.`,
        subject: { kind: 'StaticPod', namespace: g.namespace, name },
        field: 'manifest',
      });
    }
    return out;
  },
};

export const KUBELET_RULES: Rule[] = [configCarryover, sysctls, staticPods];
