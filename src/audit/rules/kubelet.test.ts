import { describe, expect, it } from 'vitest';
import type { KubeadmNodeConfiguration } from '../../snapshot/model.js';
import { runAudit } from '../engine.js';
import { configCarryover, durationSeconds, staticPods, sysctlAllowed, sysctls } from './kubelet.js';
import { audit, contextOf, findings, kubeletConfig, node, pod, workload } from './testing-workload.js';

/** What kubeadm uploads to kube-system/kubelet-config when nothing is customised (v1.32). */
const KUBEADM_BOILERPLATE = {
  authentication: {
    anonymous: { enabled: false },
    webhook: { cacheTTL: '0s', enabled: true },
    x509: { clientCAFile: '/etc/kubernetes/pki/ca.crt' },
  },
  authorization: { mode: 'Webhook', webhook: { cacheAuthorizedTTL: '0s', cacheUnauthorizedTTL: '0s' } },
  cgroupDriver: 'systemd',
  clusterDNS: ['10.96.0.10'],
  clusterDomain: 'cluster.local',
  containerRuntimeEndpoint: '',
  cpuManagerReconcilePeriod: '0s',
  evictionPressureTransitionPeriod: '0s',
  fileCheckFrequency: '0s',
  healthzBindAddress: '127.0.0.1',
  healthzPort: 10248,
  httpCheckFrequency: '0s',
  imageMinimumGCAge: '0s',
  logging: { flushFrequency: 0, options: { json: { infoBufferSize: '0' } }, verbosity: 0 },
  memorySwap: {},
  nodeStatusReportFrequency: '0s',
  rotateCertificates: true,
  runtimeRequestTimeout: '0s',
  shutdownGracePeriod: '0s',
  staticPodPath: '/etc/kubernetes/manifests',
  streamingConnectionIdleTimeout: '0s',
  syncFrequency: '0s',
  volumeStatsAggPeriod: '0s',
};

function kubeletCtx(
  spec: Record<string, unknown>,
  target = {},
  nodeConfigs: KubeadmNodeConfiguration[] = [],
) {
  return contextOf({}, target, {
    kubelet: kubeletConfig(spec),
    edit: (s) => {
      s.kubeadm.nodeConfigurations = nodeConfigs;
    },
  });
}

function joinConfig(args: { name: string; value: string }[]): KubeadmNodeConfiguration {
  return {
    kind: 'JoinConfiguration',
    sourceApiVersion: 'kubeadm.k8s.io/v1beta4',
    source: { kind: 'file', path: 'kubeadm-config.yaml', line: 40 },
    nodeRegistration: { kubeletExtraArgs: args, ignorePreflightErrors: [] },
    bootstrapTokenIds: [],
  };
}

describe('kubelet.config-carryover', () => {
  it('reports customised settings with their source and the Talos value they would get', () => {
    const ctx = kubeletCtx({
      ...KUBEADM_BOILERPLATE,
      maxPods: 150,
      systemReserved: { cpu: '250m', memory: '1Gi' },
      shutdownGracePeriod: '60s',
      imageGCHighThresholdPercent: 70,
    });
    const all = findings(configCarryover.check(ctx));
    const f = all.find((x) => x.field === 'config')!;
    expect(f.message).toMatch(/maxPods=150/);
    const keys = f.evidence.map((e) => ('field' in e ? e.field : undefined));
    expect(keys).toEqual(
      expect.arrayContaining([
        'data.kubelet.maxPods',
        'data.kubelet.systemReserved',
        'data.kubelet.shutdownGracePeriod',
        'data.kubelet.imageGCHighThresholdPercent',
      ]),
    );
    // Boilerplate kubeadm writes and keys Talos owns are not "carried".
    for (const k of [
      'cgroupDriver',
      'clusterDNS',
      'healthzPort',
      'rotateCertificates',
      'cpuManagerReconcilePeriod',
      'memorySwap',
    ])
      expect(keys).not.toContain(`data.kubelet.${k}`);
    const maxPods = f.evidence.find((e) => 'field' in e && e.field === 'data.kubelet.maxPods')!;
    expect(maxPods).toMatchObject({
      kind: 'object',
      object: { kind: 'ConfigMap', name: 'kubelet-config' },
      observed: '150',
    });
    expect(maxPods.expected).toMatch(/^110/);
    expect(f.remediation).toContain('machine.kubelet.extraConfig');
    expect(f.remediation).toContain('maxPods: 150');
  });

  it('does not fire for a stock kubeadm configuration or values equal to what Talos uses anyway', () => {
    const ctx = kubeletCtx({
      ...KUBEADM_BOILERPLATE,
      seccompDefault: true,
      maxPods: 110,
      shutdownGracePeriod: '30s',
      shutdownGracePeriodCriticalPods: '10s',
      streamingConnectionIdleTimeout: '5m0s',
      failSwapOn: false,
    });
    expect(findings(configCarryover.check(ctx))).toEqual([]);
  });

  it('names the v1.14 document on a v1.14 target', () => {
    const [f] = findings(
      configCarryover.check(kubeletCtx({ maxPods: 200, seccompDefault: true }, { talosVersion: '1.14' })),
    );
    expect(f!.remediation).toContain('KubeletConfig.config');
    expect(f!.remediation).not.toContain('machine.kubelet.extraConfig');
  });

  it('reports protected settings that change what kubelet clients see', () => {
    const ctx = kubeletCtx({
      authentication: { anonymous: { enabled: true } },
      authorization: { mode: 'AlwaysAllow' },
      seccompDefault: true,
    });
    const f = findings(configCarryover.check(ctx)).find((x) => x.field === 'protected')!;
    expect(f.message).toMatch(/authentication\.anonymous\.enabled=true/);
    expect(f.message).toMatch(/authorization\.mode=AlwaysAllow/);
    expect(f.evidence).toHaveLength(2);
  });

  it('notes (info) that Talos turns on seccompDefault when the cluster does not', () => {
    const f = findings(configCarryover.check(kubeletCtx({}))).find((x) => x.field === 'seccompDefault')!;
    expect(f.severity).toBe('info');
    expect(findings(configCarryover.check(kubeletCtx({ seccompDefault: true })))).toEqual([]);
  });

  it('sorts kubelet extra flags into carried, per-node and denied', () => {
    const ctx = kubeletCtx({ seccompDefault: true }, {}, [
      joinConfig([
        { name: 'node-ip', value: '10.0.0.5' },
        { name: 'max-open-files', value: '1000000' },
        { name: 'container-runtime-endpoint', value: 'unix:///run/containerd/containerd.sock' },
      ]),
    ]);
    const f = findings(configCarryover.check(ctx)).find((x) => x.field === 'extraArgs')!;
    expect(f.remediation).toContain('carry --max-open-files=1000000 in machine.kubelet.extraArgs');
    expect(f.remediation).toMatch(/--node-ip=10\.0\.0\.5 is per node/);
    expect(f.remediation).toMatch(/--container-runtime-endpoint=.* cannot be set on Talos/);
    expect(f.evidence[0]).toMatchObject({ kind: 'file', path: 'kubeadm-config.yaml', line: 40 });
  });

  it('is skipped without a KubeletConfiguration, saying how to provide one', () => {
    const report = runAudit({ ...contextOf({}), rules: [configCarryover], now: new Date() });
    expect(report.skipped).toEqual([
      expect.objectContaining({
        ruleId: 'kubelet.config-carryover',
        missing: ['kubelet'],
        howToProvide: expect.stringMatching(/KubeletConfiguration/),
      }),
    ]);
    expect(configCarryover.check(contextOf({}))).toMatchObject({ kind: 'skipped', missing: ['kubelet'] });
  });

  it('parses Go durations', () => {
    expect(durationSeconds('1m30s')).toBe(90);
    expect(durationSeconds('5m0s')).toBe(300);
    expect(durationSeconds('1h')).toBe(3600);
    expect(durationSeconds('500ms')).toBe(0.5);
    expect(durationSeconds('soon')).toBeUndefined();
  });
});

describe('kubelet.sysctls', () => {
  const withSysctls = (names: string[]) =>
    workload(
      'Deployment',
      'db',
      'redis',
      {
        securityContext: { sysctls: names.map((name) => ({ name, value: '1' })) },
        containers: [{ name: 'redis', image: 'redis:7' }],
      },
      { pods: ['w1', 'w2'] },
    );

  it('fires once per workload for unsafe sysctls, quoting what the kubeadm kubelets allow', () => {
    const w = withSysctls(['net.core.somaxconn', 'net.ipv4.tcp_syncookies']);
    const ctx = contextOf(
      w.objects,
      {},
      { kubelet: kubeletConfig({ allowedUnsafeSysctls: ['net.core.*'] }) },
    );
    const fs = findings(sysctls.check(ctx));
    expect(fs).toHaveLength(1);
    expect(fs[0]!.message).toMatch(/net\.core\.somaxconn=1/);
    expect(fs[0]!.message).not.toMatch(/tcp_syncookies/);
    expect(fs[0]!.message).toMatch(/kubeadm kubelets allow them/);
    expect(fs[0]!.evidence[0]).toMatchObject({
      field: 'spec.template.spec.securityContext.sysctls',
      observed: 'net.core.somaxconn',
    });
    expect(fs[0]!.remediation).toContain('machine.kubelet.extraConfig.allowedUnsafeSysctls');
  });

  it('does not fire for safe sysctls only', () => {
    const w = withSysctls(['net.ipv4.ip_local_port_range', 'kernel.shm_rmid_forced']);
    expect(findings(sysctls.check(contextOf(w.objects)))).toEqual([]);
  });

  it('says when a sysctl is not namespaced and names the v1.14 documents', () => {
    const w = withSysctls(['vm.max_map_count']);
    const [f] = findings(sysctls.check(contextOf(w.objects, { talosVersion: '1.14' })));
    expect(f!.message).toMatch(/vm\.max_map_count is not namespaced/);
    expect(f!.message).toContain('SysctlConfig');
    expect(f!.remediation).toContain('KubeletConfig.config.allowedUnsafeSysctls');
  });

  it('matches allowedUnsafeSysctls patterns like the kubelet', () => {
    expect(sysctlAllowed('net.core.somaxconn', ['net.core.*'])).toBe(true);
    expect(sysctlAllowed('net.core.somaxconn', ['net.core.somaxconn'])).toBe(true);
    expect(sysctlAllowed('net.ipv4.tcp_mem', ['net.core.*'])).toBe(false);
  });
});

describe('kubelet.static-pods', () => {
  const mirror = (name: string, nodeName: string, component?: string) =>
    pod(
      'kube-system',
      `${name}-${nodeName}`,
      { containers: [{ name, image: `${name}:1` }] },
      {
        node: nodeName,
        annotations: { 'kubernetes.io/config.mirror': 'abc', 'kubernetes.io/config.source': 'file' },
        ...(component ? { labels: { component } } : {}),
      },
    );

  it('reports one finding per static pod across nodes, and points VIP pods at the endpoint rule', () => {
    const ctx = contextOf({
      nodes: [node('cp-1', { controlPlane: true }), node('cp-2', { controlPlane: true })],
      pods: [
        mirror('kube-vip', 'cp-1'),
        mirror('kube-vip', 'cp-2'),
        mirror('kube-apiserver', 'cp-1', 'kube-apiserver'),
        mirror('etcd', 'cp-2', 'etcd'),
      ],
    });
    const fs = audit(ctx, [staticPods]);
    expect(fs).toHaveLength(1);
    expect(fs[0]!.subject).toMatchObject({ kind: 'StaticPod', namespace: 'kube-system', name: 'kube-vip' });
    expect(fs[0]!.message).toMatch(/cp-1, cp-2/);
    expect(fs[0]!.message).toContain('endpoint.vip-on-control-plane');
    expect(fs[0]!.evidence).toHaveLength(2);
    expect(fs[0]!.remediation).toContain('machine.pods');
  });

  it('does not fire for the kubeadm control-plane static pods', () => {
    const ctx = contextOf({
      pods: [mirror('kube-scheduler', 'cp-1', 'kube-scheduler'), mirror('kube-controller-manager', 'cp-1')],
    });
    expect(findings(staticPods.check(ctx))).toEqual([]);
  });

  it('also reads static pods from copied manifests', () => {
    const ctx = contextOf(
      {},
      { talosVersion: '1.14' },
      {
        edit: (s) => {
          s.staticPods = [
            {
              component: 'haproxy',
              node: 'cp-1',
              command: [],
              flags: [],
              hostPathVolumes: [],
              source: { kind: 'file', path: 'manifests/cp-1/haproxy.yaml', line: 1 },
            },
          ];
        },
      },
    );
    const [f] = findings(staticPods.check(ctx));
    expect(f!.evidence[0]).toMatchObject({ kind: 'file', path: 'manifests/cp-1/haproxy.yaml' });
    expect(f!.remediation).toContain('KubeStaticPodConfig');
  });
});
