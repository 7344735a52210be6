/**
 * CNI (blockers.md "CNI and add-ons"). Talos bootstrap manifests create flannel unless told the CNI
 * is none, and Cilium needs values that work on Talos (no module loading, Talos-provided cgroup v2)
 * and on the kubeadm nodes at the same time: a cluster-wide change, rolled out before migrating.
 */
import type { DaemonSetFact } from '../../facts/model.js';
import { KUBEPRISM } from '../../knowledge/talos.js';
import { CILIUM_ON_TALOS } from '../../knowledge/talos-config.js';
import type { KubeObject } from '../../snapshot/model.js';
import { type Evidence, evidenceFromSource } from '../findings.js';
import { type KitCheck, patchChecks, type ValueTest } from '../kit-checks.js';
import { notApplicable, type Rule, type RuleFinding } from '../rule.js';
import { CILIUM_CONFIG, CLUSTER_INFO } from '../rule-reads.js';
import { BOTH_PATCHES, KIT } from './kit-paths.js';
import { factEvidence, isMultidoc, skipFact } from './shared.js';

type Ctx = Parameters<Rule['check']>[0];

const DOCS = (id: string) => `docs/rules.md#${id}`;

export const talosDefaultFlannel: Rule = {
  id: 'cni.talos-default-flannel',
  family: 'cni',
  severity: 'blocker',
  title: 'Talos would deploy flannel next to the cluster CNI',
  inputs: ['api', 'target'],
  reads: ['daemonsets', CILIUM_CONFIG],
  description:
    'Without an explicit "no CNI", the Talos bootstrap manifests create DaemonSet kube-system/kube-flannel (create-if-missing) beside the CNI the cluster already runs.',
  docs: DOCS('cni.talos-default-flannel'),
  artifacts: BOTH_PATCHES,
  check(ctx) {
    const plugin = ctx.facts.cni.plugin;
    if (plugin.value === undefined) return skipFact(plugin);
    const fix = isMultidoc(ctx.target)
      ? `delete the KubeFlannelCNIConfig document from the Talos config (Talos ${ctx.target.talosVersion}: no document = CNI none)`
      : `set cluster.network.cni.name: none in the Talos config (Talos ${ctx.target.talosVersion} deploys flannel when cluster.network.cni is absent)`;
    const ev = factEvidence(plugin, (p) => p, { expected: 'CNI none in the Talos config' });
    // The kit: CNI none in both v1alpha1 patches; from v1.14 a `$patch: delete` of the flannel document.
    const kitChecks: KitCheck[] = isMultidoc(ctx.target)
      ? patchChecks(
          [KIT.controlPlanePatch],
          { doc: 'KubeFlannelCNIConfig', path: ['$patch'] },
          { op: 'equals', value: 'delete' },
        )
      : patchChecks(
          BOTH_PATCHES,
          { path: ['cluster', 'network', 'cni', 'name'] },
          { op: 'equals', value: 'none' },
        );
    if (plugin.value === 'none-detected') {
      return [
        {
          severity: 'risk',
          message:
            'ferry recognised no CNI DaemonSet (cilium, calico, canal, flannel, weave, kube-router, antrea); whatever CNI the cluster runs, Talos would add flannel next to it unless told otherwise.',
          evidence: ev,
          // Not the kit's to resolve: CNI none is right only if a CNI does run.
          remediation: `Confirm which CNI runs, then ${fix}.`,
          subject: { kind: 'Fact', name: plugin.key },
          field: 'talos-flannel',
        },
      ];
    }
    const own =
      plugin.value === 'flannel'
        ? " The cluster's own flannel would be joined (or, from v1.13, adopted and later re-applied by upgrade-k8s) by Talos's flannel manifests with Talos's settings."
        : '';
    return [
      {
        message: `The cluster runs ${plugin.value}; Talos ${ctx.target.talosVersion} would also create DaemonSet kube-system/kube-flannel on its first control plane.${own}`,
        evidence: ev,
        remediation: `${fix[0]!.toUpperCase()}${fix.slice(1)}; ferry generate does this for every migration.`,
        kitChecks,
        subject: { kind: 'Fact', name: plugin.key },
        field: 'talos-flannel',
      },
    ];
  },
};

/** The agent DaemonSet object behind the cni.ciliumAgent fact. */
function agentObject(ctx: Ctx, agent: DaemonSetFact): KubeObject | undefined {
  return ctx.snapshot.resources.daemonsets.find(
    (d) => d.metadata.name === agent.name && (d.metadata.namespace ?? '') === agent.namespace,
  );
}

interface ContainerRef {
  list: 'containers' | 'initContainers';
  // biome-ignore lint/suspicious/noExplicitAny: container specs are read structurally
  c: any;
}

function containersOf(ds: KubeObject): ContainerRef[] {
  const spec = ds.spec?.template?.spec ?? {};
  const out: ContainerRef[] = [];
  for (const list of ['initContainers', 'containers'] as const) {
    for (const c of Array.isArray(spec[list]) ? spec[list] : []) out.push({ list, c });
  }
  return out;
}

function dsRef(
  ds: KubeObject,
  field: string,
  obs: { observed?: string; expected?: string; note?: string },
): Evidence {
  return {
    kind: 'object',
    object: {
      apiVersion: ds.apiVersion,
      kind: 'DaemonSet',
      name: ds.metadata.name,
      ...(ds.metadata.namespace ? { namespace: ds.metadata.namespace } : {}),
      ...(ds.metadata.uid ? { uid: ds.metadata.uid } : {}),
    },
    field,
    ...obs,
  };
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1']);

export const ciliumValues: Rule = {
  id: 'cni.cilium-values',
  family: 'cni',
  severity: 'risk',
  title: 'Cilium values that do not work on Talos and kubeadm nodes alike',
  inputs: ['api'],
  reads: ['daemonsets', 'nodes', CILIUM_CONFIG, CLUSTER_INFO],
  description:
    'Talos forbids module loading by workloads and mounts cgroup v2 and bpffs itself; KubePrism (localhost:7445) exists only on Talos nodes. Cilium values are cluster-wide, so they must suit both node types during coexistence.',
  docs: DOCS('cni.cilium-values'),
  artifacts: [KIT.ciliumMigration, KIT.ciliumTalos, KIT.ciliumAgents],
  check(ctx) {
    const plugin = ctx.facts.cni.plugin;
    if (plugin.value === undefined) return skipFact(plugin);
    if (plugin.value !== 'cilium') return notApplicable(`the CNI is ${plugin.value}, not Cilium`);
    const agentFact = ctx.facts.cni.ciliumAgent;
    if (!agentFact.value) return skipFact(agentFact);
    const ds = agentObject(ctx, agentFact.value);
    if (!ds) return skipFact(agentFact);
    const out: RuleFinding[] = [];
    const subject = {
      kind: 'DaemonSet',
      group: 'apps',
      namespace: ds.metadata.namespace ?? '',
      name: ds.metadata.name,
    };
    // How the kit rolls Cilium values out (generate/cilium.ts): the words must match what it does.
    const rollout = `Apply them before the first Talos node, as the kit's ${KIT.ciliumMigration} does with updateStrategy OnDelete: no running agent restarts (${KIT.ciliumAgents} record/check shows it) and every new agent starts with them; ${KIT.ciliumTalos} follows after the last kubeadm node.`;
    const values = (path: string[], test: ValueTest): KitCheck => ({
      kind: 'value',
      file: KIT.ciliumMigration,
      path,
      test,
    });
    const onDelete = values(['updateStrategy', 'type'], { op: 'equals', value: 'OnDelete' });
    const agents: KitCheck = { kind: 'file', file: KIT.ciliumAgents, mentions: [] };

    const withModule = containersOf(ds).filter(({ c }) =>
      (c.securityContext?.capabilities?.add ?? []).includes('SYS_MODULE'),
    );
    if (withModule.length > 0) {
      out.push({
        message: `Cilium containers ${withModule.map(({ c }) => c.name).join(', ')} add the SYS_MODULE capability; Talos does not let workloads load kernel modules.`,
        evidence: withModule.map(({ list, c }) =>
          dsRef(ds, `spec.template.spec.${list}[${c.name}].securityContext.capabilities.add`, {
            observed: (c.securityContext.capabilities.add as string[]).join(', '),
          }),
        ),
        remediation: `Set securityContext.capabilities.ciliumAgent to ${CILIUM_ON_TALOS.capabilities.ciliumAgent.join(',')} and cleanCiliumState to ${CILIUM_ON_TALOS.capabilities.cleanCiliumState.join(',')} (no SYS_MODULE); declare the modules Cilium needs in the Talos machine config. ${rollout}`,
        subject,
        field: 'capabilities.SYS_MODULE',
        kitChecks: [
          values(['securityContext', 'capabilities', 'ciliumAgent'], {
            op: 'equals',
            value: CILIUM_ON_TALOS.capabilities.ciliumAgent,
          }),
          values(['securityContext', 'capabilities', 'cleanCiliumState'], {
            op: 'equals',
            value: CILIUM_ON_TALOS.capabilities.cleanCiliumState,
          }),
          onDelete,
          agents,
        ],
      });
    }

    const mountCgroup = containersOf(ds).find(({ c }) => c.name === 'mount-cgroup');
    const config = ctx.index.configMaps.get(`${ds.metadata.namespace ?? ''}/cilium-config`);
    const cgroupRoot = config?.data?.['cgroup-root'];
    const wantRoot = CILIUM_ON_TALOS.cgroup.hostRoot;
    if (mountCgroup || (typeof cgroupRoot === 'string' && cgroupRoot !== wantRoot)) {
      const evidence: Evidence[] = [];
      if (mountCgroup)
        evidence.push(
          dsRef(ds, `spec.template.spec.${mountCgroup.list}[mount-cgroup]`, {
            observed: 'present (cgroup.autoMount.enabled: true)',
            expected: 'absent',
          }),
        );
      if (config && typeof cgroupRoot === 'string' && cgroupRoot !== wantRoot)
        evidence.push(
          evidenceFromSource(
            {
              kind: 'object',
              objectKind: 'ConfigMap',
              namespace: config.metadata.namespace ?? '',
              name: config.metadata.name,
              field: 'data["cgroup-root"]',
            },
            { observed: cgroupRoot, expected: wantRoot },
          ),
        );
      out.push({
        message: `Cilium mounts its own cgroup v2 hierarchy${typeof cgroupRoot === 'string' ? ` at ${cgroupRoot}` : ''}; Talos already provides cgroup v2 at ${wantRoot}.`,
        evidence,
        remediation: `Set cgroup.autoMount.enabled=false and cgroup.hostRoot=${wantRoot} (both node types mount cgroup v2 there on current kernels; check the kubeadm nodes use cgroup v2). ${rollout}`,
        subject,
        field: 'cgroup',
        kitChecks: [
          values(['cgroup', 'autoMount', 'enabled'], { op: 'equals', value: false }),
          values(['cgroup', 'hostRoot'], { op: 'equals', value: wantRoot }),
          onDelete,
          agents,
        ],
      });
    }

    const kpr = ctx.facts.cni.ciliumKubeProxyReplacement.value;
    const kprOn = kpr === 'true' || kpr === 'strict';
    const host = ctx.facts.cni.ciliumK8sServiceHost;
    const port = ctx.facts.cni.ciliumK8sServicePort;
    const endpoint = ctx.facts.cluster.controlPlaneEndpoint.value;
    const endpointText = endpoint
      ? `${endpoint.host}:${endpoint.port}`
      : 'the load-balanced control-plane endpoint';
    if (kprOn && host.value !== undefined && port.value !== undefined) {
      const h = host.value;
      const p = port.value;
      const why =
        h === null
          ? 'has no k8sServiceHost: with kube-proxy replacement it cannot reach the API before its own service handling runs'
          : LOOPBACK_HOSTS.has(h.toLowerCase()) || p === String(KUBEPRISM.port)
            ? `reaches the API at ${h}:${p ?? '?'}, which only exists on Talos nodes (KubePrism) or kubeadm control planes`
            : (ctx.facts.nodes.controlPlane.value ?? []).some(
                  (n) => n.name === h || n.advertiseAddress?.address === h || n.internalIP === h,
                )
              ? `reaches the API through one control plane (${h}), which the migration removes`
              : undefined;
      if (why) {
        out.push({
          message: `Cilium runs with kube-proxy replacement and ${why}.`,
          evidence: [
            ...factEvidence(host, (x) => x ?? '(not set)'),
            ...factEvidence(port, (x) => x ?? '(not set)'),
          ],
          remediation: `Set k8sServiceHost/k8sServicePort to ${endpointText}: it works from kubeadm and Talos nodes alike during coexistence. Switch to KubePrism (localhost:${KUBEPRISM.port}) only after the last kubeadm node is gone. ${rollout}`,
          subject,
          field: 'k8sServiceHost',
          ...(endpoint
            ? {
                kitChecks: [
                  values(['k8sServiceHost'], { op: 'equals', value: endpoint.host }),
                  values(['k8sServicePort'], { op: 'equals', value: endpoint.port }),
                  onDelete,
                  agents,
                ],
              }
            : {}),
        });
      }
    }
    return out;
  },
};

/** Resolves maxUnavailable (a number or a percentage, rounded up as the DaemonSet controller does). */
export function resolveMaxUnavailable(value: string | number | null, nodes: number): number {
  if (value === null) return 1;
  if (typeof value === 'number') return value;
  const m = /^(\d+)%$/.exec(value.trim());
  if (m) return Math.ceil((Number(m[1]) * nodes) / 100);
  const n = Number(value);
  return Number.isFinite(n) ? n : 1;
}

export const ciliumUpdateStrategy: Rule = {
  id: 'cni.cilium-update-strategy',
  family: 'cni',
  severity: 'risk',
  title: 'Cilium agent rollout takes pod networking down on several nodes at once',
  inputs: ['api'],
  reads: ['daemonsets', 'nodes', CILIUM_CONFIG],
  description:
    'The pre-migration values change restarts every Cilium agent; more than one unavailable agent at a time drops pod networking on several nodes together, and OnDelete never rolls the change out.',
  docs: DOCS('cni.cilium-update-strategy'),
  artifacts: [KIT.ciliumMigration, KIT.ciliumAgents],
  check(ctx) {
    const plugin = ctx.facts.cni.plugin;
    if (plugin.value === undefined) return skipFact(plugin);
    if (plugin.value !== 'cilium') return notApplicable(`the CNI is ${plugin.value}, not Cilium`);
    const agentFact = ctx.facts.cni.ciliumAgent;
    if (!agentFact.value) return skipFact(agentFact);
    const s = agentFact.value.updateStrategy;
    const ds = agentObject(ctx, agentFact.value);
    const scheduled = Number(ds?.status?.desiredNumberScheduled);
    const nodes =
      Number.isInteger(scheduled) && scheduled > 0 ? scheduled : ctx.snapshot.resources.nodes.length;
    const subject = {
      kind: 'DaemonSet',
      group: 'apps',
      namespace: agentFact.value.namespace,
      name: agentFact.value.name,
    };
    const ev = factEvidence(agentFact, () => JSON.stringify(s), {
      expected: 'RollingUpdate, maxUnavailable: 1',
    });
    const fix =
      'Set updateStrategy RollingUpdate with maxUnavailable: 1 (Helm: updateStrategy.rollingUpdate.maxUnavailable=1) in the same values change; ferry gates each step on agent readiness.';
    // The kit's own values change (generate/cilium.ts) replaces no running agent at all.
    const kitFix = `The kit's ${KIT.ciliumMigration} sets updateStrategy OnDelete for the migration, so its values change replaces no running agent (${KIT.ciliumAgents} record/check shows it). If you change values another way: ${fix[0]!.toLowerCase()}${fix.slice(1)}`;
    if (s.type === 'OnDelete') {
      return [
        {
          message: `Cilium agent ${agentFact.value.namespace}/${agentFact.value.name} updates OnDelete: a values change reaches a node only when its agent pod is deleted, so kubeadm and Talos nodes run different Cilium settings until someone restarts every agent.`,
          evidence: ev,
          remediation: fix,
          subject,
          field: 'spec.updateStrategy',
        },
      ];
    }
    const n = resolveMaxUnavailable(s.maxUnavailable, nodes);
    if (n <= 1) return [];
    return [
      {
        message: `Cilium agent ${agentFact.value.namespace}/${agentFact.value.name} rolls with maxUnavailable ${s.maxUnavailable} (${n} of ${nodes} node(s) at once): a values change drops pod networking on ${n} nodes together.`,
        evidence: ev,
        remediation: kitFix,
        subject,
        field: 'spec.updateStrategy',
        kitChecks: [
          {
            kind: 'value',
            file: KIT.ciliumMigration,
            path: ['updateStrategy', 'type'],
            test: { op: 'equals', value: 'OnDelete' },
          },
          { kind: 'file', file: KIT.ciliumAgents, mentions: [] },
        ],
      },
    ];
  },
};

export const CNI_RULES: Rule[] = [talosDefaultFlannel, ciliumValues, ciliumUpdateStrategy];
