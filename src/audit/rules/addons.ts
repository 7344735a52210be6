/**
 * Add-ons (blockers.md "CNI and add-ons"). Talos applies kube-proxy and CoreDNS from its bootstrap
 * manifests: objects that exist are skipped on join (from v1.13 adopted into Talos's inventory),
 * missing ones are created, and `talosctl upgrade-k8s` later re-applies them with Talos's spec
 * (talos.md §5). So a cluster without kube-proxy gets one, a customised CoreDNS is overwritten
 * later, and kubeadm's kube-proxy selector breaks the first upgrade.
 */

import type { Target } from '../../facts/target.js';
import type { KubeObject } from '../../snapshot/model.js';
import { compareVersions, parseVersion } from '../../util/semver.js';
import type { Evidence } from '../findings.js';
import { type KitValueRef, patchChecks, settingText, type ValueTest } from '../kit-checks.js';
import { notApplicable, type Rule, type RuleFinding } from '../rule.js';
import { CILIUM_CONFIG, COREDNS_CONFIG, KUBE_PROXY_CONFIG } from '../rule-reads.js';
import { KIT } from './kit-paths.js';
import { factEvidence, isMultidoc, list, objectEvidence, skipFact } from './shared.js';

type Ctx = Parameters<Rule['check']>[0];

const DOCS = (id: string) => `docs/rules.md#${id}`;

/** The selector of Talos's kube-proxy DaemonSet (talos.md §5, manifest 10-kube-proxy). */
export const TALOS_KUBE_PROXY_SELECTOR: Readonly<Record<string, string>> = {
  'k8s-app': 'kube-proxy',
  tier: 'node',
};

const showLabels = (l: Record<string, string>) =>
  Object.keys(l).length === 0
    ? '{}'
    : `{${Object.entries(l)
        .map(([k, val]) => `${k}: ${val}`)
        .join(', ')}}`;

export const kubeProxySelector: Rule = {
  id: 'addons.kube-proxy-selector',
  family: 'addons',
  severity: 'risk',
  title: "kube-proxy selector differs from Talos's",
  inputs: ['api'],
  reads: ['daemonsets', KUBE_PROXY_CONFIG],
  description:
    "A DaemonSet's selector is immutable; Talos's kube-proxy selects {k8s-app: kube-proxy, tier: node}, so the first talosctl upgrade-k8s fails with \"field is immutable\" on kubeadm's DaemonSet (siderolabs/talos#11973).",
  docs: DOCS('addons.kube-proxy-selector'),
  check(ctx) {
    const fact = ctx.facts.kubeProxy.daemonSet;
    if (fact.value === undefined) return skipFact(fact);
    if (fact.value === null) return notApplicable('no kube-proxy DaemonSet (see addons.kube-proxy-conflict)');
    const sel = fact.value.selector;
    const want = TALOS_KUBE_PROXY_SELECTOR;
    const same =
      Object.keys(sel).length === Object.keys(want).length &&
      Object.entries(want).every(([k, x]) => sel[k] === x);
    if (same) return [];
    return [
      {
        message: `DaemonSet kube-system/kube-proxy selects ${showLabels(sel)}, Talos's kube-proxy selects ${showLabels(want)}: the migration works, but the first talosctl upgrade-k8s fails with "spec.selector: field is immutable".`,
        evidence: factEvidence(fact, (d) => (d ? showLabels(d.selector) : 'absent'), {
          expected: showLabels(want),
        }),
        remediation:
          'Re-create the DaemonSet with the Talos labels before the first upgrade-k8s (guide step 18): export it, set selector and template labels to k8s-app: kube-proxy + tier: node, kubectl delete ds kube-proxy -n kube-system --cascade=orphan, apply the new one; the running pods are replaced one node at a time.',
        field: 'spec.selector.matchLabels',
        subject: { kind: 'DaemonSet', group: 'apps', namespace: 'kube-system', name: 'kube-proxy' },
      },
    ];
  },
};

/** The proxy mode Talos renders: nftables from Kubernetes 1.31, iptables before (talos.md §5). */
export function talosProxyMode(kubernetesVersion: string | undefined): string {
  const v = kubernetesVersion ? parseVersion(kubernetesVersion) : undefined;
  return v && compareVersions(v, { major: 1, minor: 31, patch: 0, pre: '' }) >= 0 ? 'nftables' : 'iptables';
}

type Setting = { at: Omit<KitValueRef, 'file'>; test: ValueTest };

/** kube-proxy off, as the kit's control-plane patch writes it for the target's format. */
function proxyOff(target: Target): Setting {
  return isMultidoc(target)
    ? { at: { doc: 'KubeProxyConfig', path: ['enabled'] }, test: { op: 'equals', value: false } }
    : { at: { path: ['cluster', 'proxy', 'disabled'] }, test: { op: 'equals', value: true } };
}

function proxyDisable(target: Target): string {
  const s = proxyOff(target);
  return `${settingText(s.at, s.test)}${isMultidoc(target) ? ' (removing the document re-enables kube-proxy)' : ''}`;
}

export const kubeProxyConflict: Rule = {
  id: 'addons.kube-proxy-conflict',
  family: 'addons',
  severity: 'blocker',
  title: 'Talos would deploy kube-proxy the cluster does not run, or in another mode',
  inputs: ['api', 'target'],
  reads: ['daemonsets', CILIUM_CONFIG, KUBE_PROXY_CONFIG],
  description:
    'Talos creates kube-proxy when it is missing (e.g. next to Cilium kube-proxy replacement) and renders its own proxy mode; both change how every Service is routed.',
  docs: DOCS('addons.kube-proxy-conflict'),
  artifacts: [KIT.controlPlanePatch],
  check(ctx) {
    const ds = ctx.facts.kubeProxy.daemonSet;
    if (ds.value === undefined) return skipFact(ds);
    const subject = { kind: 'DaemonSet', group: 'apps', namespace: 'kube-system', name: 'kube-proxy' };
    if (ds.value === null) {
      const kpr = ctx.facts.cni.ciliumKubeProxyReplacement.value;
      const why =
        kpr === 'true' || kpr === 'strict'
          ? ` Cilium replaces it (kube-proxy-replacement: ${kpr}); a second proxy would program conflicting rules.`
          : '';
      return [
        {
          message: `The cluster runs no kube-proxy DaemonSet, but Talos ${ctx.target.talosVersion} enables kube-proxy by default and would create DaemonSet kube-system/kube-proxy on its first control plane.${why}`,
          evidence: [
            ...factEvidence(ds, () => 'absent'),
            ...(kpr ? factEvidence(ctx.facts.cni.ciliumKubeProxyReplacement, (x) => x ?? '') : []),
          ],
          remediation: `Set ${proxyDisable(ctx.target)} in the Talos config; ferry generate does so when the cluster has no kube-proxy.`,
          subject,
          field: 'presence',
          kitChecks: patchChecks([KIT.controlPlanePatch], proxyOff(ctx.target).at, proxyOff(ctx.target).test),
        },
      ];
    }
    const mode = ctx.facts.kubeProxy.mode;
    if (mode.value === undefined || mode.value === null) return [];
    const talos = talosProxyMode(ctx.target.kubernetesVersion);
    if (mode.value === talos) return [];
    const at = isMultidoc(ctx.target)
      ? { doc: 'KubeProxyConfig', path: ['mode'] }
      : { path: ['cluster', 'proxy', 'mode'] };
    const keep: ValueTest = { op: 'equals', value: mode.value };
    return [
      {
        message: `kube-proxy runs in ${mode.value} mode; Talos ${ctx.target.talosVersion} renders ${talos} for Kubernetes ${ctx.target.kubernetesVersion ?? '(unknown)'}: Talos nodes would program Services differently, and upgrade-k8s would switch the adopted DaemonSet.`,
        evidence: factEvidence(mode, (m) => m ?? '(none)', { expected: talos }),
        // ferry generate does not write the mode: the operator adds it to the patch (the kit check then finds it).
        remediation: `Set ${settingText(at, keep)} in the Talos config (the kit's ${KIT.controlPlanePatch} does not set it: add it there); change modes later as a separate step.`,
        subject,
        field: 'mode',
        kitChecks: patchChecks([KIT.controlPlanePatch], at, keep),
      },
    ];
  },
};

// ---------------------------------------------------------------------------------------------
// CoreDNS

/** Plugins of kubeadm's (and Talos's) default Corefile server block. */
const DEFAULT_COREFILE_PLUGINS = new Set([
  'errors',
  'health',
  'ready',
  'kubernetes',
  'prometheus',
  'forward',
  'cache',
  'loop',
  'reload',
  'loadbalance',
]);

/**
 * What a Corefile adds to kubeadm's default: extra server blocks (stub domains), extra plugins in
 * the root block, or a forward to something other than the node's resolv.conf.
 */
export function corefileCustomisations(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let block: string | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') continue;
    const opens = (line.match(/\{/g) ?? []).length;
    const closes = (line.match(/\}/g) ?? []).length;
    if (depth === 0 && opens > 0) {
      block = line.slice(0, line.indexOf('{')).trim();
      const keys = block.split(/[\s,]+/).filter(Boolean);
      const root = keys.length === 1 && (keys[0] === '.' || keys[0] === '.:53');
      if (!root) out.push(`server block "${block}"`);
    } else if (depth === 1 && !line.startsWith('}') && block !== null) {
      const rootBlock = /^\.(:53)?$/.test(block);
      const [plugin, ...args] = line.replace(/\{.*$/, '').trim().split(/\s+/);
      if (rootBlock && plugin && !DEFAULT_COREFILE_PLUGINS.has(plugin))
        out.push(`plugin "${plugin}" in ${block}`);
      if (rootBlock && plugin === 'forward' && args.join(' ') !== '. /etc/resolv.conf')
        out.push(`forward ${args.join(' ')} in ${block}`);
    }
    depth = Math.max(0, depth + opens - closes);
  }
  return out;
}

/** CoreDNS left to the cluster, as the kit's control-plane patch writes it for the target's format. */
function coreDnsOff(target: Target): Setting {
  return isMultidoc(target)
    ? { at: { doc: 'KubeCoreDNSConfig', path: ['enabled'] }, test: { op: 'equals', value: false } }
    : { at: { path: ['cluster', 'coreDNS', 'disabled'] }, test: { op: 'equals', value: true } };
}

function coreDnsDisable(target: Target): string {
  const s = coreDnsOff(target);
  return `${settingText(s.at, s.test)}${isMultidoc(target) ? ' (removing the document re-enables CoreDNS)' : ''}`;
}

function deploymentsIn(ctx: Ctx, namespace: string): KubeObject[] {
  return ctx.snapshot.resources.deployments.filter((d) => (d.metadata.namespace ?? 'default') === namespace);
}

export const corednsConflict: Rule = {
  id: 'addons.coredns-conflict',
  family: 'addons',
  severity: 'risk',
  title: 'Cluster DNS that Talos-managed CoreDNS would duplicate or overwrite',
  inputs: ['api', 'target'],
  reads: ['deployments', 'services', COREDNS_CONFIG],
  description:
    "Talos creates the CoreDNS objects that are missing; from v1.13 existing ones join its inventory and the next talosctl upgrade-k8s re-applies Talos's spec, losing customisations.",
  docs: DOCS('addons.coredns-conflict'),
  artifacts: [KIT.controlPlanePatch],
  check(ctx) {
    const out: RuleFinding[] = [];
    const fix = `Set ${coreDnsDisable(ctx.target)} in the Talos config so Talos leaves the cluster's DNS alone; ferry generate does so when it finds a customised DNS.`;
    const off = coreDnsOff(ctx.target);
    const kitChecks = patchChecks([KIT.controlPlanePatch], off.at, off.test);
    const adopt =
      ctx.target.talos.minor === '1.10' ||
      ctx.target.talos.minor === '1.11' ||
      ctx.target.talos.minor === '1.12'
        ? "talosctl upgrade-k8s re-applies Talos's CoreDNS manifests"
        : `Talos ${ctx.target.talosVersion} adopts the existing objects into its inventory and the next talosctl upgrade-k8s re-applies Talos's spec`;

    const cm = ctx.index.configMaps.get('kube-system/coredns');
    const corefile = cm?.data?.['Corefile'];
    if (cm && typeof corefile === 'string') {
      const custom = corefileCustomisations(corefile);
      if (custom.length > 0) {
        out.push({
          message: `ConfigMap kube-system/coredns carries a customised Corefile (${custom.join('; ')}); ${adopt}, which replaces it.`,
          evidence: [
            objectEvidence(cm, 'data.Corefile', {
              observed: custom.join('; '),
              expected: "kubeadm's default Corefile",
            }),
          ],
          remediation: fix,
          kitChecks,
          subject: { kind: 'ConfigMap', group: '', namespace: 'kube-system', name: 'coredns' },
          field: 'data.Corefile',
        });
      }
    }

    const deployments = deploymentsIn(ctx, 'kube-system');
    const coredns = deployments.find((d) => d.metadata.name === 'coredns');
    const dnsLike = deployments.filter(
      (d) => d.metadata.name !== 'coredns' && d.spec?.template?.metadata?.labels?.['k8s-app'] === 'kube-dns',
    );
    const kubeDns = (ctx.index.servicesByNamespace.get('kube-system') ?? []).find(
      (s) => s.metadata.name === 'kube-dns',
    );
    if (dnsLike.length > 0) {
      out.push({
        message: `Cluster DNS runs as ${dnsLike.map((d) => `Deployment kube-system/${d.metadata.name}`).join(', ')}${coredns ? '' : ' (no Deployment coredns)'}; Talos would ${coredns ? 'adopt' : 'create'} Deployment kube-system/coredns with the same k8s-app=kube-dns pods behind Service kube-dns.`,
        evidence: dnsLike.map((d) =>
          objectEvidence(d, 'spec.template.metadata.labels["k8s-app"]', { observed: 'kube-dns' }),
        ),
        remediation: fix,
        kitChecks,
        subject: { kind: 'Deployment', group: 'apps', namespace: 'kube-system', name: 'coredns' },
        field: 'other-dns-deployments',
      });
    }
    const helm = coredns && helmManaged(coredns);
    if (coredns && helm) {
      out.push({
        message: `Deployment kube-system/coredns is managed by ${helm}; ${adopt}, so two tools would own it.`,
        evidence: [objectEvidence(coredns, 'metadata.labels', { observed: helm })],
        remediation: fix,
        kitChecks,
        subject: { kind: 'Deployment', group: 'apps', namespace: 'kube-system', name: 'coredns' },
        field: 'managed-by',
      });
    }
    if (!coredns && dnsLike.length === 0 && !kubeDns) {
      out.push({
        message:
          'The snapshot shows no cluster DNS (no Deployment kube-system/coredns, no Service kube-system/kube-dns): Talos would create CoreDNS and a kube-dns Service on the 10th service IP.',
        evidence: [
          {
            kind: 'object',
            object: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'kube-system', name: 'coredns' },
            observed: 'absent',
          },
        ],
        remediation: `If DNS is deliberately absent or provided elsewhere, ${fix[0]!.toLowerCase()}${fix.slice(1)}`,
        kitChecks,
        subject: { kind: 'Deployment', group: 'apps', namespace: 'kube-system', name: 'coredns' },
        field: 'presence',
      });
    }

    const nodeLocal = ctx.snapshot.resources.daemonsets.find(
      (d) =>
        d.metadata.name === 'node-local-dns' ||
        d.spec?.template?.metadata?.labels?.['k8s-app'] === 'node-local-dns',
    );
    if (nodeLocal) {
      out.push({
        message: `NodeLocal DNS runs (DaemonSet ${nodeLocal.metadata.namespace ?? 'default'}/${nodeLocal.metadata.name}); Talos kubelets must get its listen address as clusterDNS, and Talos's host DNS forwarding sits in front of it.`,
        evidence: [objectEvidence(nodeLocal)],
        remediation:
          'Carry the kubelet clusterDNS (see network.kube-dns-ip) and test resolution on a canary Talos node; keep Talos CoreDNS management off if NodeLocal DNS forwards to a customised CoreDNS.',
        subject: {
          kind: 'DaemonSet',
          group: 'apps',
          namespace: nodeLocal.metadata.namespace ?? 'default',
          name: nodeLocal.metadata.name,
        },
        field: 'node-local-dns',
      });
    }
    return out;
  },
};

function helmManaged(o: KubeObject): string | undefined {
  const by = o.metadata.labels?.['app.kubernetes.io/managed-by'];
  const release = o.metadata.annotations?.['meta.helm.sh/release-name'];
  if (release) return `Helm release ${release}`;
  if (by && by !== 'Talos') return by;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Bootstrap objects

export const bootstrapObjects: Rule = {
  id: 'addons.bootstrap-objects',
  family: 'addons',
  severity: 'info',
  title: 'Objects the first Talos control plane creates',
  inputs: ['api', 'target'],
  reads: ['deployments', 'daemonsets', 'services', COREDNS_CONFIG, KUBE_PROXY_CONFIG],
  description:
    'The first Talos control plane applies its bootstrap manifests: missing objects are created, existing ones are left alone (from v1.13 recorded in an inventory ConfigMap).',
  docs: DOCS('addons.bootstrap-objects'),
  check(ctx) {
    const t = ctx.target;
    const inventory = !['1.10', '1.11', '1.12'].includes(t.talos.minor);
    const created = [
      'Secret kube-system/bootstrap-token-<id> (the bundle token, no expiry)',
      'ClusterRoleBindings system-bootstrap-node-bootstrapper, system-bootstrap-approve-node-client-csr, system-bootstrap-node-renewal',
      'ConfigMap kube-system/kubeconfig-in-cluster',
      'ClusterRole and ClusterRoleBinding system:talos-nodes',
      ...(inventory ? ['ConfigMap kube-system/talos-bootstrap-manifests-inventory'] : []),
      'CRD serviceaccounts.talos.dev (only with Talos API access enabled)',
    ];
    const kept: string[] = [];
    const evidence: Evidence[] = [
      {
        kind: 'target',
        field: 'talosVersion',
        observed: t.talosVersion,
        note: inventory ? 'inventory' : 'no inventory',
      },
    ];
    const proxy = ctx.facts.kubeProxy.daemonSet;
    if (proxy.value) {
      kept.push('DaemonSet kube-system/kube-proxy');
      created.push('ClusterRoleBinding kube-proxy, ServiceAccount kube-system/kube-proxy when missing');
      evidence.push(...factEvidence(proxy, () => 'exists'));
    } else if (proxy.value === null) {
      created.push(`no kube-proxy objects, provided ${proxyDisable(t)} (addons.kube-proxy-conflict)`);
    }
    const coredns = deploymentsIn(ctx, 'kube-system').find((d) => d.metadata.name === 'coredns');
    const kubeDns = (ctx.index.servicesByNamespace.get('kube-system') ?? []).find(
      (s) => s.metadata.name === 'kube-dns',
    );
    const corednsCm = ctx.index.configMaps.get('kube-system/coredns');
    for (const [o, label] of [
      [coredns, 'Deployment kube-system/coredns'],
      [kubeDns, 'Service kube-system/kube-dns'],
      [corednsCm, 'ConfigMap kube-system/coredns'],
    ] as const) {
      if (o) {
        kept.push(label);
        evidence.push(objectEvidence(o, undefined, { observed: 'exists' }));
      } else created.push(`${label} (missing today)`);
    }
    created.push('ServiceAccount coredns, ClusterRole/ClusterRoleBinding system:coredns when missing');
    const cni = ctx.facts.cni.plugin.value;
    if (cni && cni !== 'none-detected')
      created.push(
        `no flannel objects, provided the CNI is set to none (cni.talos-default-flannel; the cluster runs ${cni})`,
      );
    const how = inventory
      ? 'adopted into the inventory; talosctl upgrade-k8s re-applies them later'
      : 'left as they are (no inventory before v1.13; deleted objects come back)';
    return [
      {
        message: `The first Talos control plane (Talos ${t.talosVersion}) creates: ${created.join('; ')}. Existing objects are ${how}: ${list(kept)}.`,
        evidence,
        remediation:
          'Nothing to fix: review the list, keep RBAC that other tools rely on, and expect these objects in the cluster after the first Talos control plane joins.',
        subject: { kind: 'Target', name: 'bootstrap-manifests' },
        field: 'objects',
      },
    ];
  },
};

export const ADDONS_RULES: Rule[] = [kubeProxySelector, kubeProxyConflict, corednsConflict, bootstrapObjects];
