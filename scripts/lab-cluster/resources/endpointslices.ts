/** The EndpointSlice of the `kubernetes` Service: one endpoint per control plane. */
import type { Allocator } from '../allocator.js';
import { CLUSTER, CONTROL_PLANES } from '../cluster.js';
import type { K8s } from '../objects.js';

export function endpointSlices(alloc: Allocator): K8s[] {
  return [
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: alloc.meta('EndpointSlice', 'kubernetes', 'default', '2025-02-11T09:14:30Z', {
        generation: 9,
        labels: { 'kubernetes.io/service-name': 'kubernetes' },
      }),
      addressType: 'IPv4',
      endpoints: CONTROL_PLANES.map((c) => ({ addresses: [c.ip], conditions: { ready: true } })),
      ports: [{ name: 'https', port: CLUSTER.endpointPort, protocol: 'TCP' }],
    },
  ];
}
