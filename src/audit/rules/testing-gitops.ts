/** Builders of GitOps owners and of the objects they own, for the rule's and the kit's tests. */
import type { KubeObject } from '../../snapshot/model.js';
import { daemonSet } from './testing-network.js';

/** The Cilium agent as a Helm install leaves it, with extra metadata (owner markers). */
export function cilium(
  meta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): KubeObject {
  const ds = daemonSet('kube-system', 'cilium', {
    podSpec: { containers: [{ name: 'cilium-agent', image: 'quay.io/cilium/cilium:v1.16.6' }] },
  });
  ds.metadata.labels = { ...ds.metadata.labels, ...meta.labels };
  if (meta.annotations) ds.metadata.annotations = meta.annotations;
  return ds;
}

export function app(
  name: string,
  automated: unknown,
  extra: { namespace?: string; tracking?: string } = {},
): KubeObject {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name,
      namespace: extra.namespace ?? 'argocd',
      ...(extra.tracking ? { annotations: { 'argocd.argoproj.io/tracking-id': extra.tracking } } : {}),
    },
    spec: {
      source: { repoURL: 'https://git.example.com/platform.git', path: `apps/${name}` },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'kube-system' },
      ...(automated === undefined ? {} : { syncPolicy: { automated } }),
    },
  };
}

export function kustomization(
  name: string,
  opts: { suspend?: boolean; inventory?: string[]; labels?: Record<string, string> } = {},
): KubeObject {
  return {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name, namespace: 'flux-system', ...(opts.labels ? { labels: opts.labels } : {}) },
    spec: {
      interval: '10m',
      path: `./infrastructure/${name}`,
      sourceRef: { kind: 'GitRepository', name: 'flux-system' },
      ...(opts.suspend === undefined ? {} : { suspend: opts.suspend }),
    },
    ...(opts.inventory
      ? { status: { inventory: { entries: opts.inventory.map((id) => ({ id, v: 'v1' })) } } }
      : {}),
  };
}

export const tracking = (appName: string, o: KubeObject) =>
  `${appName}:${o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : ''}/${o.kind}:${o.metadata.namespace}/${o.metadata.name}`;
