/**
 * Who else writes an object: the Argo CD Application, Flux Kustomization or HelmRelease that
 * applied it, or Terraform/OpenTofu (src/knowledge/gitops.ts has the markers and their sources).
 * Pure: built from the snapshot's `gitops` objects and the object's own labels and annotations.
 * A marker naming an owner the snapshot does not hold (Argo CD running in another cluster, a Flux
 * object in a namespace ferry could not list) is still an owner, of unknown behaviour.
 */
import {
  ARGO_INSTANCE_LABEL,
  ARGO_TRACKING_ANNOTATION,
  FLUX_HELM_LABELS,
  FLUX_KUSTOMIZE_LABELS,
  IAC_MANAGERS,
  MANAGED_BY_LABEL,
} from '../../knowledge/gitops.js';
import { gitopsKind } from '../../snapshot/gitops.js';
import type { KubeObject } from '../../snapshot/model.js';

/** How an owner behaves towards a change made in the cluster. */
export type Reconcile =
  /** Puts the object back within minutes of a change (Argo CD self-heal, an unsuspended Flux object). */
  | 'reverts'
  /** Leaves the change until its next sync, which any commit triggers (Argo CD automated sync without self-heal). */
  | 'next-sync'
  /** Syncs only when someone asks (Argo CD without automated sync, a suspended Flux object). */
  | 'manual'
  /** Not in the snapshot: how it behaves was not seen. */
  | 'unknown';

export type Owner =
  | {
      tool: 'argocd';
      /** The Application's name as the marker gives it (`NS_NAME` with applications in any namespace). */
      app: string;
      object: KubeObject | null;
      reconcile: Reconcile;
      via: string;
    }
  | {
      tool: 'flux';
      kind: 'Kustomization' | 'HelmRelease';
      namespace: string;
      name: string;
      object: KubeObject | null;
      reconcile: Reconcile;
      via: string;
    }
  | { tool: 'iac'; manager: string; via: string };

/** A stable key per owner, for grouping the objects it owns. */
export function ownerKey(o: Owner): string {
  switch (o.tool) {
    case 'argocd':
      return `argocd:${o.object ? `${o.object.metadata.namespace ?? ''}/${o.object.metadata.name}` : o.app}`;
    case 'flux':
      return `flux:${o.kind}:${o.namespace}/${o.name}`;
    case 'iac':
      return `iac:${o.manager}`;
  }
}

export function describeOwner(o: Owner): string {
  switch (o.tool) {
    case 'argocd':
      return o.object
        ? `Argo CD Application ${o.object.metadata.namespace ?? ''}/${o.object.metadata.name}`
        : `Argo CD Application "${o.app}"`;
    case 'flux':
      return `Flux ${o.kind} ${o.namespace}/${o.name}`;
    case 'iac':
      return o.manager.toLowerCase() === 'terraform' ? 'Terraform' : `OpenTofu (${o.manager})`;
  }
}

export interface OwnerIndex {
  ownersOf(obj: KubeObject): Owner[];
}

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

/** `NAMESPACE_NAME_GROUP_KIND`, the id a Kustomization's inventory gives an object. */
export function inventoryId(o: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): string {
  return `${o.metadata.namespace ?? ''}_${o.metadata.name}_${groupOf(o.apiVersion)}_${o.kind}`;
}

function argoReconcile(app: KubeObject): Reconcile {
  const auto = app.spec?.syncPolicy?.automated;
  // `automated: {}` turns auto-sync on; `enabled: false` (Argo CD 3.x) keeps the block but turns it off.
  if (auto === undefined || auto === null || auto.enabled === false) return 'manual';
  return auto.selfHeal === true ? 'reverts' : 'next-sync';
}

function fluxReconcile(o: KubeObject): Reconcile {
  return o.spec?.suspend === true ? 'manual' : 'reverts';
}

/** Helm's release-name/namespace annotations, set on everything `helm` (and helm-controller) installs. */
const HELM_RELEASE_NAME = 'meta.helm.sh/release-name';
const HELM_RELEASE_NAMESPACE = 'meta.helm.sh/release-namespace';

/** The Helm release a HelmRelease manages: spec.releaseName, else [targetNamespace-]name (Flux's default). */
function helmReleaseOf(hr: KubeObject): string {
  const ns = hr.metadata.namespace ?? 'default';
  const release = hr.spec?.releaseName;
  if (typeof release === 'string' && release) return `${hr.spec?.targetNamespace ?? ns}/${release}`;
  const target = hr.spec?.targetNamespace;
  return typeof target === 'string' && target
    ? `${target}/${target}-${hr.metadata.name}`
    : `${ns}/${hr.metadata.name}`;
}

export function ownerIndex(gitops: readonly KubeObject[]): OwnerIndex {
  const apps = new Map<string, KubeObject>();
  const kustomizations = new Map<string, KubeObject>();
  const helmReleases = new Map<string, KubeObject>();
  const byInventory = new Map<string, KubeObject[]>();
  const byHelmRelease = new Map<string, KubeObject>();
  const byArgoResource = new Map<string, KubeObject[]>();
  const push = (m: Map<string, KubeObject[]>, k: string, v: KubeObject) => {
    const l = m.get(k);
    if (l) l.push(v);
    else m.set(k, [v]);
  };
  for (const o of gitops) {
    const ns = o.metadata.namespace ?? '';
    switch (gitopsKind(o)) {
      case 'Application':
        // Both spellings a tracking id may use: NAME, and NS_NAME for applications in any namespace.
        apps.set(o.metadata.name, o);
        apps.set(`${ns}_${o.metadata.name}`, o);
        for (const r of Array.isArray(o.status?.resources) ? o.status.resources : [])
          push(byArgoResource, `${r.group ?? ''}/${r.kind}/${r.namespace ?? ''}/${r.name}`, o);
        break;
      case 'Kustomization':
        kustomizations.set(`${ns}/${o.metadata.name}`, o);
        for (const e of Array.isArray(o.status?.inventory?.entries) ? o.status.inventory.entries : [])
          if (typeof e.id === 'string') push(byInventory, e.id, o);
        break;
      case 'HelmRelease':
        helmReleases.set(`${ns}/${o.metadata.name}`, o);
        byHelmRelease.set(helmReleaseOf(o), o);
        break;
    }
  }

  const argo = (app: string, via: string): Owner => {
    const object = apps.get(app) ?? null;
    return { tool: 'argocd', app, object, reconcile: object ? argoReconcile(object) : 'unknown', via };
  };
  const flux = (
    kind: 'Kustomization' | 'HelmRelease',
    namespace: string,
    name: string,
    via: string,
  ): Owner => {
    const object =
      (kind === 'Kustomization' ? kustomizations : helmReleases).get(`${namespace}/${name}`) ?? null;
    return {
      tool: 'flux',
      kind,
      namespace,
      name,
      object,
      reconcile: object ? fluxReconcile(object) : 'unknown',
      via,
    };
  };

  return {
    ownersOf(obj) {
      const found = new Map<string, Owner>();
      const add = (o: Owner) => {
        if (!found.has(ownerKey(o))) found.set(ownerKey(o), o);
      };
      const labels = obj.metadata.labels ?? {};
      const annotations = obj.metadata.annotations ?? {};

      const tracking = annotations[ARGO_TRACKING_ANNOTATION];
      if (typeof tracking === 'string' && tracking.includes(':'))
        add(
          argo(
            tracking.slice(0, tracking.indexOf(':')),
            `annotation ${ARGO_TRACKING_ANNOTATION}: ${tracking}`,
          ),
        );
      const instance = labels[ARGO_INSTANCE_LABEL];
      // Helm charts set this label too: it names an owner only when such an Application exists.
      if (instance && apps.has(instance)) add(argo(instance, `label ${ARGO_INSTANCE_LABEL}: ${instance}`));
      const group = groupOf(obj.apiVersion);
      for (const app of byArgoResource.get(
        `${group}/${obj.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name}`,
      ) ?? [])
        add(argo(app.metadata.name, `listed in the status.resources of Application ${app.metadata.name}`));

      const kName = labels[FLUX_KUSTOMIZE_LABELS.name];
      const kNs = labels[FLUX_KUSTOMIZE_LABELS.namespace];
      if (kName && kNs)
        add(flux('Kustomization', kNs, kName, `labels ${FLUX_KUSTOMIZE_LABELS.name}: ${kName}`));
      for (const k of byInventory.get(inventoryId(obj)) ?? [])
        add(
          flux(
            'Kustomization',
            k.metadata.namespace ?? '',
            k.metadata.name,
            `in the status.inventory of Kustomization ${k.metadata.name}`,
          ),
        );

      const hName = labels[FLUX_HELM_LABELS.name];
      const hNs = labels[FLUX_HELM_LABELS.namespace];
      if (hName && hNs) add(flux('HelmRelease', hNs, hName, `labels ${FLUX_HELM_LABELS.name}: ${hName}`));
      const release = annotations[HELM_RELEASE_NAME];
      const releaseNs = annotations[HELM_RELEASE_NAMESPACE];
      const hr = release && releaseNs ? byHelmRelease.get(`${releaseNs}/${release}`) : undefined;
      if (hr)
        add(
          flux(
            'HelmRelease',
            hr.metadata.namespace ?? '',
            hr.metadata.name,
            `annotation ${HELM_RELEASE_NAME}: ${release} (the release of HelmRelease ${hr.metadata.name})`,
          ),
        );

      const manager = labels[MANAGED_BY_LABEL];
      if (manager && IAC_MANAGERS.includes(manager.toLowerCase()))
        add({ tool: 'iac', manager, via: `label ${MANAGED_BY_LABEL}: ${manager}` });
      return [...found.values()];
    },
  };
}
