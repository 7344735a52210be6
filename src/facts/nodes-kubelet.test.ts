import { describe, expect, it } from 'vitest';
import { describeSource } from '../snapshot/model.js';
import { deriveFacts } from './derive.js';
import { emptySnapshot, flags, labCluster, node, staticPod } from './testing-builders.js';

describe('node facts', () => {
  it('control planes with advertise address, taints, etcd member; workers; kubelet versions', () => {
    const s = labCluster();
    s.resources.nodes[0]!.spec.taints = [
      { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' },
    ];
    s.resources.nodes[7]!.status.nodeInfo.kubeletVersion = 'v1.31.8';
    const n = deriveFacts(s).nodes;
    const cps = n.controlPlane.value!;
    expect(
      cps.map((c) => [
        c.name,
        c.internalIP,
        c.tainted,
        c.advertiseAddress?.address,
        c.apiserverPort,
        c.etcdMember?.name,
      ]),
    ).toEqual([
      ['cp-1', '10.20.0.11', true, '10.20.0.11', 6443, 'cp-1'],
      ['cp-2', '10.20.0.12', false, '10.20.0.12', 6443, 'cp-2'],
      ['cp-3', '10.20.0.13', false, '10.20.0.13', 6443, 'cp-3'],
    ]);
    expect(describeSource(cps[0]!.advertiseAddress!.source)).toBe(
      'kube-apiserver@cp-1 --advertise-address (manifests/cp-1/kube-apiserver.yaml)',
    );
    expect(n.workers.value?.map((w) => w.name)).toEqual([
      'worker-1',
      'worker-2',
      'worker-3',
      'worker-4',
      'worker-5',
    ]);
    expect(n.kubeletVersions.value).toEqual([
      { version: 'v1.31.8', nodes: 1 },
      { version: 'v1.32.4', nodes: 7 },
    ]);
  });

  it('a control plane known only from its manifest folder still appears, with its flags', () => {
    const s = emptySnapshot();
    s.staticPods.push(
      staticPod(
        'kube-apiserver',
        'cp-9',
        'registry.k8s.io/kube-apiserver:v1.32.4',
        flags('--advertise-address=10.1.1.9'),
      ),
    );
    const cp = deriveFacts(s).nodes.controlPlane.value!;
    expect(cp).toHaveLength(1);
    expect(cp[0]).toMatchObject({ name: 'cp-9', hasNodeObject: false, hasApiserver: true });
    expect(cp[0]!.advertiseAddress?.address).toBe('10.1.1.9');
  });

  it('without manifests the advertise address falls back to the Node InternalIP, labelled as such', () => {
    const s = labCluster();
    s.staticPods = [];
    const cp = deriveFacts(s).nodes.controlPlane.value![0]!;
    expect(cp.advertiseAddress?.address).toBe('10.20.0.11');
    expect(describeSource(cp.advertiseAddress!.source)).toMatch(/Node InternalIP/);
  });

  it('the kubeadm mirror-pod annotation is used when flags are not available', () => {
    const s = labCluster();
    s.staticPods = [];
    s.resources.pods.push({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'kube-apiserver-cp-2',
        namespace: 'kube-system',
        annotations: {
          'kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint': '192.168.7.2:6443',
        },
      },
      spec: { nodeName: 'cp-2' },
    });
    expect(deriveFacts(s).nodes.controlPlane.value![1]!.advertiseAddress?.address).toBe('192.168.7.2');
  });

  it('missing nodes say what to provide', () => {
    const n = deriveFacts(emptySnapshot()).nodes;
    expect(n.controlPlane.missing).toMatch(/kubectl get nodes/);
    expect(n.workers.missing).toMatch(/kubectl get nodes/);
    expect(n.kubeletVersions.missing).toMatch(/Node objects/);
  });

  it('scales linearly: 5,000 nodes and 150,000 pods derive in bounded time', () => {
    const s = labCluster();
    for (let i = 0; i < 5000; i++) {
      s.resources.nodes.push(
        node(`w-${i}`, {
          ip: `10.${100 + Math.floor(i / 250)}.${i % 250}.1`,
          podCIDR: `10.${(i >> 8) % 256}.${i % 256}.0/24`,
        }),
      );
    }
    for (let i = 0; i < 150_000; i++) {
      s.resources.pods.push({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p-${i}`, namespace: `ns-${i % 300}` },
        spec: { nodeName: `w-${i % 5000}` },
      });
    }
    const start = performance.now();
    const f = deriveFacts(s);
    const elapsed = performance.now() - start;
    expect(f.nodes.workers.value).toHaveLength(5005);
    // A quadratic pass over 150k pods or 5k nodes would take minutes; linear work is well under a second.
    expect(elapsed).toBeLessThan(5000);
  });
});

describe('kubelet facts', () => {
  it('settings present, absent (null with a note) and the config missing', () => {
    const k = deriveFacts(labCluster()).kubelet;
    expect(k.clusterDNS.value).toEqual(['10.96.0.10']);
    expect(k.cgroupDriver.value).toBe('systemd');
    expect(k.maxPods.value).toBe(110);
    expect(k.anonymousAuth.value).toBe(false);
    expect(k.authorizationMode.value).toBe('Webhook');
    expect(k.evictionHard.value).toEqual({ 'memory.available': '100Mi' });
    expect(k.staticPodPath.value).toBe('/etc/kubernetes/manifests');
    expect(k.systemReserved.value).toBeNull();
    expect(k.systemReserved.note).toMatch(/built-in default/);
    expect(describeSource(k.anonymousAuth.provenance[0]!)).toBe(
      'ConfigMap kube-system/kubelet-config data.kubelet.authentication.anonymous.enabled',
    );
    const s = labCluster();
    delete s.kubelet!.spec['clusterDNS'];
    const unset = deriveFacts(s).kubelet.clusterDNS;
    expect(unset.value).toBeNull();
    expect(unset.note).toMatch(/kubeadm fills it with the 10th address of the service CIDR/);
    const none = deriveFacts(emptySnapshot()).kubelet;
    expect(none.maxPods.value).toBeUndefined();
    expect(none.maxPods.missing).toMatch(/kubelet-config/);
  });

  it('serverTLSBootstrap: the deprecated kubelet flag in kubeadm nodeRegistration conflicts with the config', () => {
    const s = labCluster();
    s.kubeadm.nodeConfigurations.push({
      kind: 'JoinConfiguration',
      sourceApiVersion: 'kubeadm.k8s.io/v1beta4',
      source: { kind: 'file', path: 'kubeadm-config.yaml', line: 40 },
      nodeRegistration: {
        kubeletExtraArgs: flags('--rotate-server-certificates=true', '--node-labels=zone=a'),
        ignorePreflightErrors: [],
      },
      bootstrapTokenIds: [],
    });
    const k = deriveFacts(s).kubelet;
    expect(k.serverTLSBootstrap.value).toBe(true);
    expect(k.serverTLSBootstrap.conflict?.candidates.map((c) => c.value)).toEqual([null, true]);
    expect(k.extraArgs.value).toEqual(flags('--rotate-server-certificates=true', '--node-labels=zone=a'));
  });

  it('a malformed setting is reported as missing, not passed through', () => {
    const s = labCluster();
    s.kubelet!.spec['maxPods'] = 'lots';
    const k = deriveFacts(s).kubelet.maxPods;
    expect(k.value).toBeUndefined();
    expect(k.missing).toMatch(/well-formed maxPods/);
  });
});
