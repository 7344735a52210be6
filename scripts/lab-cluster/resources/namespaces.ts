/** The namespaces (kubectl get namespaces -o yaml). */
import type { Allocator } from '../allocator.js';
import type { K8s } from '../objects.js';

export function namespaces(alloc: Allocator): K8s[] {
  const ns = (name: string, created: string, labels: Record<string, string> = {}): K8s => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: alloc.meta('Namespace', name, undefined, created, {
      labels: { 'kubernetes.io/metadata.name': name, ...labels },
    }),
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  });
  return [
    ns('default', '2025-02-11T09:14:31Z'),
    ns('kube-node-lease', '2025-02-11T09:14:31Z'),
    ns('kube-public', '2025-02-11T09:14:31Z'),
    ns('kube-system', '2025-02-11T09:14:31Z'),
    ns('shop', '2025-03-04T10:10:00Z', { 'app.kubernetes.io/part-of': 'shop' }),
    ns('apps', '2025-06-02T10:58:00Z'),
  ];
}
