/**
 * What each blocker says to the operator, and the exit code it stands for: a state the cluster
 * must not be upgraded from (not under Cluster API, paused, mid-upgrade, a downgrade, a line
 * ferry does not know, a template id taken) is bad input (2), as the issue of an unknown version
 * is; what the operator can fix and plan again (removed APIs, budgets, a missing template id) is
 * a refusal like `ferry plan`'s (1).
 */

import { SKEW_POLICY } from '../knowledge/kubernetes.js';
import { REMOVED_APIS_SOURCE } from '../knowledge/removed-apis.js';
import type { Blocker } from './model.js';

export interface BlockerText {
  title: string;
  detail: string;
  remediation: string;
}

export function blockerExit(b: Blocker): 1 | 2 {
  switch (b.kind) {
    case 'cluster-not-found':
    case 'no-talos-control-plane':
    case 'paused':
    case 'upgrade-in-progress':
    case 'downgrade':
    case 'version-unknown':
    case 'talos-line-unknown':
    case 'talos-floor':
    case 'template-id-in-use':
    case 'template-id-malformed':
    case 'not-observed':
      return 2;
    case 'kubernetes-outside-talos-window':
    case 'kubelet-skew':
    case 'removed-api':
    case 'pdb-blocks-drain':
    case 'template-missing':
    case 'infrastructure-unsupported':
    case 'template-id-missing':
    case 'control-plane-rollout-stuck':
      return 1;
  }
}

export function describeBlocker(b: Blocker): BlockerText {
  switch (b.kind) {
    case 'cluster-not-found':
      return {
        title: 'cluster not under Cluster API',
        detail: `the management cluster holds no Cluster ${b.cluster}`,
        remediation:
          'check --cluster NAMESPACE/NAME and --mgmt-kubeconfig (`kubectl get clusters -A`); a migrated cluster is handed over by `ferry capi adopt`',
      };
    case 'no-talos-control-plane':
      return {
        title: 'no TalosControlPlane',
        detail: `Cluster ${b.cluster} ${b.controlPlane ? `has control plane ${b.controlPlane}, not a TalosControlPlane ferry finds` : 'names no control plane'}`,
        remediation:
          'ferry upgrades clusters whose control plane is a TalosControlPlane (CACPPT); hand the cluster over with `ferry capi adopt` first',
      };
    case 'paused':
      return {
        title: 'paused',
        detail: `${b.objects.join(', ')} ${b.objects.length === 1 ? 'is' : 'are'} paused: no controller would roll anything`,
        remediation:
          'find out why it is paused (after adoption the TalosControlPlane stays paused until no kubeadm etcd member remains); unpause it (`kubectl annotate … cluster.x-k8s.io/paused-`, or spec.paused false) and plan again',
      };
    case 'upgrade-in-progress':
      return {
        title: 'an upgrade is already in progress',
        detail: `Machines of more than one version: ${b.versions.map((v) => `${v.version}${v.machines.length ? ` (${v.machines.join(', ')})` : ''}`).join('; ')}`,
        remediation:
          'let the running rollout finish (or roll it back) until every Machine is on one version, then plan again',
      };
    case 'downgrade':
      return {
        title: `${b.what} downgrade`,
        detail: `the target ${b.to} is older than the running ${b.from}`,
        remediation: `${b.what} is never downgraded in place; pick a target at or above ${b.from}`,
      };
    case 'version-unknown':
      return {
        title: 'version unknown',
        detail: `${b.what}${b.found !== null ? ` "${b.found}" is not a version ferry can plan from` : ' is not set'}`,
        remediation:
          'give versions as vX.Y.Z (Kubernetes) or vA.B.C (Talos); for the current version check the TalosControlPlane spec, or give --snapshot/--kubeconfig',
      };
    case 'talos-line-unknown':
      return {
        title: 'Talos line not known to ferry',
        detail: `the upgrade would go through Talos ${b.line}, which ferry does not table${b.known.length ? ` (it knows v${b.known.join(', v')})` : ''}`,
        remediation:
          'Talos upgrades go through every minor; a line ferry does not know cannot be a stop: upgrade through it by hand, or to a line ferry knows',
      };
    case 'talos-floor':
      return {
        title: 'Talos release not reachable',
        detail: `${b.to} upgrades only from ${b.minUpgradeFrom} or newer; the stop before it is ${b.from}`,
        remediation: `upgrade to a release at or above ${b.minUpgradeFrom} first`,
      };
    case 'kubernetes-outside-talos-window':
      return {
        title: "Kubernetes outside the Talos line's window",
        detail: `Talos ${b.talos} runs Kubernetes ${b.window.min} to ${b.window.maxMinor}.x, not ${b.kubernetes}`,
        remediation:
          'upgrade Talos (ferry upgrade plan --talos) or Kubernetes first, so that every stage stays inside the window',
      };
    case 'kubelet-skew':
      return {
        title: 'kubelet skew',
        detail: `pool ${b.pool} runs kubelet ${b.kubelet} while the apiservers would run ${b.apiserver}: at most ${b.maxBehind} minor(s) older and never newer (${SKEW_POLICY.source})`,
        remediation: `bring pool ${b.pool} to the control plane's version first`,
      };
    case 'removed-api':
      return {
        title: 'API version removed',
        detail: `${b.object}${b.file ? ` (${b.file})` : ''} uses ${b.api.apiVersion} ${b.api.kind}, which Kubernetes ${b.api.removedIn} no longer serves (${REMOVED_APIS_SOURCE})`,
        remediation: b.api.replacement
          ? `move it to ${b.api.replacement} (the manifest and whatever applies it: Helm charts, GitOps sources), then plan again`
          : `${b.api.kind} has no replacement: remove it (PodSecurity admission replaces PodSecurityPolicy)`,
      };
    case 'pdb-blocks-drain':
      return {
        title: 'a budget holds the pool rollout forever',
        detail: `PodDisruptionBudget ${b.pdb} (${b.rule}) allows no disruption: the Machine controller's drain of pool ${b.pool} would wait on it`,
        remediation: b.fix,
      };
    case 'template-missing':
      return {
        title: 'template not found',
        detail: `${b.referrer} refers to ${b.template}, which the management cluster does not hold`,
        remediation: 'fix the reference (or restore the template); a Talos upgrade copies it',
      };
    case 'infrastructure-unsupported':
      return {
        title: 'infrastructure template ferry cannot change',
        detail: `${b.templateKind} ${b.template}: ferry knows which field holds the machine image only for ProxmoxMachineTemplate and VSphereMachineTemplate`,
        remediation:
          'create the new template by hand (a copy with the new image) and point the TalosControlPlane and MachineDeployments at it',
      };
    case 'template-id-missing':
      return {
        title: 'no template id for the new Talos image',
        detail: `stage ${b.stage} (Talos ${b.talos}) needs a machine template of that image: pass its id with --template-id (one per Talos stage, comma separated)`,
        remediation: b.commands.length
          ? `build it from the Talos Image Factory:\n${b.commands.join('\n')}`
          : 'build the image and pass its id with --template-id',
      };
    case 'template-id-in-use':
      return {
        title: 'template id already in use',
        detail: `--template-id ${b.templateId} is already the image of ${b.usedBy}`,
        remediation: 'pass the id of the template built for the new Talos release',
      };
    case 'control-plane-rollout-stuck':
      return {
        title: 'the control-plane rollout would never proceed',
        detail: `${b.controlPlane} has ${b.replicas} replica(s) and rolloutStrategy.rollingUpdate.maxSurge 0: the provider deletes first and cannot replace its only Machine`,
        remediation:
          'set rolloutStrategy.rollingUpdate.maxSurge to 1 (or the rolloutStrategy to OnDelete, which the plan then drives Machine by Machine)',
      };
    case 'template-id-malformed':
      return {
        title: 'template id not usable',
        detail: `--template-id ${b.templateId} is not ${b.expected}, which ${b.templateKind} takes`,
        remediation: `pass ${b.expected}`,
      };
    case 'not-observed':
      return {
        title: 'workload cluster not observed',
        detail: `the workload cluster did not allow: ${b.reads.join('; ')}; the pools' budgets cannot be checked`,
        remediation:
          'collect with a kubeconfig that may list nodes, pods, PodDisruptionBudgets and workloads (ferry snapshot --print-clusterrole)',
      };
  }
}
