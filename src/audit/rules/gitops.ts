/**
 * GitOps and infrastructure-as-code owners of what the migration changes (issue 28): an Argo CD
 * Application with self-heal or an unsuspended Flux object puts back Cilium's values, the agent's
 * OnDelete strategy or a surged replica count within minutes — mid-roll, where the drain then
 * waits on a budget again or a node comes up with the old Cilium settings. The audit names each
 * owner of each object ferry or Talos changes, and how to pause and resume it.
 */
import { GITOPS_RESOURCE } from '../../knowledge/gitops.js';
import type { KubeObject } from '../../snapshot/model.js';
import type { Evidence } from '../findings.js';
import type { AuditContext, Rule, RuleFinding } from '../rule.js';
import { CILIUM_CONFIG, COREDNS_CONFIG, KUBE_PROXY_CONFIG, WORKLOADS } from '../rule-reads.js';
import { describeOwner, type Owner, type OwnerIndex, ownerIndex, ownerKey } from './gitops-owners.js';
import { objectEvidence } from './shared.js';
import { pdbBlocks, pdbModel } from './workload-pdb.js';
import { isFinished } from './workload-pods.js';

const DOCS = (id: string) => `docs/rules.md#${id}`;

/**
 * What the migration does to an object, which decides what its owner's repository must say
 * afterwards: Cilium's values change for good, Talos takes kube-proxy and CoreDNS over, a budget
 * the operator relaxes is their change to commit, and a surge is undone by the run itself.
 */
export type TouchKind = 'cilium-values' | 'talos-adopts' | 'budget-relaxed' | 'surged';

/** An object the migration changes, and who changes it how. */
export interface Touched {
  object: KubeObject;
  change: TouchKind;
  why: string;
}

const label = (o: KubeObject) =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

function find(list: readonly KubeObject[], namespace: string, name: string): KubeObject | undefined {
  return list.find((o) => o.metadata.name === name && (o.metadata.namespace ?? 'default') === namespace);
}

/** What the migration writes to, from the snapshot: Cilium, kube-proxy, CoreDNS, and the workloads behind blocking budgets. */
export function touchedObjects(ctx: AuditContext): Touched[] {
  const r = ctx.snapshot.resources;
  const out: Touched[] = [];
  const add = (o: KubeObject | undefined, change: TouchKind, why: string) => {
    if (o && !out.some((t) => t.object === o)) out.push({ object: o, change, why });
  };
  const agent = ctx.facts.cni.ciliumAgent.value;
  if (agent) {
    const why =
      "ferry's preparation runs helm upgrade cilium with the kit's values and sets the agent's updateStrategy to OnDelete";
    add(find(r.daemonsets, agent.namespace, agent.name), 'cilium-values', why);
    add(ctx.index.configMaps.get(`${agent.namespace}/cilium-config`), 'cilium-values', why);
  }
  const proxy = ctx.facts.kubeProxy.daemonSet.value;
  if (proxy) {
    const why = "Talos adopts kube-proxy into its inventory and talosctl upgrade-k8s re-applies Talos's spec";
    add(find(r.daemonsets, proxy.namespace, proxy.name), 'talos-adopts', why);
    add(ctx.index.configMaps.get('kube-system/kube-proxy'), 'talos-adopts', why);
  }
  const dnsWhy =
    "Talos adopts CoreDNS into its inventory (v1.13+) and talosctl upgrade-k8s re-applies Talos's spec";
  add(find(r.deployments, 'kube-system', 'coredns'), 'talos-adopts', dnsWhy);
  add(ctx.index.configMaps.get('kube-system/coredns'), 'talos-adopts', dnsWhy);

  const model = pdbModel(ctx.index);
  for (const b of model.all) {
    const pods = model.podsOf(b).filter((p) => !isFinished(p));
    if (pdbBlocks(b.pdb, pods).length === 0) continue;
    const budget = `${b.namespace}/${b.pdb.metadata.name}`;
    add(
      b.pdb,
      'budget-relaxed',
      `it allows no disruption, so its drains wait on it: the fix (maxUnavailable: 1 for the migration) is a change to it`,
    );
    for (const p of pods) {
      const top = ctx.index.topControllerOf(p);
      if (top && (top.kind === 'Deployment' || top.kind === 'StatefulSet'))
        add(
          top,
          'surged',
          `ferry run --surge-replicas scales it up by one while PodDisruptionBudget ${budget} holds its drains`,
        );
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Commands the operator types: names are DNS labels, so they need no quoting.

function argoPause(app: KubeObject): string {
  return `kubectl -n ${app.metadata.namespace ?? 'argocd'} patch ${GITOPS_RESOURCE.Application} ${app.metadata.name} --type=merge -p '{"spec":{"syncPolicy":{"automated":null}}}'`;
}

function argoResume(app: KubeObject): string {
  const automated = JSON.stringify(app.spec?.syncPolicy?.automated ?? {});
  return `kubectl -n ${app.metadata.namespace ?? 'argocd'} patch ${GITOPS_RESOURCE.Application} ${app.metadata.name} --type=merge -p '{"spec":{"syncPolicy":{"automated":${automated}}}}'`;
}

function fluxPatch(
  kind: 'Kustomization' | 'HelmRelease',
  ns: string,
  name: string,
  suspend: boolean,
): string {
  return `kubectl -n ${ns} patch ${GITOPS_RESOURCE[kind]} ${name} --type=merge -p '{"spec":{"suspend":${suspend}}}'`;
}

function repoOf(app: KubeObject): string {
  const sources = [app.spec?.source, ...(Array.isArray(app.spec?.sources) ? app.spec.sources : [])].filter(
    Boolean,
  );
  const first = sources[0];
  if (!first?.repoURL) return 'the repository it syncs from';
  return `${first.repoURL}${first.path ? ` (path ${first.path})` : first.chart ? ` (chart ${first.chart})` : ''}`;
}

/** Owners of the owner (an app of apps, a Kustomization applying a Kustomization): they undo a pause. */
function parentsOf(index: OwnerIndex, o: Owner): Owner[] {
  if (o.tool === 'iac' || !o.object) return [];
  return index.ownersOf(o.object).filter((p) => p.tool !== 'iac' && p.reconcile !== 'manual');
}

function remediation(o: Owner, parents: readonly Owner[], objects: readonly KubeObject[]): string {
  const names = objects.map(label).join(', ');
  const parentNote =
    parents.length > 0
      ? ` ${parents.map(describeOwner).join(' and ')} manage${parents.length === 1 ? 's' : ''} this one and would undo the pause: pause ${parents.length === 1 ? 'it' : 'them'} first (and resume ${parents.length === 1 ? 'it' : 'them'} last).`
      : '';
  switch (o.tool) {
    case 'argocd':
      if (!o.object)
        return `Argo CD Application "${o.app}" is not in the snapshot (Argo CD runs in another cluster, or in a namespace ferry could not list). Where it runs, turn its automated sync off before the migration (argocd app set ${o.app} --sync-policy none), commit ferry's changes to ${names} to its repository, then turn it back on.`;
      return `Before the migration turn its automated sync off: ${argoPause(o.object)}.${parentNote} Afterwards commit the changes ferry made to ${names} to ${repoOf(o.object)} so the next sync keeps them, check that argocd app diff ${o.object.metadata.name} shows nothing, then turn it back on as it was: ${argoResume(o.object)}.`;
    case 'flux': {
      if (!o.object)
        return `Flux ${o.kind} ${o.namespace}/${o.name} is not in the snapshot (ferry could not list it, or another cluster's Flux applies here). Suspend it before the migration (flux suspend ${o.kind.toLowerCase()} ${o.name} -n ${o.namespace}), commit ferry's changes to ${names} to its source, then resume it.`;
      return `Before the migration suspend it: ${fluxPatch(o.kind, o.namespace, o.name, true)}.${parentNote} Afterwards commit the changes ferry made to ${names} to its source${o.object.spec?.sourceRef?.name ? ` (${o.object.spec.sourceRef.kind ?? 'source'} ${o.object.spec.sourceRef.name}${o.object.spec.path ? `, path ${o.object.spec.path}` : ''})` : ''}, then resume it: ${fluxPatch(o.kind, o.namespace, o.name, false)} (or flux resume ${o.kind.toLowerCase()} ${o.name} -n ${o.namespace}, which also reconciles at once).`;
    }
    case 'iac':
      return `Pause every pipeline that runs ${o.manager} apply against this cluster for the migration. Afterwards put ferry's changes to ${names} into the ${o.manager} configuration (or adopt the objects as they are: the kit's tofu/cluster-objects/ imports them into a state of their own, see its README.md), and confirm the plan shows no changes before the pipelines run again.`;
  }
}

function severityOf(o: Owner): RuleFinding['severity'] {
  if (o.tool === 'iac') return 'risk';
  switch (o.reconcile) {
    case 'reverts':
    case 'unknown':
      return 'blocker';
    case 'next-sync':
      return 'risk';
    case 'manual':
      return 'info';
  }
}

function behaviour(o: Owner): string {
  if (o.tool === 'iac') return 'puts them back at its next apply';
  switch (o.reconcile) {
    case 'reverts':
      return o.tool === 'argocd'
        ? 'has automated sync with self-heal: it puts them back within minutes, mid-roll'
        : 'is not suspended: it puts them back at its next reconcile, within its interval';
    case 'next-sync':
      return 'has automated sync without self-heal: the next commit to its repository syncs them back';
    case 'manual':
      return o.tool === 'argocd'
        ? 'syncs only by hand: a manual sync during or after the migration puts them back'
        : 'is suspended: resuming it before the changes are committed puts them back';
    case 'unknown':
      return 'was not seen, so how it reconciles was not either';
  }
}

function ownerEvidence(o: Owner): Evidence[] {
  if (o.tool === 'iac' || !o.object) return [];
  if (o.tool === 'argocd') {
    const auto = o.object.spec?.syncPolicy?.automated;
    return [
      objectEvidence(o.object, 'spec.syncPolicy.automated', {
        observed: auto === undefined || auto === null ? '(none)' : JSON.stringify(auto),
      }),
    ];
  }
  return [objectEvidence(o.object, 'spec.suspend', { observed: String(o.object.spec?.suspend ?? false) })];
}

function subjectOf(o: Owner, first: KubeObject): RuleFinding['subject'] {
  switch (o.tool) {
    case 'argocd':
      return o.object
        ? {
            kind: 'Application',
            group: 'argoproj.io',
            name: o.object.metadata.name,
            ...(o.object.metadata.namespace ? { namespace: o.object.metadata.namespace } : {}),
          }
        : { kind: 'Application', group: 'argoproj.io', name: o.app };
    case 'flux':
      return {
        kind: o.kind,
        group: o.kind === 'Kustomization' ? 'kustomize.toolkit.fluxcd.io' : 'helm.toolkit.fluxcd.io',
        namespace: o.namespace,
        name: o.name,
      };
    case 'iac': {
      const group = first.apiVersion.includes('/') ? first.apiVersion.split('/')[0]! : '';
      return {
        kind: first.kind,
        group,
        name: first.metadata.name,
        ...(first.metadata.namespace ? { namespace: first.metadata.namespace } : {}),
      };
    }
  }
}

export interface OwnerGroup {
  owner: Owner;
  touched: { t: Touched; via: string }[];
}

/** Each owner of something the migration touches, with what it owns and the marker that says so. */
export function ownerGroups(ctx: AuditContext, index: OwnerIndex): OwnerGroup[] {
  const groups = new Map<string, OwnerGroup>();
  for (const t of touchedObjects(ctx)) {
    for (const owner of index.ownersOf(t.object)) {
      const key = ownerKey(owner);
      const g = groups.get(key) ?? { owner, touched: [] };
      g.touched.push({ t, via: owner.via });
      groups.set(key, g);
    }
  }
  return [...groups.values()];
}

/** A GitOps owner a run pauses: in the snapshot, reconciling by itself. */
export interface PauseTarget {
  kind: 'Application' | 'Kustomization' | 'HelmRelease';
  object: KubeObject;
  /** What it owns that the migration changes (or, for a parent, the owner it manages). */
  owns: KubeObject[];
}

/**
 * The owners `ferry plan` pauses before the first change, parents (an app of apps, a Kustomization
 * applying a Kustomization) before the owners they manage, so that no parent restores a pause.
 * Owners the snapshot does not hold cannot be paused from here: the audit's blocker names them.
 */
export function ownersToPause(ctx: AuditContext): PauseTarget[] {
  const index = ownerIndex(ctx.snapshot.resources.gitops);
  const out: PauseTarget[] = [];
  const visiting = new Set<KubeObject>();
  const add = (o: Owner, owns: KubeObject[]): void => {
    if (o.tool === 'iac' || !o.object || o.reconcile === 'manual' || o.reconcile === 'unknown') return;
    const have = out.find((p) => p.object === o.object);
    if (have) {
      for (const x of owns) if (!have.owns.includes(x)) have.owns.push(x);
      return;
    }
    if (visiting.has(o.object)) return; // an ownership cycle: each is paused once
    visiting.add(o.object);
    for (const parent of index.ownersOf(o.object)) add(parent, [o.object]);
    out.push({ kind: o.tool === 'argocd' ? 'Application' : o.kind, object: o.object, owns });
  };
  for (const g of ownerGroups(ctx, index))
    add(
      g.owner,
      g.touched.map((x) => x.t.object),
    );
  return out;
}

/** What one Terraform/OpenTofu manager owns that the migration changes. */
export interface IacOwned {
  manager: string;
  objects: Touched[];
}

export function iacOwned(ctx: AuditContext): IacOwned[] {
  const out: IacOwned[] = [];
  for (const g of ownerGroups(ctx, ownerIndex(ctx.snapshot.resources.gitops)))
    if (g.owner.tool === 'iac')
      out.push({ manager: describeOwner(g.owner), objects: g.touched.map((x) => x.t) });
  return out;
}

export const revertsFerryChanges: Rule = {
  id: 'gitops.reverts-ferry-changes',
  family: 'gitops',
  severity: 'blocker',
  title: 'GitOps or Terraform owns an object the migration changes',
  inputs: ['api'],
  reads: ['gitops', ...WORKLOADS, 'poddisruptionbudgets', CILIUM_CONFIG, KUBE_PROXY_CONFIG, COREDNS_CONFIG],
  description:
    "Argo CD (automated sync, self-heal), Flux (Kustomization, HelmRelease) and Terraform put back what they own: Cilium's values and OnDelete strategy, kube-proxy and CoreDNS as Talos adopts them, a replica count ferry surges under a blocking PodDisruptionBudget. Mid-roll, that undoes a preparation step or holds a drain again.",
  docs: DOCS('gitops.reverts-ferry-changes'),
  check(ctx) {
    const index = ownerIndex(ctx.snapshot.resources.gitops);
    const out: RuleFinding[] = [];
    for (const { owner, touched } of ownerGroups(ctx, index)) {
      const objects = touched.map((x) => x.t.object);
      const parents = parentsOf(index, owner);
      out.push({
        severity: severityOf(owner),
        message: `${describeOwner(owner)} owns ${objects.map(label).join(', ')}, which the migration changes (${[...new Set(touched.map((x) => x.t.why))].join('; ')}); it ${behaviour(owner)}.`,
        evidence: [
          ...touched.map((x) => objectEvidence(x.t.object, 'metadata', { observed: x.via, note: x.t.why })),
          ...ownerEvidence(owner),
        ],
        remediation: remediation(owner, parents, objects),
        subject: subjectOf(owner, objects[0]!),
        field: owner.tool === 'iac' ? 'metadata.labels' : 'owner',
      });
    }
    return out;
  },
};

export const GITOPS_RULES: Rule[] = [revertsFerryChanges];
