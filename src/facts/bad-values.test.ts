/**
 * Values facts take from objects the loader does not parse for them (a kubeconfig inside a
 * ConfigMap, an annotation, a container env): a bad one is an input error naming the object and
 * field, never a fact the kit would carry.
 */
import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import type { Snapshot } from '../snapshot/model.js';
import { deriveFacts } from './derive.js';
import { daemonSet, labCluster } from './testing-builders.js';

function refused(s: Snapshot): FerryError {
  let err: unknown;
  try {
    deriveFacts(s);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(FerryError);
  expect((err as FerryError).exitCode).toBe(2);
  return err as FerryError;
}

describe('values facts read themselves', () => {
  it('the cluster-info kubeconfig server', () => {
    const s = labCluster();
    const info = s.resources.configmaps.find((c) => c.metadata.name === 'cluster-info')!;
    info.data.kubeconfig = info.data.kubeconfig.replace(
      'https://k8s-api.lab.example:6443',
      'https://[::::]:6443',
    );
    const err = refused(s);
    expect(err.message).toBe('"https://[::::]:6443" is not an endpoint: [::::] is not an IPv6 address');
    expect(err.location).toEqual({
      object: 'ConfigMap kube-public/cluster-info',
      field: 'data.kubeconfig clusters[0].cluster.server',
    });
  });

  it('the kubeadm advertise-address annotation of a mirror pod', () => {
    const s = labCluster();
    s.resources.pods.push({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'kube-apiserver-cp-9',
        namespace: 'kube-system',
        annotations: {
          'kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint': '10.20.0.300:6443',
        },
      },
      spec: { nodeName: 'cp-9', containers: [] },
    });
    s.resources.nodes.push({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'cp-9', labels: { 'node-role.kubernetes.io/control-plane': '' } },
    });
    const err = refused(s);
    expect(err.message).toMatch(/^"10\.20\.0\.300:6443" is not an endpoint/);
    expect(err.location?.object).toBe('Pod kube-system/kube-apiserver-cp-9');
  });

  it("the Cilium agent's KUBERNETES_SERVICE_PORT", () => {
    const s = labCluster();
    const cfg = s.resources.configmaps.find((c) => c.metadata.name === 'cilium-config')!;
    delete cfg.data['k8s-service-port'];
    s.resources.daemonsets = [
      daemonSet('kube-system', 'cilium', {
        image: 'quay.io/cilium/cilium:v1.15.3',
        selector: { 'k8s-app': 'cilium' },
        env: [{ name: 'KUBERNETES_SERVICE_PORT', value: '99999' }],
      }),
    ];
    const err = refused(s);
    expect(err.message).toBe('"99999" is not a port (1-65535)');
    expect(err.location).toEqual({
      object: 'DaemonSet kube-system/cilium',
      field: 'spec.template.spec.containers[cilium].env.KUBERNETES_SERVICE_PORT',
    });
  });

  it('the lab cluster itself has none of these problems', () => {
    expect(() => deriveFacts(labCluster())).not.toThrow();
  });
});
