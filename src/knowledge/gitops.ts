/**
 * How GitOps and infrastructure-as-code tools mark the objects they own, and how each is paused.
 * An owner that reconciles puts back what ferry changes (Cilium's values, the kube-proxy
 * DaemonSet's labels, a workload's replicas), usually within minutes and mid-roll.
 *
 * Sources (checked 2026-12):
 * - Argo CD resource tracking: https://argo-cd.readthedocs.io/en/stable/user-guide/resource_tracking/
 *   (annotation `argocd.argoproj.io/tracking-id: APP:GROUP/KIND:NAMESPACE/NAME`, the default
 *   from Argo CD 3.0; label `app.kubernetes.io/instance` before, which Helm charts also set, so
 *   that label alone names an owner only when an Application of that name exists).
 *   Automated sync and self-heal: https://argo-cd.readthedocs.io/en/stable/user-guide/auto_sync/
 * - Flux: kustomize-controller and helm-controller label what they apply with
 *   `kustomize.toolkit.fluxcd.io/{name,namespace}` and `helm.toolkit.fluxcd.io/{name,namespace}`;
 *   a Kustomization lists what it applied in `status.inventory.entries[].id`
 *   (`NAMESPACE_NAME_GROUP_KIND`); `spec.suspend: true` stops either from reconciling
 *   (https://fluxcd.io/flux/components/kustomize/kustomizations/,
 *   https://fluxcd.io/flux/components/helm/helmreleases/).
 * - Keeping an object when it leaves the repository (Talos takes kube-proxy and CoreDNS over):
 *   Argo CD's `argocd.argoproj.io/sync-options: Prune=false` on the object
 *   (https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/), Flux's
 *   `kustomize.toolkit.fluxcd.io/prune: disabled` (the Kustomization page above, "Garbage
 *   collection"), Helm's `helm.sh/resource-policy: keep` for what a chart stops rendering
 *   (https://helm.sh/docs/howto/charts_tips_and_tricks/).
 * - Importing an object into OpenTofu: the kubernetes provider's `kubernetes_manifest` takes the
 *   id `apiVersion=…,kind=…,namespace=…,name=…`
 *   (https://registry.terraform.io/providers/hashicorp/kubernetes/latest/docs/resources/manifest);
 *   `tofu plan -generate-config-out=FILE` writes the configuration of import blocks that have
 *   none (OpenTofu 1.6+, https://opentofu.org/docs/language/import/generating-configuration/).
 * - Terraform/OpenTofu's kubernetes and helm providers add no marker of their own; teams label
 *   what they manage `app.kubernetes.io/managed-by: terraform` (the recommended label's value is
 *   the managing tool: https://kubernetes.io/docs/concepts/overview/working-with-objects/common-labels/).
 */

export const ARGO_TRACKING_ANNOTATION = 'argocd.argoproj.io/tracking-id';
/** Argo CD's tracking label before 3.0 (and with `application.resourceTrackingMethod: label`). */
export const ARGO_INSTANCE_LABEL = 'app.kubernetes.io/instance';

export const FLUX_KUSTOMIZE_LABELS = {
  name: 'kustomize.toolkit.fluxcd.io/name',
  namespace: 'kustomize.toolkit.fluxcd.io/namespace',
} as const;
export const FLUX_HELM_LABELS = {
  name: 'helm.toolkit.fluxcd.io/name',
  namespace: 'helm.toolkit.fluxcd.io/namespace',
} as const;

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** `app.kubernetes.io/managed-by` values that mean Terraform or OpenTofu (compared lower-case). */
export const IAC_MANAGERS: readonly string[] = ['terraform', 'opentofu', 'tofu'];

/** The GitOps objects a snapshot keeps, by apiVersion group (their kinds are not unique: kustomize's own Kustomization). */
export const GITOPS_GROUPS: Readonly<Record<string, 'Application' | 'Kustomization' | 'HelmRelease'>> = {
  'argoproj.io': 'Application',
  'kustomize.toolkit.fluxcd.io': 'Kustomization',
  'helm.toolkit.fluxcd.io': 'HelmRelease',
};

/** The resource names kubectl needs to patch each owner (fully qualified: `kustomization` alone is ambiguous). */
export const GITOPS_RESOURCE = {
  Application: 'applications.argoproj.io',
  Kustomization: 'kustomizations.kustomize.toolkit.fluxcd.io',
  HelmRelease: 'helmreleases.helm.toolkit.fluxcd.io',
} as const;

/** What keeps an object alive once it leaves its owner's repository, by owner kind. */
export const KEEP_ON_REMOVAL = {
  Application: { key: 'argocd.argoproj.io/sync-options', value: 'Prune=false' },
  Kustomization: { key: 'kustomize.toolkit.fluxcd.io/prune', value: 'disabled' },
  HelmRelease: { key: 'helm.sh/resource-policy', value: 'keep' },
} as const;
