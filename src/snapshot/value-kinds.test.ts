import { describe, expect, it } from 'vitest';
import { componentConfigProblem, FLAG_KINDS, flagProblem } from './value-kinds.js';

describe('flagProblem', () => {
  it('checks the flags that have a kind, per component', () => {
    expect(flagProblem('kube-apiserver', { name: 'service-cluster-ip-range', value: 'garbage' })).toEqual({
      kind: 'cidrs',
      problem: 'not a CIDR (ADDRESS/PREFIX, e.g. 10.96.0.0/12)',
    });
    expect(
      flagProblem('kube-apiserver', { name: 'service-cluster-ip-range', value: '10.96.0.0/12' }),
    ).toBeUndefined();
    expect(flagProblem('kube-apiserver', { name: 'event-ttl', value: '1 hour' })?.kind).toBe('duration');
    expect(
      flagProblem('kube-apiserver', { name: 'etcd-servers', value: 'https://127.0.0.1:2379' }),
    ).toBeUndefined();
    expect(flagProblem('kube-controller-manager', { name: 'node-cidr-mask-size', value: 'x' })?.kind).toBe(
      'mask-size',
    );
    expect(flagProblem('kubelet', { name: 'node-ip', value: '10.20.0.11,fd00::11' })).toBeUndefined();
    expect(
      flagProblem('etcd', { name: 'listen-client-urls', value: 'https://127.0.0.1:2379,https://10.0.0.1' }),
    ).toBeUndefined();
  });

  it('a port of 0 turns serving off: not refused', () => {
    expect(flagProblem('kube-controller-manager', { name: 'secure-port', value: '0' })).toBeUndefined();
    expect(flagProblem('kube-scheduler', { name: 'secure-port', value: '70000' })?.problem).toBe(
      'not a port (1-65535)',
    );
  });

  it('leaves flags without a kind, and components it does not know, alone', () => {
    expect(flagProblem('kube-apiserver', { name: 'oidc-client-id', value: 'anything goes' })).toBeUndefined();
    expect(flagProblem('kube-vip', { name: 'address', value: 'not checked' })).toBeUndefined();
    // The same flag name means different things per component: checked only where listed.
    expect(FLAG_KINDS['kube-scheduler']?.['cluster-cidr']).toBeUndefined();
  });
});

describe('componentConfigProblem', () => {
  it('KubeletConfiguration: durations, DNS addresses and nested TTLs', () => {
    expect(
      componentConfigProblem('KubeletConfiguration', {
        shutdownGracePeriod: '60s',
        clusterDNS: ['10.96.0.10'],
      }),
    ).toBeUndefined();
    expect(componentConfigProblem('KubeletConfiguration', { shutdownGracePeriod: 'sixty' })).toEqual({
      path: ['shutdownGracePeriod'],
      kind: 'duration',
      value: 'sixty',
      problem: 'not a duration (a number with a unit: 90s, 5m, 1h30m, 300ms)',
    });
    expect(
      componentConfigProblem('KubeletConfiguration', { clusterDNS: ['10.96.0.10', '10.96.0.x'] }),
    ).toMatchObject({
      path: ['clusterDNS', 1],
      problem: 'not an IP address',
    });
    expect(
      componentConfigProblem('KubeletConfiguration', { authentication: { webhook: { cacheTTL: 2 } } }),
    ).toMatchObject({ path: ['authentication', 'webhook', 'cacheTTL'], problem: 'not a duration' });
    expect(
      componentConfigProblem('KubeletConfiguration', {
        evictionSoftGracePeriod: { 'memory.available': '1m30' },
      }),
    ).toMatchObject({ path: ['evictionSoftGracePeriod', 'memory.available'] });
    expect(componentConfigProblem('KubeletConfiguration', { port: 10250 })).toBeUndefined();
    expect(componentConfigProblem('KubeletConfiguration', { readOnlyPort: 0 })).toBeUndefined();
    expect(componentConfigProblem('KubeletConfiguration', { port: 70000 })).toMatchObject({
      problem: 'not a port (1-65535)',
    });
  });

  it('KubeProxyConfiguration clusterCIDR; other kinds are not checked', () => {
    expect(
      componentConfigProblem('KubeProxyConfiguration', { clusterCIDR: '10.244.0.0/16' }),
    ).toBeUndefined();
    expect(componentConfigProblem('KubeProxyConfiguration', { clusterCIDR: '10.244.0.0' })).toMatchObject({
      path: ['clusterCIDR'],
      kind: 'cidrs',
    });
    expect(componentConfigProblem('SomethingElse', { clusterCIDR: 'x' })).toBeUndefined();
    // An empty value is "unset" (kubeadm writes clusterCIDR: "").
    expect(componentConfigProblem('KubeProxyConfiguration', { clusterCIDR: '' })).toBeUndefined();
  });
});
