/** A bare debugging pod somebody left behind in `default`: no controller, NET_ADMIN. */
import { nodeByName } from '../cluster.js';
import { makePod } from '../pod.js';
import { template } from '../pod-template.js';
import type { Workloads } from './workloads.js';

export function addNetshoot(w: Workloads): void {
  w.pods.push(
    makePod(w.alloc, {
      namespace: 'default',
      name: 'netshoot',
      template: template(
        { run: 'netshoot' },
        {
          containers: [
            {
              command: ['sleep', 'infinity'],
              image: 'docker.io/nicolaka/netshoot:v0.13',
              name: 'netshoot',
              securityContext: { capabilities: { add: ['NET_ADMIN', 'NET_RAW'] } },
            },
          ],
        },
      ),
      node: nodeByName('worker-2'),
      created: '2026-09-03T15:27:12Z',
    }),
  );
}
