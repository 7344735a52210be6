/**
 * What a cluster hands out in order: the API server's resourceVersions and Cilium's per-node pod IPs.
 * One allocator per build, so objects built in the same order get the same numbers on every run.
 */
import type { NodeDef } from './cluster.js';
import type { K8s, Obj } from './objects.js';
import { uidFor } from './seed.js';

export class Allocator {
  private resourceVersion = 4_812_000;
  private readonly nextPodHost = new Map<string, number>();

  /** Object metadata as the API server stores it: UID from the object's identity, the next resourceVersion. */
  meta(
    kind: string,
    name: string,
    namespace: string | undefined,
    created: string,
    extra: Obj = {},
  ): K8s['metadata'] {
    this.resourceVersion += 17;
    return {
      name,
      ...(namespace !== undefined ? { namespace } : {}),
      uid: uidFor(`${kind}/${namespace ?? ''}/${name}`),
      resourceVersion: String(this.resourceVersion),
      creationTimestamp: created,
      ...extra,
    };
  }

  /** Pod IPs per node, handed out in creation order from the node's /24 (Cilium ipam: kubernetes). */
  podIp(n: NodeDef): string {
    const host = this.nextPodHost.get(n.name) ?? 17;
    this.nextPodHost.set(n.name, host + 1);
    return `10.244.${n.cidrIndex}.${host}`;
  }
}
