import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import type { KubeObject, SourceRef } from './model.js';
import { staticPodFromManifest, staticPodFromMirrorPod } from './static-pods.js';

const manifest = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'kube-apiserver', namespace: 'kube-system', labels: { component: 'kube-apiserver' } },
  spec: {
    containers: [
      {
        name: 'kube-apiserver',
        image: 'registry.k8s.io/kube-apiserver:v1.32.3',
        command: ['kube-apiserver', '--secure-port=6443', '--anonymous-auth'],
        args: ['--v', '2'],
      },
    ],
    volumes: [
      { name: 'k8s-certs', hostPath: { path: '/etc/kubernetes/pki', type: 'DirectoryOrCreate' } },
      { name: 'tmp', emptyDir: {} },
      { name: 'ca', hostPath: { path: '/etc/ssl/certs' } },
    ],
  },
};
const src: SourceRef = { kind: 'file', path: 'm/kube-apiserver.yaml', line: 1 };

describe('staticPodFromManifest', () => {
  it('reads component, image, command + args as flags and hostPath volumes', () => {
    expect(staticPodFromManifest(manifest, src, 'cp-1')).toEqual({
      component: 'kube-apiserver',
      node: 'cp-1',
      image: 'registry.k8s.io/kube-apiserver:v1.32.3',
      command: ['kube-apiserver', '--secure-port=6443', '--anonymous-auth', '--v', '2'],
      flags: [
        { name: 'secure-port', value: '6443' },
        { name: 'anonymous-auth', value: 'true' },
        { name: 'v', value: '2' },
      ],
      hostPathVolumes: [
        { name: 'k8s-certs', path: '/etc/kubernetes/pki', type: 'DirectoryOrCreate' },
        { name: 'ca', path: '/etc/ssl/certs' },
      ],
      source: src,
    });
  });

  it('names a pod without a component label after its metadata.name', () => {
    const vip = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'kube-vip' },
      spec: { containers: [{ name: 'vip', args: ['manager'] }] },
    };
    const sp = staticPodFromManifest(vip, src);
    expect(sp.component).toBe('kube-vip');
    expect(sp.node).toBeUndefined();
    expect(sp.command).toEqual(['manager']);
  });

  it('refuses a document that is not a Pod, naming the file and line', () => {
    const at: SourceRef = { kind: 'file', path: 'manifests/x.yaml', line: 7 };
    let err: unknown;
    try {
      staticPodFromManifest({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'x' } }, at);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).message).toContain('found kind Deployment');
    expect((err as FerryError).location).toMatchObject({ file: 'manifests/x.yaml', line: 7, field: 'kind' });
    expect(() => staticPodFromManifest('text', at)).toThrow(/Pod manifest/);
    expect(() => staticPodFromManifest({ kind: 'Pod', metadata: { name: 'p' }, spec: {} }, at)).toThrow(
      /no containers/,
    );
    expect(() =>
      staticPodFromManifest(
        { kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ command: 'a b' }] } },
        at,
      ),
    ).toThrow(/list of strings/);
  });
});

describe('staticPodFromMirrorPod', () => {
  const mirror: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'etcd-cp-2',
      namespace: 'kube-system',
      annotations: { 'kubernetes.io/config.mirror': 'abc' },
    },
    spec: { nodeName: 'cp-2', containers: [{ name: 'etcd', command: ['etcd', '--name=cp-2'] }] },
  };

  it('reads a mirror pod, strips the node suffix and points at the Pod object', () => {
    const sp = staticPodFromMirrorPod(mirror);
    expect(sp).toMatchObject({
      component: 'etcd',
      node: 'cp-2',
      flags: [{ name: 'name', value: 'cp-2' }],
      source: { kind: 'object', objectKind: 'Pod', namespace: 'kube-system', name: 'etcd-cp-2' },
    });
  });

  it('ignores pods that are not mirror pods in kube-system', () => {
    expect(
      staticPodFromMirrorPod({ ...mirror, metadata: { ...mirror.metadata, annotations: {} } }),
    ).toBeUndefined();
    expect(
      staticPodFromMirrorPod({ ...mirror, metadata: { ...mirror.metadata, namespace: 'default' } }),
    ).toBeUndefined();
  });
});
