import { describe, expect, it } from 'vitest';
import type { KObj } from '../apiserver/object.js';
import { desiredSlice, endpointSliceActions } from './endpoints.js';
import { pod, world } from './testing.js';

const svc: KObj = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'shop', uid: 'uid-web' },
  spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
};

function webPod(name: string, opts: { ready: boolean; terminating?: boolean; ip?: string }): KObj {
  const p = pod(name, {
    ns: 'shop',
    node: 'w1',
    phase: 'Running',
    ready: opts.ready,
    labels: { app: 'web' },
    spec: { containers: [{ name: 'c', image: 'i', ports: [{ name: 'http', containerPort: 8080 }] }] },
    ...(opts.terminating && { deletionTimestamp: '2026-01-01T00:10:10Z' }),
  });
  if (opts.ip !== undefined) p.status.podIP = opts.ip;
  return p;
}

describe('the EndpointSlice controller', () => {
  it('lists the selected pods with an IP, ready only when Ready and not terminating', () => {
    const w = world({
      pods: [
        webPod('a', { ready: true, ip: '10.244.1.2' }),
        webPod('b', { ready: true, terminating: true, ip: '10.244.1.3' }),
        webPod('c', { ready: false, ip: '10.244.1.4' }),
        webPod('d', { ready: true }),
        {
          ...webPod('e', { ready: true, ip: '10.244.1.5' }),
          metadata: { ...webPod('e', { ready: true }).metadata, namespace: 'other' },
        },
      ],
      services: [svc],
    });
    const slice = desiredSlice(svc, w)!;
    expect(slice.metadata.labels).toMatchObject({ 'kubernetes.io/service-name': 'web' });
    expect(slice.ports).toEqual([{ name: 'http', protocol: 'TCP', port: 8080 }]);
    expect(
      (slice.endpoints as { addresses: string[]; conditions: object; targetRef: { name: string } }[]).map(
        (e) => [e.targetRef.name, e.addresses[0], e.conditions],
      ),
    ).toEqual([
      ['a', '10.244.1.2', { ready: true, serving: true, terminating: false }],
      ['b', '10.244.1.3', { ready: false, serving: true, terminating: true }],
      ['c', '10.244.1.4', { ready: false, serving: false, terminating: false }],
    ]);
  });

  it('creates the slice, patches it when an endpoint changes, and leaves it alone otherwise', () => {
    const pods = [webPod('a', { ready: true, ip: '10.244.1.2' })];
    const first = endpointSliceActions(world({ pods, services: [svc] }));
    expect(first).toMatchObject([
      { kind: 'create', path: '/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices' },
    ]);
    const slice = (first[0] as { body: KObj }).body;
    expect(endpointSliceActions(world({ pods, services: [svc], endpointslices: [slice] }))).toEqual([]);
    const terminating = [webPod('a', { ready: true, terminating: true, ip: '10.244.1.2' })];
    expect(
      endpointSliceActions(world({ pods: terminating, services: [svc], endpointslices: [slice] })),
    ).toMatchObject([
      { kind: 'patch', path: '/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices/web' },
    ]);
    // A Service without a selector has its endpoints managed by someone else.
    expect(endpointSliceActions(world({ pods, services: [{ ...svc, spec: { ports: [] } }] }))).toEqual([]);
  });
});
