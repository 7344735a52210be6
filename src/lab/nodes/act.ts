/**
 * How one pass of the lab nodes controller sends what it decided: several writes in flight, the
 * actions on one object in the order decided.
 */
import { inParallel } from '../../util/parallel.js';
import { type Action, apiPath } from './world.js';

/**
 * Writes of one pass in flight at once. The real kubelets and controllers write independently of
 * one another (each kubelet its node, the controllers through several workers): one pass's writes
 * queued one behind the other made a pass take 20 s once writes slowed to a few hundred ms each
 * (a loaded etcd during a rehearsal's worker phase), and every Lease was overdue again by the
 * next pass. The client's pool has as many connections.
 */
export const ACT_CONCURRENCY = 8;

/** The object an action writes ("…/pods/web-0"; a node and its status are one object). */
export function actionObject(a: Action): string {
  switch (a.kind) {
    case 'create': {
      const name = typeof a.body.metadata?.name === 'string' ? a.body.metadata.name : '';
      return `${a.path}/${name}`;
    }
    case 'patch':
    case 'delete':
      return a.path.replace(/\/(status|scale|binding)$/, '');
    case 'bind':
      return apiPath('v1', 'pods', a.namespace, a.name);
    default:
      return a satisfies never;
  }
}

/**
 * Runs `act` on every action, at most `limit` at a time; actions on the same object in the order
 * decided (a pod deleted, then created again under its name; a node's taint, then its status).
 */
export async function actConcurrently(
  actions: readonly Action[],
  limit: number,
  act: (a: Action) => Promise<void>,
): Promise<void> {
  const lanes = new Map<string, Action[]>();
  for (const a of actions) {
    const k = actionObject(a);
    const lane = lanes.get(k);
    if (lane) lane.push(a);
    else lanes.set(k, [a]);
  }
  // act never throws (the controller counts failures itself), so every lane runs.
  await inParallel([...lanes.values()], limit, async (lane) => {
    for (const a of lane) await act(a);
  });
}
