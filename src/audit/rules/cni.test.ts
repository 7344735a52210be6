import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../snapshot/model.js';
import { exampleSnapshot } from '../../snapshot/testing-example.js';
import { ciliumUpdateStrategy, ciliumValues, resolveMaxUnavailable, talosDefaultFlannel } from './cni.js';
import { buildSnapshot, configMap, contextOf, daemonSet, findings, run } from './testing-network.js';

/** A Cilium agent DaemonSet as the Talos guide's values render it, with overrides. */
function cilium(
  opts: {
    agentCaps?: string[];
    mountCgroup?: boolean;
    updateStrategy?: Record<string, unknown>;
    desired?: number;
  } = {},
): KubeObject {
  return daemonSet('kube-system', 'cilium', {
    podSpec: {
      initContainers: [
        ...(opts.mountCgroup ? [{ name: 'mount-cgroup', image: 'quay.io/cilium/cilium:v1.16.6' }] : []),
        {
          name: 'clean-cilium-state',
          image: 'quay.io/cilium/cilium:v1.16.6',
          securityContext: { capabilities: { add: ['NET_ADMIN', 'SYS_ADMIN', 'SYS_RESOURCE'] } },
        },
      ],
      containers: [
        {
          name: 'cilium-agent',
          image: 'quay.io/cilium/cilium:v1.16.6',
          securityContext: { capabilities: { add: opts.agentCaps ?? ['NET_ADMIN', 'SYS_ADMIN'] } },
        },
      ],
    },
    ...(opts.updateStrategy ? { updateStrategy: opts.updateStrategy } : {}),
    status: { desiredNumberScheduled: opts.desired ?? 4 },
  });
}

function ciliumConfig(data: Record<string, string> = {}): KubeObject {
  return configMap('kube-system', 'cilium-config', {
    'cgroup-root': '/sys/fs/cgroup',
    'kube-proxy-replacement': 'true',
    'k8s-service-host': 'api.test.example',
    'k8s-service-port': '6443',
    ...data,
  });
}

const ctxWith = (ds: KubeObject[], cms: KubeObject[] = [], target = {}) =>
  contextOf(buildSnapshot({ resources: { daemonsets: ds, configmaps: cms } }), target);

describe('cni.talos-default-flannel', () => {
  it('fires for an existing CNI with the v1.13 fix', () => {
    const f = findings(talosDefaultFlannel.check(ctxWith([cilium()], [ciliumConfig()])))[0]!;
    expect(f.severity).toBeUndefined();
    expect(f.message).toContain('runs cilium');
    expect(f.remediation).toContain('cluster.network.cni.name: none');
    expect(f.evidence[0]).toMatchObject({ kind: 'object', object: { kind: 'DaemonSet', name: 'cilium' } });
  });

  it('fires on v1.14 with the multi-document fix', () => {
    const f = findings(talosDefaultFlannel.check(ctxWith([cilium()], [], { talosVersion: 'v1.14' })))[0]!;
    expect(f.remediation).toContain('KubeFlannelCNIConfig');
  });

  it('is only a risk when ferry recognises no CNI', () => {
    const f = findings(talosDefaultFlannel.check(ctxWith([])))[0]!;
    expect(f.severity).toBe('risk');
  });

  it('is skipped (never passes) without cluster objects', () => {
    const s = buildSnapshot({ parts: ['kubeadm', 'flags'], resources: { nodes: [], services: [] } });
    expect(talosDefaultFlannel.check(contextOf(s))).toMatchObject({
      kind: 'skipped',
      missing: ['cni.plugin'],
    });
  });
});

describe('cni.cilium-values', () => {
  it('does not fire for Talos-compatible values reaching the API through the load balancer', () => {
    expect(ciliumValues.check(ctxWith([cilium()], [ciliumConfig()]))).toEqual([]);
  });

  it('fires for SYS_MODULE and Cilium-managed cgroups (example cluster, trap 13)', async () => {
    const fs = findings(ciliumValues.check(contextOf(await exampleSnapshot())));
    expect(fs.map((f) => f.field).sort()).toEqual(['capabilities.SYS_MODULE', 'cgroup']);
    const caps = fs.find((f) => f.field === 'capabilities.SYS_MODULE')!;
    expect(caps.evidence.map((e) => (e.kind === 'object' ? e.field : ''))).toEqual([
      'spec.template.spec.initContainers[clean-cilium-state].securityContext.capabilities.add',
      'spec.template.spec.containers[cilium-agent].securityContext.capabilities.add',
    ]);
    const cgroup = fs.find((f) => f.field === 'cgroup')!;
    expect(cgroup.evidence.map((e) => e.observed)).toEqual([
      'present (cgroup.autoMount.enabled: true)',
      '/run/cilium/cgroupv2',
    ]);
  });

  it('describes the rollout as the kit does it: OnDelete, no running agent restarts', async () => {
    const fs = findings(ciliumValues.check(contextOf(await exampleSnapshot())));
    for (const f of fs) {
      expect(f.remediation).not.toContain('every agent restarts');
      expect(f.remediation).toContain(
        "the kit's cilium/values-migration.yaml does with updateStrategy OnDelete",
      );
      expect(f.kitChecks).toContainEqual({
        kind: 'value',
        file: 'cilium/values-migration.yaml',
        path: ['updateStrategy', 'type'],
        test: { op: 'equals', value: 'OnDelete' },
      });
    }
    const lab = findings(ciliumUpdateStrategy.check(contextOf(await exampleSnapshot())))[0]!;
    expect(lab.remediation).toMatch(/^The kit's cilium\/values-migration\.yaml sets updateStrategy OnDelete/);
  });

  it('fires for kube-proxy replacement pointed at KubePrism or at one control plane', () => {
    const prism = findings(
      ciliumValues.check(
        ctxWith([cilium()], [ciliumConfig({ 'k8s-service-host': 'localhost', 'k8s-service-port': '7445' })]),
      ),
    );
    expect(prism.map((f) => f.field)).toEqual(['k8sServiceHost']);
    expect(prism[0]!.remediation).toContain('api.test.example:6443');
    const one = findings(
      ciliumValues.check(ctxWith([cilium()], [ciliumConfig({ 'k8s-service-host': '10.0.0.11' })])),
    );
    expect(one[0]!.message).toContain('through one control plane (10.0.0.11)');
  });

  it('does not apply to another CNI', () => {
    const calico = daemonSet('kube-system', 'calico-node');
    expect(ciliumValues.check(ctxWith([calico]))).toMatchObject({ kind: 'not-applicable' });
  });
});

describe('cni.cilium-update-strategy', () => {
  it('does not fire for the DaemonSet default (maxUnavailable 1) or a small percentage', () => {
    expect(ciliumUpdateStrategy.check(ctxWith([cilium()]))).toEqual([]);
    const tenPct = cilium({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } },
    });
    expect(ciliumUpdateStrategy.check(ctxWith([tenPct]))).toEqual([]);
  });

  it('fires for maxUnavailable above one (example cluster, trap 12) and for OnDelete', async () => {
    const lab = findings(ciliumUpdateStrategy.check(contextOf(await exampleSnapshot())))[0]!;
    expect(lab.message).toContain('maxUnavailable 2 (2 of 8 node(s) at once)');
    const half = cilium({
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '50%' } },
    });
    expect(findings(ciliumUpdateStrategy.check(ctxWith([half])))[0]!.message).toContain('2 of 4 node(s)');
    const onDelete = cilium({ updateStrategy: { type: 'OnDelete' } });
    expect(findings(ciliumUpdateStrategy.check(ctxWith([onDelete])))[0]!.message).toContain('OnDelete');
  });

  it('resolves maxUnavailable the way the DaemonSet controller does (percentages round up)', () => {
    expect(resolveMaxUnavailable(null, 10)).toBe(1);
    expect(resolveMaxUnavailable(3, 10)).toBe(3);
    expect(resolveMaxUnavailable('25%', 10)).toBe(3);
    expect(resolveMaxUnavailable('10%', 8)).toBe(1);
  });

  it('does not apply to another CNI', () => {
    expect(run(ciliumUpdateStrategy, ctxWith([daemonSet('kube-system', 'kube-flannel-ds')]))).toMatchObject({
      kind: 'not-applicable',
    });
  });
});

describe('the example cluster (trap 14)', () => {
  it('needs the Talos CNI set to none', async () => {
    expect(findings(talosDefaultFlannel.check(contextOf(await exampleSnapshot())))).toHaveLength(1);
  });
});
