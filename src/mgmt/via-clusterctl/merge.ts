/**
 * `--via clusterctl`: the archive holds what `clusterctl move --to-directory` wrote, plus what move
 * drops and ferry's own read supplies (capi.md §5.1, H12, H14): an object move wrote without its
 * status gets the status ferry read, objects move left out (an unowned `<cluster>-talos` Secret,
 * the inventory) are added with ferry's reason. Move writes Clusters paused (`spec.paused: true`)
 * and ClusterClasses with the pause annotation: the archive keeps them as they were before. Pure.
 */

import { PAUSED_ANNOTATION } from '../../capi/view.js';
import type { Selected } from '../graph.js';
import type { KubeObject } from '../model.js';

const key = (o: KubeObject) => `${o.kind}|${o.metadata.namespace ?? ''}|${o.metadata.name}`;

export function mergeMoved(ours: Selected[], moved: KubeObject[]): Selected[] {
  const byKey = new Map(ours.map((s) => [key(s.object), s]));
  const out: Selected[] = [];
  const seen = new Set<string>();
  for (const m of moved) {
    const k = key(m);
    if (seen.has(k)) continue;
    seen.add(k);
    const mine = byKey.get(k);
    let object: KubeObject = m;
    if (object.status === undefined && mine?.object.status !== undefined)
      object = { ...object, status: mine.object.status };
    if (object.kind === 'Cluster') {
      const spec = { ...object.spec };
      const was = mine?.object.spec?.paused;
      if (was === undefined) delete spec.paused;
      else spec.paused = was;
      object = { ...object, spec };
    }
    if (object.kind === 'ClusterClass' && object.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined) {
      const annotations = { ...object.metadata.annotations };
      const was = mine?.object.metadata.annotations?.[PAUSED_ANNOTATION];
      if (was === undefined) delete annotations[PAUSED_ANNOTATION];
      else annotations[PAUSED_ANNOTATION] = was;
      object = { ...object, metadata: { ...object.metadata, annotations } };
    }
    out.push({ object, reason: mine?.reason ?? 'clusterctl-move' });
  }
  for (const s of ours) if (!seen.has(key(s.object))) out.push(s);
  return out;
}
