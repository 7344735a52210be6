/**
 * Versions (blockers.md "Versions"). Each Talos release supports a window of Kubernetes minors
 * (talos.md §8), and during coexistence the Talos control-plane components should run exactly the
 * version the kubeadm ones run.
 */
import type { ComponentInstance } from '../../facts/model.js';
import { kubernetesInTalosWindow } from '../../facts/target.js';
import { TALOS_RELEASES, type TalosRelease } from '../../knowledge/talos.js';
import { imageTag, normalizeKubernetesVersion, parseVersion } from '../../util/semver.js';
import { type Evidence, evidenceFromSource } from '../findings.js';
import { type Rule, type RuleFinding, skip } from '../rule.js';
import { BOTH_PATCHES } from './kit-paths.js';
import { factEvidence, list } from './shared.js';

const DOCS = (id: string) => `docs/rules.md#${id}`;

function windowText(r: TalosRelease): string {
  return `Kubernetes ${r.kubernetesMin.replace(/\.0$/, '')} – ${r.kubernetesMaxMinor}.x`;
}

/** Talos lines (newest release of each) whose window contains every given version. */
export function releasesFor(versions: readonly string[]): string[] {
  const out: string[] = [];
  for (const r of TALOS_RELEASES) {
    if (versions.every((x) => kubernetesInTalosWindow(r, x)) && !out.includes(`v${r.minor}`))
      out.push(`v${r.minor}`);
  }
  return out;
}

export const k8sOutsideTalosWindow: Rule = {
  id: 'version.k8s-outside-talos-window',
  family: 'version',
  severity: 'blocker',
  title: "Kubernetes version outside the target Talos release's window",
  inputs: ['api', 'target'],
  reads: ['nodes'],
  // The apiserver image (flags), kubeadm-config or the Node objects each tell a version.
  requires: [],
  description:
    "Each Talos release supports six Kubernetes minors (pkg/machinery/compatibility); a cluster outside that window cannot be carried onto the release's nodes.",
  docs: DOCS('version.k8s-outside-talos-window'),
  check(ctx) {
    const release = ctx.target.talos;
    const cluster = ctx.facts.cluster.kubernetesVersion;
    const kubelets = ctx.facts.nodes.kubeletVersions;
    if (cluster.value === undefined && kubelets.value === undefined)
      return skip(
        ['cluster.kubernetesVersion'],
        cluster.missing ?? 'the kube-apiserver manifests or Node objects',
      );
    const out: RuleFinding[] = [];
    const remedy = (versions: string[]) => {
      const fit = releasesFor(versions);
      return fit.length
        ? `Target a Talos release whose window contains ${list(versions)} (${list(fit)}), or upgrade the kubeadm cluster first.`
        : `No Talos release ferry knows supports ${list(versions)}: upgrade the kubeadm cluster into a supported window first.`;
    };
    if (cluster.value !== undefined && !kubernetesInTalosWindow(release, cluster.value)) {
      out.push({
        message: `The control plane runs Kubernetes ${cluster.value}; Talos ${ctx.target.talosVersion} supports ${windowText(release)}.`,
        evidence: factEvidence(cluster, (x) => x, { expected: windowText(release) }),
        remediation: remedy([cluster.value]),
        subject: { kind: 'Fact', name: cluster.key },
        field: 'talos-window',
      });
    }
    const outside = (kubelets.value ?? []).filter(
      (k) => parseVersion(k.version) !== undefined && !kubernetesInTalosWindow(release, k.version),
    );
    if (outside.length > 0) {
      const text = outside.map((k) => `${k.version} (${k.nodes} node(s))`).join(', ');
      out.push({
        message: `Kubelets run ${text}, outside the window of Talos ${ctx.target.talosVersion} (${windowText(release)}).`,
        evidence: factEvidence(kubelets, (vs) => vs.map((k) => `${k.version}×${k.nodes}`).join(', '), {
          expected: windowText(release),
        }),
        remediation: remedy(outside.map((k) => k.version)),
        subject: { kind: 'Fact', name: kubelets.key },
        field: 'talos-window',
      });
    }
    const chosen = ctx.target.choices.find((c) => c.field === 'kubernetesVersion');
    const tv = ctx.target.kubernetesVersion;
    if (tv && chosen?.origin === 'flag' && !kubernetesInTalosWindow(release, tv)) {
      out.push({
        message: `--kubernetes-version ${tv} is outside the window of Talos ${ctx.target.talosVersion} (${windowText(release)}).`,
        evidence: [
          { kind: 'target', field: 'kubernetesVersion', observed: tv, expected: windowText(release) },
        ],
        remediation: remedy([tv]),
        subject: { kind: 'Target', name: 'target' },
        field: 'kubernetesVersion',
      });
    }
    return out;
  },
};

/** The Kubernetes version an instance's image tag names, or null. */
function instanceVersion(i: ComponentInstance): string | null {
  const tag = i.image ? imageTag(i.image) : undefined;
  return tag && parseVersion(tag) ? normalizeKubernetesVersion(tag) : null;
}

export const k8sPatchMismatch: Rule = {
  id: 'version.k8s-patch-mismatch',
  family: 'version',
  severity: 'risk',
  title: 'Talos control-plane version differs from the running kubeadm components',
  inputs: ['api', 'target'],
  reads: ['nodes'],
  requires: [],
  description:
    'During coexistence kubeadm and Talos apiservers and controller-managers serve the same cluster; they should run the same version, and upgrades happen after the migration.',
  docs: DOCS('version.k8s-patch-mismatch'),
  artifacts: BOTH_PATCHES,
  check(ctx) {
    const target = ctx.target.kubernetesVersion;
    if (!target)
      return skip(
        ['target.kubernetesVersion'],
        "pass --kubernetes-version, or add the kube-apiserver manifests / kubeadm-config so ferry can read the cluster's version",
      );
    const components = [
      ['kube-apiserver', ctx.facts.apiserver.instances],
      ['kube-controller-manager', ctx.facts.controllerManager.instances],
      ['kube-scheduler', ctx.facts.scheduler.instances],
    ] as const;
    const out: RuleFinding[] = [];
    let seen = 0;
    for (const [name, fact] of components) {
      const differing: { i: ComponentInstance; version: string }[] = [];
      for (const i of fact.value ?? []) {
        const version = instanceVersion(i);
        if (version === null) continue;
        seen++;
        if (version !== target) differing.push({ i, version });
      }
      if (differing.length === 0) continue;
      out.push({
        message: `${name} runs ${list([...new Set(differing.map((d) => d.version))])} on ${list(differing.map((d) => d.i.node ?? '(node unknown)'))}; Talos control planes would run ${target}. Mixed versions of one component serve the cluster together until the last kubeadm control plane is gone.`,
        evidence: differing.map(
          (d): Evidence =>
            evidenceFromSource(d.i.source, {
              observed: d.i.image ?? d.version,
              expected: target,
              note: 'image',
            }),
        ),
        remediation: `Run Talos with Kubernetes ${list([...new Set(differing.map((d) => d.version))])} (--kubernetes-version; ferry pins the component and kubelet images), or bring the kubeadm control planes to ${target} first; upgrade after the migration.`,
        subject: { kind: 'Component', name },
        field: 'version',
      });
    }
    // No running component with a version tag: nothing to compare, say what would let ferry check.
    if (seen === 0) {
      return skip(
        ['apiserver.instances'],
        ctx.facts.apiserver.instances.missing ??
          'control-plane manifests whose images carry a version tag (e.g. registry.k8s.io/kube-apiserver:v1.32.4)',
      );
    }
    return out;
  },
};

export const VERSION_RULES: Rule[] = [k8sOutsideTalosWindow, k8sPatchMismatch];
