/**
 * Item 3 of the kit: Cilium Helm values for Talos, applied over the release's current values
 * (`helm upgrade --reuse-values`, so everything ferry does not name — envoy included — stays as
 * found), in two stages:
 *
 * - values-migration.yaml, before the first Talos node: what Talos needs from the agent (cgroup v2
 *   and bpffs from the host, no SYS_MODULE) with `updateStrategy: OnDelete`, so no running agent is
 *   replaced, and the API address as found: it must keep working on kubeadm nodes, which have no
 *   KubePrism, for any agent container that restarts there and rereads cilium-config.
 * - values-talos.yaml, after the last kubeadm node is gone: KubePrism (localhost:7445) and the
 *   update strategy the cluster had.
 *
 * blockers.md cni.cilium-values, cni.cilium-update-strategy; knowledge/talos-config.ts CILIUM_ON_TALOS.
 */
import { stringify } from 'yaml';
import type { DaemonSetFact, Facts } from '../facts/model.js';
import { KUBEPRISM } from '../knowledge/talos.js';
import { CILIUM_ON_TALOS } from '../knowledge/talos-config.js';
import type { KubeObject, SourceRef } from '../snapshot/model.js';
import type { Artifact, GenerateNote, GeneratorResult, MissingInput } from './artifact.js';
import type { GenerateContext, Generator } from './context.js';
import { need } from './context.js';
import { describeRef } from './provenance.js';

/** Optional operator input: the release's current values (`helm get values cilium -o yaml`). */
export interface CiliumOptions {
  currentValues?: { file: string; values: Record<string, unknown> };
}

export const ciliumGenerator: Generator = { name: 'cilium', generate: generateCilium };

export function generateCilium(ctx: GenerateContext): GeneratorResult {
  const opts = ctx.options.cilium ?? {};
  const agentObject = findAgent(ctx.snapshot.resources.daemonsets, ctx.facts);
  return ciliumArtifacts(ctx.facts, { ...opts, agentObject, generatedBy: ctx.generatedBy });
}

interface Inputs extends CiliumOptions {
  agentObject?: KubeObject;
  generatedBy?: string[];
}

type Values = Record<string, unknown>;

export function ciliumArtifacts(facts: Facts, inputs: Inputs = {}): GeneratorResult {
  const missing: MissingInput[] = [];
  const notes: GenerateNote[] = [];
  const plugin = need(facts.cni.plugin, 'Cilium values are written only when Cilium is the CNI', missing);
  if (plugin === undefined) return { kind: 'missing', missing, notes };
  if (plugin !== 'cilium') {
    return {
      kind: 'ok',
      artifacts: [],
      notes: [{ severity: 'info', message: `the CNI is ${plugin}: no Cilium values generated` }],
    };
  }
  const agent = need(facts.cni.ciliumAgent, 'the agent DaemonSet update strategy and namespace', missing);
  const version = need(
    facts.cni.ciliumVersion,
    'helm upgrade must keep the installed chart version',
    missing,
  );
  const endpoint = need(
    facts.cluster.controlPlaneEndpoint,
    'the API address Cilium uses during the mixed period',
    missing,
  );
  const host = facts.cni.ciliumK8sServiceHost;
  const port = facts.cni.ciliumK8sServicePort;
  const kpr = facts.cni.ciliumKubeProxyReplacement;
  if (
    !agent ||
    !version ||
    !endpoint ||
    host.value === undefined ||
    port.value === undefined ||
    kpr.value === undefined
  ) {
    for (const f of [host, port, kpr])
      if (f.value === undefined) need(f, 'the API address and kube-proxy replacement as found', missing);
    return { kind: 'missing', missing, notes };
  }
  const provenance: Record<string, SourceRef[]> = {};
  const comments: string[] = [];
  const record = (key: string, sources: SourceRef[], why: string) => {
    provenance[key] = sources;
    comments.push(
      `${key}: ${why}${sources.length > 0 ? ` (from ${sources.slice(0, 2).map(describeRef).join('; ')})` : ''}`,
    );
  };

  const talosNeeds: Values = {
    cgroup: structuredClone(CILIUM_ON_TALOS.cgroup) as unknown as Values,
    securityContext: {
      capabilities: {
        ciliumAgent: [...CILIUM_ON_TALOS.capabilities.ciliumAgent],
        cleanCiliumState: [...CILIUM_ON_TALOS.capabilities.cleanCiliumState],
      },
    },
  };
  const talosRef: SourceRef[] = [
    {
      kind: 'derived',
      from: [],
      note: 'Talos "Deploying Cilium": host cgroup v2/bpffs, workloads may not load kernel modules',
    },
  ];

  // Stage 1: the API address as found (or the endpoint where kube-proxy replacement needs one).
  const migration: Values = { ...talosNeeds };
  record('cgroup', talosRef, 'Talos mounts cgroup v2 at /sys/fs/cgroup itself');
  record('securityContext.capabilities', talosRef, 'the default set without SYS_MODULE');
  const kprOn = kpr.value === 'true' || kpr.value === 'strict';
  if (host.value !== null && port.value !== null) {
    migration['k8sServiceHost'] = host.value;
    migration['k8sServicePort'] = Number(port.value);
    record(
      'k8sServiceHost',
      [...host.provenance, ...port.provenance],
      'kept as found: it works on kubeadm and Talos nodes alike',
    );
  } else if (kprOn) {
    migration['k8sServiceHost'] = endpoint.host;
    migration['k8sServicePort'] = endpoint.port;
    record(
      'k8sServiceHost',
      facts.cluster.controlPlaneEndpoint.provenance,
      'the cluster endpoint: kube-proxy replacement needs a direct API address',
    );
  }
  migration['updateStrategy'] = { type: 'OnDelete' };
  record(
    'updateStrategy',
    [...facts.cni.ciliumAgent.provenance],
    `OnDelete during the migration (the cluster has ${describeStrategy(agent)}): running agents are not replaced`,
  );

  const current = inputs.currentValues;
  if (current?.values['envoy'] !== undefined) {
    migration['envoy'] = structuredClone(current.values['envoy']);
    record('envoy', [{ kind: 'file', path: current.file, field: 'envoy' }], 'as found');
  } else {
    comments.push('envoy: as found (--reuse-values keeps the release values)');
  }

  // Stage 2: KubePrism once every node is Talos.
  const final: Values = { ...talosNeeds, updateStrategy: strategyValue(agent) };
  if (facts.target.kubeprism === 'on') {
    final['k8sServiceHost'] = 'localhost';
    final['k8sServicePort'] = KUBEPRISM.port;
  } else if (kprOn) {
    final['k8sServiceHost'] = endpoint.host;
    final['k8sServicePort'] = endpoint.port;
  }
  const release = helmRelease(inputs.agentObject, agent, notes);
  const ns = release.namespace;
  const upgrade = (file: string) =>
    `helm upgrade ${release.name} cilium/cilium -n ${ns} --version ${version} --reuse-values -f ${file}`;
  const selector = Object.entries(agent.selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  notes.push({
    severity: 'info',
    message:
      'Cilium values-migration.yaml turns off cgroup auto-mount on kubeadm nodes too: they must run cgroup v2 at /sys/fs/cgroup (stat -fc %T /sys/fs/cgroup = cgroup2fs); agents there keep running until their node is replaced',
  });
  const head = (lines: string[]) => [...lines, ...(inputs.generatedBy ?? [])].map((l) => `# ${l}`).join('\n');
  const artifacts: Artifact[] = [
    {
      path: 'cilium/values-migration.yaml',
      content: `${head([
        `Cilium ${version} values for the migration, applied over the release's current values (nothing else changes).`,
        `Before: sh cilium/agents.sh record       Apply: ${upgrade('cilium/values-migration.yaml')}`,
        'After:  sh cilium/agents.sh check        (shows that no Cilium agent was restarted or replaced)',
        ...comments,
      ])}\n${stringify(migration, { lineWidth: 0 })}`,
      mode: 0o644,
      purpose:
        'Cilium values for the mixed period: Talos-compatible agent, updateStrategy OnDelete, API address as found',
      step: 16,
      provenance,
      secret: false,
    },
    {
      path: 'cilium/values-talos.yaml',
      content: `${head([
        `Cilium ${version} values once no kubeadm node is left: KubePrism and the original update strategy.`,
        `Apply: ${upgrade('cilium/values-talos.yaml')}`,
        `then: kubectl -n ${ns} rollout restart daemonset/${agent.name} && kubectl -n ${ns} rollout status daemonset/${agent.name}`,
      ])}\n${stringify(final, { lineWidth: 0 })}`,
      mode: 0o644,
      purpose: 'Cilium values after the migration: KubePrism localhost:7445 and the original update strategy',
      step: 90,
      provenance: {
        k8sServiceHost: [
          {
            kind: 'derived',
            from: [],
            note: `KubePrism on ${KUBEPRISM.host}:${KUBEPRISM.port} on every Talos node`,
          },
        ],
        updateStrategy: facts.cni.ciliumAgent.provenance,
      },
      secret: false,
    },
    {
      path: 'cilium/agents.sh',
      content: agentsScript(ns, selector, inputs.generatedBy ?? []),
      mode: 0o755,
      purpose:
        'records the Cilium agent pods before the values change and shows afterwards that none restarted',
      step: 16,
      provenance: { selector: facts.cni.ciliumAgent.provenance },
      secret: false,
    },
  ];
  return { kind: 'ok', artifacts, notes };
}

function describeStrategy(a: DaemonSetFact): string {
  const u = a.updateStrategy;
  return u.type === 'RollingUpdate' ? `RollingUpdate, maxUnavailable ${u.maxUnavailable ?? 1}` : u.type;
}

function strategyValue(a: DaemonSetFact): Values {
  const u = a.updateStrategy;
  if (u.type !== 'RollingUpdate') return { type: u.type };
  const rolling: Values = {};
  if (u.maxUnavailable !== null) rolling['maxUnavailable'] = u.maxUnavailable;
  if (u.maxSurge !== null) rolling['maxSurge'] = u.maxSurge;
  return Object.keys(rolling).length > 0
    ? { type: 'RollingUpdate', rollingUpdate: rolling }
    : { type: 'RollingUpdate' };
}

function findAgent(daemonsets: KubeObject[], facts: Facts): KubeObject | undefined {
  const a = facts.cni.ciliumAgent.value;
  return a
    ? daemonsets.find((d) => d.metadata.name === a.name && d.metadata.namespace === a.namespace)
    : undefined;
}

/** Helm release of the agent DaemonSet (meta.helm.sh annotations), else the chart's usual "cilium". */
function helmRelease(
  obj: KubeObject | undefined,
  agent: DaemonSetFact,
  notes: GenerateNote[],
): { name: string; namespace: string } {
  const ann = obj?.metadata.annotations ?? {};
  const name = ann['meta.helm.sh/release-name'];
  const namespace = ann['meta.helm.sh/release-namespace'] ?? agent.namespace;
  if (!name) {
    notes.push({
      severity: 'warning',
      message: `the Cilium DaemonSet ${agent.namespace}/${agent.name} has no Helm release annotations: the commands assume a Helm release "cilium"; with another installer apply the same values through it`,
    });
  }
  return { name: name ?? 'cilium', namespace };
}

function agentsScript(ns: string, selector: string, generatedBy: string[]): string {
  return [
    '#!/bin/sh',
    '# Shows that a Cilium values change restarted or replaced no agent: run "record" before, "check" after.',
    ...generatedBy.map((l) => `# ${l}`),
    'set -eu',
    `NS=${ns}`,
    `SELECTOR='${selector}'`,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
    'STATE=${CILIUM_AGENTS_STATE:-cilium-agents.before}',
    'list() {',
    '  kubectl -n "$NS" get pods -l "$SELECTOR" \\',
    '    -o jsonpath=\'{range .items[*]}{.metadata.name} {.metadata.uid} {.spec.nodeName} restarts={.status.containerStatuses[*].restartCount}{"\\n"}{end}\' | sort',
    '}',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
    'case "${1:-}" in',
    '  record) list > "$STATE"; echo "recorded $(wc -l < "$STATE") agent pod(s) in $STATE" ;;',
    '  check)',
    '    list > "$STATE.after"',
    '    if diff -u "$STATE" "$STATE.after"; then echo "no Cilium agent was restarted or replaced"; else echo "Cilium agents changed (see diff above)" >&2; exit 1; fi ;;',
    '  *) echo "usage: $0 record|check" >&2; exit 2 ;;',
    'esac',
    '',
  ].join('\n');
}
