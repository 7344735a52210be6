/**
 * The EndpointSlice controller of kube-controller-manager, as far as the lab needs it: for every
 * Service with a selector, one slice (named after the Service, label kubernetes.io/service-name)
 * listing the pods it selects that have an IP, with the conditions kube-proxy routes by: ready
 * (Ready and not terminating), serving (Ready) and terminating. A real controller splits large
 * Services over several slices of generated names; one slice per Service is enough for a lab.
 * Pure: World in, Actions out.
 */
import type { KObj } from '../apiserver/object.js';
import {
  type Action,
  apiPath,
  asArray,
  at,
  isPodReady,
  isTerminating,
  nameOf,
  nodeNameOf,
  nsOf,
  podPhase,
  spec,
  stableJson,
  status,
  uidOf,
  type World,
} from './world.js';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
const MANAGED_BY = 'endpointslice-controller.k8s.io';

function selects(selector: Record<string, string>, pod: KObj): boolean {
  const labels = pod.metadata.labels ?? {};
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** The container port a Service port's targetPort names (a number, or a named container port). */
function targetPort(svcPort: unknown, pods: KObj[]): number | undefined {
  const t = at(svcPort, 'targetPort') ?? at(svcPort, 'port');
  if (typeof t === 'number') return t;
  for (const p of pods) {
    for (const c of asArray(spec(p).containers)) {
      const found = asArray(at(c, 'ports')).find((x) => at(x, 'name') === t);
      const port = at(found, 'containerPort');
      if (typeof port === 'number') return port;
    }
  }
  return undefined;
}

/** The slice the controller wants for a Service (undefined: the Service has no selector). */
export function desiredSlice(svc: KObj, world: World): KObj | undefined {
  const raw = spec(svc).selector;
  if (!raw || typeof raw !== 'object' || Object.keys(raw).length === 0) return undefined;
  const selector = raw as Record<string, string>;
  const ns = nsOf(svc);
  const pods = world.pods
    .filter((p) => nsOf(p) === ns && selects(selector, p))
    .filter((p) => podPhase(p) !== 'Succeeded' && podPhase(p) !== 'Failed')
    .filter((p) => typeof status(p).podIP === 'string')
    .sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
  const ports = asArray(spec(svc).ports).map((sp) => {
    const name = at(sp, 'name');
    const port = targetPort(sp, pods);
    return {
      ...(typeof name === 'string' && name !== '' && { name }),
      protocol: (at(sp, 'protocol') as string | undefined) ?? 'TCP',
      ...(port !== undefined && { port }),
    };
  });
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: nameOf(svc),
      namespace: ns,
      labels: { [SERVICE_NAME_LABEL]: nameOf(svc), [MANAGED_BY_LABEL]: MANAGED_BY },
      ownerReferences: [
        {
          apiVersion: 'v1',
          kind: 'Service',
          name: nameOf(svc),
          uid: uidOf(svc),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    addressType: 'IPv4',
    endpoints: pods.map((p) => {
      const terminating = isTerminating(p);
      const ready = isPodReady(p);
      return {
        addresses: [status(p).podIP],
        conditions: { ready: ready && !terminating, serving: ready, terminating },
        ...(nodeNameOf(p) && { nodeName: nodeNameOf(p) }),
        targetRef: { kind: 'Pod', namespace: ns, name: nameOf(p), uid: uidOf(p) },
      };
    }),
    ports,
  };
}

export function endpointSliceActions(world: World): Action[] {
  const actions: Action[] = [];
  const slices = world.endpointslices ?? [];
  for (const svc of world.services ?? []) {
    const want = desiredSlice(svc, world);
    if (!want) continue;
    const have = slices.find((s) => nsOf(s) === nsOf(svc) && nameOf(s) === nameOf(svc));
    const path = apiPath('discovery.k8s.io/v1', 'endpointslices', nsOf(svc));
    if (!have) {
      actions.push({
        kind: 'create',
        path,
        body: want,
        why: `endpointslice for service ${nsOf(svc)}/${nameOf(svc)}`,
      });
      continue;
    }
    if (
      stableJson(at(have, 'endpoints') ?? []) === stableJson(want['endpoints']) &&
      stableJson(at(have, 'ports') ?? []) === stableJson(want['ports'])
    )
      continue;
    actions.push({
      kind: 'patch',
      path: `${path}/${encodeURIComponent(nameOf(svc))}`,
      // A merge patch replaces the lists whole, as an update would.
      patch: { endpoints: want['endpoints'], ports: want['ports'] },
      why: `endpoints of service ${nsOf(svc)}/${nameOf(svc)}: ${asArray(want['endpoints']).filter((e) => at(e, 'conditions', 'ready') === true).length} ready`,
    });
  }
  return actions;
}
