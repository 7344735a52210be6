/** The mirror pods the kubelet of each control plane creates for its static pods. */
import { CONTROL_PLANES, LAST_REBOOT } from '../cluster.js';
import { STATIC_COMPONENTS, staticManifests } from '../control-plane.js';
import type { K8s, Obj } from '../objects.js';
import { makePod } from '../pod.js';
import { template } from '../pod-template.js';
import { at, hex } from '../seed.js';
import type { Workloads } from './workloads.js';

export function addMirrorPods(w: Workloads, nodes: Map<string, K8s>): void {
  for (const cp of CONTROL_PLANES) {
    const manifests = staticManifests(cp);
    const nodeObj = nodes.get(cp.name);
    if (!nodeObj) throw new Error(`no Node object for ${cp.name}`);
    for (const component of STATIC_COMPONENTS) {
      const m = manifests[component];
      const hash = hex(`config-hash/${cp.name}/${component}`, 32);
      const seen = at(LAST_REBOOT + 70_000 + STATIC_COMPONENTS.indexOf(component) * 1000);
      const metaAnn = (m.metadata['annotations'] as Obj | undefined) ?? {};
      w.pods.push(
        makePod(w.alloc, {
          namespace: 'kube-system',
          name: `${component}-${cp.name}`,
          template: template(m.metadata['labels'] as Record<string, string>, m['spec'] as Obj),
          node: cp,
          created: at(LAST_REBOOT + 80_000 + STATIC_COMPONENTS.indexOf(component) * 1000),
          mirror: {
            annotations: {
              ...metaAnn,
              'kubernetes.io/config.hash': hash,
              'kubernetes.io/config.mirror': hash,
              'kubernetes.io/config.seen': seen.replace('Z', '.418233125Z'),
              'kubernetes.io/config.source': 'file',
            },
            ownerNode: nodeObj,
          },
        }),
      );
    }
  }
}
