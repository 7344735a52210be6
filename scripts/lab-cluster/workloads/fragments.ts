/**
 * Pod-spec fragments that recur across the add-ons. Each call returns fresh objects: the YAML writer
 * turns an object that appears twice in one document into an anchor and alias.
 */
import { CLUSTER } from '../cluster.js';
import type { Obj } from '../objects.js';

/** An environment variable from the downward API (`spec.nodeName`, `metadata.namespace`). */
export function fieldEnv(name: string, fieldPath: string): Obj {
  return { name, valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath } } };
}

/** An environment variable from an optional ConfigMap key. */
export function configMapKeyEnv(name: string, configMap: string, key: string): Obj {
  return { name, valueFrom: { configMapKeyRef: { key, name: configMap, optional: true } } };
}

/**
 * The API endpoint for components that cannot use the `kubernetes` Service (Cilium replaces
 * kube-proxy, so it must reach the apiserver before Services work): the load-balanced endpoint.
 */
export function apiServerEnv(): Obj[] {
  return [
    { name: 'KUBERNETES_SERVICE_HOST', value: CLUSTER.endpointHost },
    { name: 'KUBERNETES_SERVICE_PORT', value: String(CLUSTER.endpointPort) },
  ];
}

/** A hostPath volume; without `type` the API server fills in `''` (no check). */
export function hostPathVolume(name: string, path: string, type?: string): Obj {
  return { hostPath: type === undefined ? { path } : { path, type }, name };
}
