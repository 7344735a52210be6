import { describe, expect, it } from 'vitest';
import { exampleSnapshot } from '../../snapshot/testing-example.js';
import {
  cidrWithin,
  dnsDomainMismatch,
  kubeDnsIp,
  NETWORK_RULES,
  nodeCidrMask,
  podCidrMismatch,
  portReachability,
  serviceCidrMismatch,
} from './network.js';
import { CONTROL_PLANES } from './testing-etcd.js';
import {
  buildSnapshot,
  clusterConfiguration,
  contextOf,
  controlPlanePods,
  etcdPod,
  findings,
  node,
  service,
  staticPod,
} from './testing-network.js';

/** The default three control planes with the KCM/apiserver flags rewritten. */
function pods(opts: { clusterCidr?: string; serviceCidr?: string; kcmExtra?: [string, string][] } = {}) {
  return CONTROL_PLANES.flatMap(([n, ip]) => [
    ...controlPlanePods(n, ip).map((p) => {
      if (p.component === 'kube-controller-manager') {
        return staticPod('kube-controller-manager', n, [
          ['cluster-cidr', opts.clusterCidr ?? '10.244.0.0/16'],
          ['service-cluster-ip-range', opts.serviceCidr ?? '10.96.0.0/12'],
          ...(opts.kcmExtra ?? []),
        ]);
      }
      if (p.component === 'kube-apiserver' && opts.serviceCidr) {
        return staticPod('kube-apiserver', n, [
          ['advertise-address', ip],
          ['etcd-servers', 'https://127.0.0.1:2379'],
          ['service-cluster-ip-range', opts.serviceCidr],
        ]);
      }
      return p;
    }),
    etcdPod(n, ip),
  ]);
}

const nodesIn = (prefix: string) => [
  ...CONTROL_PLANES.map(([n, ip], i) => node(n, { ip, controlPlane: true, podCIDR: `${prefix}.${i}.0/24` })),
  node('worker-1', { ip: '10.0.0.21', podCIDR: `${prefix}.3.0/24` }),
];

describe('network.pod-cidr-mismatch', () => {
  it('does not fire when every source uses the Talos default', () => {
    expect(podCidrMismatch.check(contextOf(buildSnapshot()))).toEqual([]);
  });

  it('fires when the cluster uses another pod CIDR, naming the target field', () => {
    const s = buildSnapshot({
      cc: clusterConfiguration({ networking: { podSubnet: '10.200.0.0/16', serviceSubnet: '10.96.0.0/12' } }),
      staticPods: pods({ clusterCidr: '10.200.0.0/16' }),
      resources: { nodes: nodesIn('10.200') },
    });
    const fs = findings(podCidrMismatch.check(contextOf(s)));
    expect(fs.map((f) => f.field)).toEqual(['talos-default']);
    expect(fs[0]!.remediation).toContain('cluster.network.podSubnets to 10.200.0.0/16');
    expect(fs[0]!.evidence[0]).toMatchObject({
      kind: 'flag',
      component: 'kube-controller-manager',
      node: 'cp-1',
    });
    const v114 = findings(podCidrMismatch.check(contextOf(s, { talosVersion: 'v1.14' })));
    expect(v114[0]!.remediation).toContain('KubeNetworkConfig.podSubnets');
  });

  it('fires when kubeadm-config and the controller-manager disagree', () => {
    const s = buildSnapshot({
      cc: clusterConfiguration({ networking: { podSubnet: '10.200.0.0/16', serviceSubnet: '10.96.0.0/12' } }),
    });
    const f = findings(podCidrMismatch.check(contextOf(s))).find((x) => x.field === 'conflict')!;
    expect(f.message).toContain('10.244.0.0/16 vs 10.200.0.0/16');
    expect(f.evidence).toHaveLength(4);
  });

  it('fires for nodes whose pod CIDRs lie outside the pod subnets', () => {
    const s = buildSnapshot({
      resources: { nodes: [...nodesIn('10.244'), node('w9', { podCIDR: '10.99.0.0/24' })] },
    });
    const f = findings(podCidrMismatch.check(contextOf(s))).find((x) => x.field === 'node-podCIDRs')!;
    expect(f.evidence).toEqual([
      expect.objectContaining({
        object: expect.objectContaining({ kind: 'Node', name: 'w9' }),
        observed: '10.99.0.0/24',
      }),
    ]);
  });

  it('skips when no source tells the pod CIDR', () => {
    const s = buildSnapshot({ cc: null, staticPods: [], resources: { nodes: [] } });
    expect(podCidrMismatch.check(contextOf(s))).toMatchObject({
      kind: 'skipped',
      missing: ['network.podSubnets'],
    });
  });
});

describe('network.service-cidr-mismatch', () => {
  it('does not fire for the Talos default with kubernetes on the first address', () => {
    expect(serviceCidrMismatch.check(contextOf(buildSnapshot()))).toEqual([]);
  });

  it('fires for another service CIDR', () => {
    const s = buildSnapshot({
      cc: clusterConfiguration({ networking: { podSubnet: '10.244.0.0/16', serviceSubnet: '10.32.0.0/16' } }),
      staticPods: pods({ serviceCidr: '10.32.0.0/16' }),
      resources: {
        services: [
          service('default', 'kubernetes', '10.32.0.1'),
          service('kube-system', 'kube-dns', '10.32.0.10'),
        ],
      },
    });
    const fs = findings(serviceCidrMismatch.check(contextOf(s)));
    expect(fs.map((f) => f.field)).toEqual(['talos-default']);
    expect(fs[0]!.message).toContain('10.32.0.0/16');
  });

  it('fires when the kubernetes Service is not on the first address', () => {
    const s = buildSnapshot({
      resources: {
        services: [
          service('default', 'kubernetes', '10.96.0.2'),
          service('kube-system', 'kube-dns', '10.96.0.10'),
        ],
      },
    });
    const f = findings(serviceCidrMismatch.check(contextOf(s)))[0]!;
    expect(f.field).toBe('first-address');
    expect(f.message).toContain('not 10.96.0.1');
  });
});

describe('network.dns-domain-mismatch', () => {
  it('does not fire for cluster.local', () => {
    expect(dnsDomainMismatch.check(contextOf(buildSnapshot()))).toEqual([]);
  });

  it('fires for another domain, and for kubelet and kubeadm-config disagreeing', () => {
    const cc = clusterConfiguration({
      networking: { podSubnet: '10.244.0.0/16', serviceSubnet: '10.96.0.0/12', dnsDomain: 'corp.internal' },
    });
    const s = buildSnapshot({ cc, kubelet: { clusterDomain: 'corp.internal' } });
    const fs = findings(dnsDomainMismatch.check(contextOf(s, { talosVersion: 'v1.14' })));
    expect(fs.map((f) => f.field)).toEqual(['talos-default']);
    expect(fs[0]!.remediation).toContain('KubeNetworkConfig.dnsDomain: corp.internal');
    const split = buildSnapshot({ kubelet: { clusterDomain: 'corp.internal' } });
    expect(findings(dnsDomainMismatch.check(contextOf(split))).map((f) => f.field)).toEqual([
      'conflict',
      'talos-default',
    ]);
  });
});

describe('network.kube-dns-ip', () => {
  it('does not fire when kube-dns is the 10th service address', () => {
    expect(kubeDnsIp.check(contextOf(buildSnapshot()))).toEqual([]);
  });

  it('fires when kube-dns lives elsewhere', () => {
    const s = buildSnapshot({
      resources: {
        services: [
          service('default', 'kubernetes', '10.96.0.1'),
          service('kube-system', 'kube-dns', '10.96.0.53'),
        ],
      },
    });
    const f = findings(kubeDnsIp.check(contextOf(s)))[0]!;
    expect(f.message).toContain('Pods resolve through 10.96.0.53');
    expect(f.remediation).toContain('machine.kubelet.clusterDNS: [10.96.0.53]');
    expect(f.evidence[0]).toMatchObject({
      kind: 'object',
      object: { name: 'kube-dns' },
      expected: '10.96.0.10',
    });
  });

  it('fires when kubelets use the 10th address but the kube-dns Service is elsewhere', () => {
    const s = buildSnapshot({
      kubelet: { clusterDNS: ['10.96.0.10'] },
      resources: {
        services: [
          service('default', 'kubernetes', '10.96.0.1'),
          service('kube-system', 'kube-dns', '10.96.0.53'),
        ],
      },
    });
    const f = findings(kubeDnsIp.check(contextOf(s)))[0]!;
    expect(f.field).toBe('kube-dns-service');
    expect(f.message).toContain('10.96.0.10 vs 10.96.0.53');
    expect(f.remediation).toContain('siderolabs/talos#12618');
  });

  it('fires for a node-local DNS cache as clusterDNS, naming both addresses', () => {
    const s = buildSnapshot({ kubelet: { clusterDNS: ['169.254.20.10'] } });
    const f = findings(kubeDnsIp.check(contextOf(s, { talosVersion: 'v1.14' })))[0]!;
    expect(f.message).toContain('169.254.20.10 vs 10.96.0.10');
    expect(f.remediation).toContain('KubeletConfig.clusterDNS: [169.254.20.10]');
  });
});

describe('network.node-cidr-mask', () => {
  it('does not fire for /24 nodes under kube-controller-manager defaults', () => {
    expect(nodeCidrMask.check(contextOf(buildSnapshot()))).toEqual([]);
  });

  it('fires for another mask size, with a target-dependent fix', () => {
    const nodes = [
      ...CONTROL_PLANES.map(([n, ip], i) => node(n, { ip, controlPlane: true, podCIDR: `10.244.${i}.0/26` })),
    ];
    const s = buildSnapshot({
      staticPods: pods({ kcmExtra: [['node-cidr-mask-size', '26']] }),
      resources: { nodes },
    });
    const f = findings(nodeCidrMask.check(contextOf(s)))[0]!;
    expect(f.message).toContain('IPv4 /26');
    expect(f.remediation).toContain('node-cidr-mask-size-ipv4');
    expect(findings(nodeCidrMask.check(contextOf(s, { talosVersion: 'v1.14' })))[0]!.remediation).toContain(
      'KubeNetworkConfig.nodeCIDRMaskSizeIPv4',
    );
  });
});

describe('network.port-reachability', () => {
  it('is skipped with the probes to run, naming the control-plane addresses', () => {
    const r = portReachability.check(contextOf(buildSnapshot()));
    expect(r).toMatchObject({ kind: 'skipped' });
    expect((r as { howToProvide: string }).howToProvide).toContain('10.0.0.11, 10.0.0.12, 10.0.0.13');
  });
});

describe('helpers', () => {
  it('cidrWithin compares ranges of the same family', () => {
    expect(cidrWithin('10.244.3.0/24', '10.244.0.0/16')).toBe(true);
    expect(cidrWithin('10.245.0.0/24', '10.244.0.0/16')).toBe(false);
    expect(cidrWithin('10.244.0.0/15', '10.244.0.0/16')).toBe(false);
    expect(cidrWithin('fd00::/64', '10.244.0.0/16')).toBe(false);
  });
});

describe('the example cluster', () => {
  it('is healthy on every network rule except the reachability probes (README: same CIDRs everywhere)', async () => {
    const ctx = contextOf(await exampleSnapshot());
    for (const rule of NETWORK_RULES.filter((r) => r !== portReachability)) {
      expect(rule.check(ctx), rule.id).toEqual([]);
    }
  });
});
