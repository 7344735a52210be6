/**
 * The lab's own canary workload (docs/design.md "The lab"): a Deployment whose pods the lab runs for real, as HTTP
 * listeners on loopback (runtime.ts), behind a Service the lab fronts (lb/service-front.ts), with a
 * PodDisruptionBudget, a readiness probe, a preStop delay and a termination grace period, so that a
 * rehearsal measures availability the way a user of the cluster feels it. Every lab gets one; it
 * is labelled as the lab's own and never part of a snapshot. Pure: object bodies only.
 */
import type { KObj } from '../apiserver/object.js';
import { apiPath, at, spec } from './world.js';

/** On every object the lab adds of its own accord (never the snapshot's). */
export const LAB_OWNED_LABEL = 'app.kubernetes.io/managed-by';
export const LAB_OWNED_VALUE = 'ferry-lab';
/** On a pod template: the lab runtime runs this pod's container as a real HTTP listener. */
export const RUNTIME_LABEL = 'lab.ferry.dev/runtime';
export const RUNTIME_HTTP = 'http';

export const CANARY_NAMESPACE = 'ferry-lab';
export const CANARY_NAME = 'canary';
export const CANARY_PORT = 8080;

export type CanarySpec = {
  /** At least 3. Default 3. */
  replicas: number;
  /**
   * The preStop sleep: long enough for the Service front to drop the endpoint first, on a loaded
   * machine too (the endpoint update waits for a pass of the nodes controller and a read of the
   * API). Default 3 s.
   */
  preStopSeconds: number;
  /** Default 10 s. */
  terminationGraceSeconds: number;
};

export const DEFAULT_CANARY: CanarySpec = { replicas: 3, preStopSeconds: 3, terminationGraceSeconds: 10 };

/** Whether the lab runtime runs this pod's container for real. */
export function runsForReal(pod: KObj): boolean {
  return pod.metadata.labels?.[RUNTIME_LABEL] === RUNTIME_HTTP;
}

/** The preStop sleep of a pod's first container, in ms (0 without one). */
export function preStopMs(pod: KObj): number {
  const s = at(spec(pod).containers, 0, 'lifecycle', 'preStop', 'sleep', 'seconds');
  return typeof s === 'number' && s > 0 ? s * 1000 : 0;
}

const owned = { [LAB_OWNED_LABEL]: LAB_OWNED_VALUE };

/** The canary's objects in creation order, each with the collection path it is POSTed to. */
export function canaryObjects(spec: CanarySpec = DEFAULT_CANARY): { path: string; body: KObj }[] {
  if (!Number.isInteger(spec.replicas) || spec.replicas < 3)
    throw new RangeError(`the canary needs at least 3 replicas; got ${spec.replicas}`);
  const ns = CANARY_NAMESPACE;
  const selector = { app: CANARY_NAME };
  const meta = { name: CANARY_NAME, namespace: ns, labels: { ...owned, ...selector } };
  return [
    {
      path: apiPath('v1', 'namespaces', undefined),
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: owned } },
    },
    {
      path: apiPath('apps/v1', 'deployments', ns),
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: meta,
        spec: {
          replicas: spec.replicas,
          selector: { matchLabels: selector },
          template: {
            metadata: { labels: { ...owned, ...selector, [RUNTIME_LABEL]: RUNTIME_HTTP } },
            spec: {
              terminationGracePeriodSeconds: spec.terminationGraceSeconds,
              containers: [
                {
                  name: 'http',
                  image: 'ferry.lab/canary:1',
                  ports: [{ name: 'http', containerPort: CANARY_PORT, protocol: 'TCP' }],
                  readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1 },
                  lifecycle: { preStop: { sleep: { seconds: spec.preStopSeconds } } },
                  resources: { requests: { cpu: '10m', memory: '16Mi' } },
                },
              ],
            },
          },
        },
      },
    },
    {
      path: apiPath('policy/v1', 'poddisruptionbudgets', ns),
      body: {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: meta,
        spec: { maxUnavailable: 1, selector: { matchLabels: selector } },
      },
    },
    {
      path: apiPath('v1', 'services', ns),
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta,
        spec: {
          selector,
          ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
        },
      },
    },
  ];
}
