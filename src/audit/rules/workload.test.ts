import { beforeAll, describe, expect, it } from 'vitest';
import { deriveFacts } from '../../facts/derive.js';
import { findTalosRelease } from '../../knowledge/talos.js';
import { loadSnapshot } from '../../snapshot/load.js';
import type { Finding } from '../findings.js';
import { buildIndex } from '../snapshot-index.js';
import { KUBELET_RULES } from './kubelet.js';
import { NODES_RULES } from './nodes.js';
import { audit, contextOf, findings, merge, pv, workload } from './testing-workload.js';
import {
  csiDriver,
  flexvolume,
  hostBinaries,
  hostpathAbsent,
  hostpathReadonlyRoot,
  kernelModules,
  WORKLOAD_RULES,
} from './workload.js';
import { judgeHostPath, normalizeHostPath } from './workload-paths.js';

const v113 = findTalosRelease('1.13')!;
const v114 = findTalosRelease('1.14')!;

/** A DaemonSet with one hostPath volume, mounted as given. */
function withHostPath(
  path: string,
  opts: { type?: string; readOnly?: boolean; name?: string; pods?: string[] } = {},
) {
  return workload(
    'DaemonSet',
    'storage',
    opts.name ?? 'agent',
    {
      containers: [
        {
          name: 'agent',
          image: 'agent:1',
          volumeMounts: [{ name: 'host', mountPath: '/host', readOnly: opts.readOnly ?? false }],
        },
      ],
      volumes: [
        { name: 'host', hostPath: { path, ...(opts.type !== undefined ? { type: opts.type } : {}) } },
      ],
    },
    { pods: opts.pods ?? ['w1', 'w2', 'w3'] },
  );
}

describe('Talos filesystem knowledge', () => {
  it('normalizes host paths', () => {
    expect(normalizeHostPath('/etc//hpe-storage/./x/../')).toBe('/etc/hpe-storage');
    expect(normalizeHostPath('var/lib')).toBe('/var/lib');
  });

  it('judges the FlexVolume directory by release', () => {
    const p = '/usr/libexec/kubernetes/kubelet-plugins/volume/exec';
    expect(judgeHostPath(p, 'DirectoryOrCreate', true, v113).rule).toBe('none');
    expect(judgeHostPath(p, 'DirectoryOrCreate', true, v114)).toMatchObject({
      rule: 'readonly-root',
      severity: 'blocker',
    });
  });

  it('treats kernel filesystems and writable areas as fine', () => {
    for (const p of [
      '/proc',
      '/sys/fs/bpf',
      '/dev',
      '/var/lib/longhorn',
      '/opt/cni/bin',
      '/run/xtables.lock',
      '/etc/cni/net.d',
    ])
      expect(judgeHostPath(p, 'DirectoryOrCreate', true, v113).rule, p).toBe('none');
  });
});

describe('workload.hostpath-readonly-root', () => {
  it('fires a blocker for a DirectoryOrCreate path on the read-only root, once per controller', () => {
    const w = withHostPath('/etc/hpe-storage', { type: 'DirectoryOrCreate' });
    const fs = audit(contextOf(w.objects), [hostpathReadonlyRoot]);
    expect(fs).toHaveLength(1);
    const f = fs[0]!;
    expect(f.severity).toBe('blocker');
    expect(f.subject).toMatchObject({ kind: 'DaemonSet', namespace: 'storage', name: 'agent' });
    expect(f.field).toBe('spec.template.spec.volumes[host].hostPath.path');
    expect(f.message).toMatch(/type DirectoryOrCreate makes the kubelet create \/etc\/hpe-storage/);
    expect(f.message).toMatch(/w1, w2, w3/);
    expect(f.remediation).toContain('/var/lib/hpe-storage');
    expect(f.remediation).toContain('machine.kubelet.extraMounts');
  });

  it('is only a risk when the path exists on Talos and is merely mounted read-write', () => {
    const [f] = findings(hostpathReadonlyRoot.check(contextOf(withHostPath('/etc/ssl/certs').objects)));
    expect(f!.severity).toBe('risk');
    expect(f!.message).toMatch(/EROFS/);
  });

  it('does not fire for read-only mounts of existing paths or for writable areas', () => {
    for (const w of [
      withHostPath('/etc/ssl/certs', { readOnly: true }),
      withHostPath('/lib/modules', { readOnly: true }),
      withHostPath('/var/lib/app', { type: 'DirectoryOrCreate' }),
      withHostPath('/opt/local-path-provisioner', { type: 'DirectoryOrCreate' }),
    ])
      expect(findings(hostpathReadonlyRoot.check(contextOf(w.objects)))).toEqual([]);
  });

  it('checks PersistentVolumes (hostPath and local) and says v1.14 has no extraMounts', () => {
    const ctx = contextOf(
      {
        persistentvolumes: [
          pv('local-ssd', { local: { path: '/mnt/disks/ssd1' } }),
          pv('ok', { local: { path: '/var/mnt/ssd1' } }),
        ],
      },
      { talosVersion: '1.14' },
    );
    const fs = findings(hostpathReadonlyRoot.check(ctx));
    expect(fs).toHaveLength(1);
    expect(fs[0]!.evidence[0]).toMatchObject({
      object: { kind: 'PersistentVolume', name: 'local-ssd' },
      field: 'spec.local.path',
    });
    expect(fs[0]!.remediation).toMatch(/v1\.14 schema has no machine\.kubelet\.extraMounts/);
  });
});

describe('workload.hostpath-absent', () => {
  it('fires for paths Talos does not have, with the reason', () => {
    const cases: [string, RegExp][] = [
      ['/var/run/docker.sock', /no Docker socket/],
      ['/etc/kubernetes/admin.conf', /kubeadm file/],
      ['/var/log/journal', /no systemd journal/],
      ['/etc/cacert', /does not create \/etc\/cacert/],
    ];
    for (const [path, why] of cases) {
      const [f] = findings(
        hostpathAbsent.check(contextOf(withHostPath(path, { readOnly: true, type: 'Directory' }).objects)),
      );
      expect(f, path).toBeDefined();
      expect(f!.message, path).toMatch(why);
      expect(f!.message).toMatch(/type Directory makes the pod fail to start/);
    }
  });

  it('fires, hedged, for distro paths on the root image it does not know', () => {
    const [f] = findings(
      hostpathAbsent.check(contextOf(withHostPath('/etc/foo-agent', { readOnly: true }).objects)),
    );
    expect(f!.message).toMatch(/ferry does not know \/etc\/foo-agent/);
  });

  it('does not fire for paths Talos has (CA symlinks, its own /etc/kubernetes files, modules)', () => {
    for (const p of [
      '/etc/pki',
      '/usr/share/ca-certificates',
      '/etc/kubernetes/pki/ca.crt',
      '/lib/modules',
      '/var/log/pods',
      '/',
    ])
      expect(
        findings(hostpathAbsent.check(contextOf(withHostPath(p, { readOnly: true }).objects))),
        p,
      ).toEqual([]);
  });

  it('leaves paths the read-only-root rule reports to that rule', () => {
    const w = withHostPath('/etc/foo-agent', { type: 'DirectoryOrCreate' });
    expect(findings(hostpathAbsent.check(contextOf(w.objects)))).toEqual([]);
    expect(findings(hostpathReadonlyRoot.check(contextOf(w.objects)))).toHaveLength(1);
  });
});

describe('workload.flexvolume', () => {
  const flex = workload(
    'Deployment',
    'apps',
    'legacy',
    {
      containers: [{ name: 'c', image: 'c:1', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', flexVolume: { driver: 'example.com/nfs' } }],
    },
    { pods: ['w1'] },
  );
  const installer = withHostPath('/usr/libexec/kubernetes/kubelet-plugins/volume/exec', {
    type: 'DirectoryOrCreate',
    name: 'flex-installer',
  });

  it('is a blocker on v1.14, naming the driver', () => {
    const fs = findings(
      flexvolume.check(contextOf(merge(flex.objects, installer.objects), { talosVersion: '1.14' })),
    );
    expect(fs).toHaveLength(2);
    expect(fs.every((f) => f.severity === 'blocker')).toBe(true);
    expect(fs[0]!.message).toMatch(/example\.com\/nfs/);
    expect(fs[1]!.evidence[0]).toMatchObject({ note: 'installs or reads FlexVolume drivers on the host' });
  });

  it('is a risk on v1.13 (works until the upgrade to v1.14)', () => {
    const fs = findings(flexvolume.check(contextOf(flex.objects, { talosVersion: '1.13' })));
    expect(fs[0]!.severity).toBe('risk');
    expect(fs[0]!.message).toMatch(/upgrading Talos later breaks it/);
  });

  it('checks FlexVolume PersistentVolumes and does not fire without FlexVolume', () => {
    const ctx = contextOf({ persistentvolumes: [pv('old', { flexVolume: { driver: 'x/y' } })] });
    expect(findings(flexvolume.check(ctx))).toHaveLength(1);
    expect(findings(flexvolume.check(contextOf(withHostPath('/var/lib/x').objects)))).toEqual([]);
  });
});

describe('workload.csi-driver', () => {
  const driver = (name: string) => ({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSIDriver',
    metadata: { name, uid: `u-${name}` },
    spec: {},
  });
  const nodePlugin = (name: string, extraVolumes: unknown[] = [], command: string[] = []) =>
    workload(
      'DaemonSet',
      'storage',
      `${name.split('.')[0]}-node`,
      {
        containers: [
          {
            name: 'registrar',
            image: 'registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.12.0',
            args: [`--kubelet-registration-path=/var/lib/kubelet/plugins/${name}/csi.sock`],
          },
          {
            name: 'plugin',
            image: 'plugin:1',
            command,
            volumeMounts: [{ name: 'etc', mountPath: '/etc/x', readOnly: true }],
          },
        ],
        volumes: [
          {
            name: 'registration',
            hostPath: { path: '/var/lib/kubelet/plugins_registry', type: 'Directory' },
          },
          ...extraVolumes,
        ],
      },
      { pods: ['w1', 'w2'] },
    );

  it('lists what a known driver needs and warns about v1.14 workload isolation for iSCSI', () => {
    const ds = nodePlugin('driver.longhorn.io');
    const fs = audit(
      contextOf(merge({ csidrivers: [driver('driver.longhorn.io')] }, ds.objects), { talosVersion: '1.14' }),
      [csiDriver],
    );
    expect(fs).toHaveLength(1);
    expect(fs[0]!.subject).toMatchObject({ kind: 'CSIDriver', name: 'driver.longhorn.io' });
    expect(fs[0]!.message).toMatch(/siderolabs\/iscsi-tools/);
    expect(fs[0]!.message).toMatch(/workloadIsolation/);
    expect(fs[0]!.remediation).toContain('KernelModuleConfig');
  });

  it('reports a node plugin that mounts host paths Talos lacks', () => {
    const ds = nodePlugin('cinder.csi.openstack.org', [
      { name: 'etc', hostPath: { path: '/etc/cacert', type: 'Directory' } },
    ]);
    const [f] = findings(
      csiDriver.check(contextOf(merge({ csidrivers: [driver('cinder.csi.openstack.org')] }, ds.objects))),
    );
    expect(f!.message).toMatch(/mounts \/etc\/cacert/);
    expect(f!.evidence[1]).toMatchObject({ field: 'spec.template.spec.volumes[etc].hostPath.path' });
  });

  it('reports host tools run by the plugin', () => {
    const ds = nodePlugin('csi.example.com', [], ['sh', '-c', 'iscsiadm -m session']);
    const [f] = findings(csiDriver.check(contextOf(ds.objects)));
    expect(f!.message).toMatch(/iscsi-tools/);
  });

  it('does not fire for a driver whose node plugin needs nothing from the host', () => {
    const ds = nodePlugin('ebs.csi.aws.com', [
      { name: 'dev', hostPath: { path: '/dev', type: 'Directory' } },
    ]);
    expect(
      findings(csiDriver.check(contextOf(merge({ csidrivers: [driver('ebs.csi.aws.com')] }, ds.objects)))),
    ).toEqual([]);
  });

  it('says so when a CSIDriver has no node plugin in the snapshot', () => {
    const [f] = findings(csiDriver.check(contextOf({ csidrivers: [driver('orphan.example.com')] })));
    expect(f!.message).toMatch(/no node-plugin DaemonSet/);
  });
});

describe('workload.kernel-modules', () => {
  const spec = (container: Record<string, unknown>, volumes: unknown[] = []) => ({
    containers: [{ name: 'c', image: 'busybox:1', ...container }],
    volumes,
  });

  it('fires for SYS_MODULE, modprobe and known module-hungry images, once per workload', () => {
    const w = workload(
      'DaemonSet',
      'vpn',
      'wg',
      spec({
        image: 'linuxserver/wireguard:1.0',
        command: ['sh', '-c', 'modprobe wireguard && run'],
        securityContext: { capabilities: { add: ['SYS_MODULE', 'NET_ADMIN'] } },
      }),
      { pods: ['w1', 'w2'] },
    );
    const fs = audit(contextOf(w.objects), [kernelModules]);
    expect(fs).toHaveLength(1);
    expect(fs[0]!.evidence.map((e) => ('field' in e ? e.field : ''))).toEqual([
      'spec.template.spec.containers[c].securityContext.capabilities.add',
      'spec.template.spec.containers[c].command',
      'spec.template.spec.containers[c].image',
    ]);
    expect(fs[0]!.remediation).toContain('{name: wireguard}');
  });

  it('fires for a read-write /lib/modules mount, not a read-only one', () => {
    const mount = (readOnly: boolean) =>
      workload(
        'DaemonSet',
        'x',
        'y',
        spec({ volumeMounts: [{ name: 'm', mountPath: '/lib/modules', readOnly }] }, [
          { name: 'm', hostPath: { path: '/lib/modules' } },
        ]),
      );
    expect(findings(kernelModules.check(contextOf(mount(false).objects)))).toHaveLength(1);
    expect(findings(kernelModules.check(contextOf(mount(true).objects)))).toEqual([]);
  });

  it('leaves the Cilium agent to cni.cilium-values', () => {
    const cilium = workload(
      'DaemonSet',
      'kube-system',
      'cilium',
      spec({
        image: 'quay.io/cilium/cilium:v1.16.6',
        securityContext: { capabilities: { add: ['SYS_MODULE'] } },
      }),
      {
        labels: { 'k8s-app': 'cilium' },
      },
    );
    expect(findings(kernelModules.check(contextOf(cilium.objects)))).toEqual([]);
  });
});

describe('workload.host-binaries', () => {
  it('fires for hostPID + nsenter into the host and for mounts of host bin directories', () => {
    const w = workload('DaemonSet', 'ops', 'node-shell', {
      hostPID: true,
      containers: [
        {
          name: 'sh',
          image: 'alpine',
          command: ['nsenter', '-t', '1', '-m', '--', 'apt-get', 'install', 'x'],
          securityContext: { privileged: true },
        },
      ],
      volumes: [{ name: 'bin', hostPath: { path: '/usr/bin' } }],
    });
    const [f] = findings(hostBinaries.check(contextOf(w.objects)));
    expect(f!.message).toMatch(/mounts \/usr\/bin/);
    expect(f!.message).toMatch(/runs nsenter into the host/);
  });

  it('does not fire for nsenter without access to host namespaces', () => {
    const w = workload('Deployment', 'ops', 'tool', {
      containers: [{ name: 'sh', image: 'alpine', command: ['nsenter', '--net=/run/netns/x'] }],
    });
    expect(findings(hostBinaries.check(contextOf(w.objects)))).toEqual([]);
  });
});

describe('examples/lab-cluster: the traps of the kubelet, nodes and workload families', () => {
  let fs: Finding[] = [];
  beforeAll(async () => {
    const snapshot = await loadSnapshot('examples/lab-cluster', { strictPki: false });
    const facts = deriveFacts(snapshot, {});
    const rules = [...KUBELET_RULES, ...NODES_RULES, ...WORKLOAD_RULES];
    fs = audit({ snapshot, facts, target: facts.target, index: buildIndex(snapshot) }, rules);
  });
  const find = (ruleId: string, name: string) =>
    fs.filter((f) => f.ruleId === ruleId && f.subject.name === name);

  it.each([
    ['7', 'workload.hostpath-absent', 'csi-cinder-nodeplugin', /\/etc\/cacert/],
    ['7', 'workload.csi-driver', 'cinder.csi.openstack.org', /\/etc\/cacert/],
    ['8', 'workload.hostpath-absent', 'csi-cinder-controllerplugin', /\/etc\/kubernetes\/cloud\.conf/],
    ['9', 'nodes.cp-schedulable', 'cp-1', /shop\/frontend-/],
    ['9', 'nodes.cp-schedulable', 'cp-3', /apps\/wiki-/],
    ['10', 'workload.pdb-missing', 'wiki', /runs 1 replica/],
    ['10', 'workload.pdb-missing', 'coredns', /without a PodDisruptionBudget/],
    ['11', 'workload.pdb-blocking', 'checkout', /worker-1 .*worker-4/],
    ['18', 'kubelet.config-carryover', 'kubelet', /maxPods=150/],
    ['19', 'nodes.labels-taints-carryover', 'lab.example/pool', /StatefulSet shop\/postgres/],
    ['20', 'workload.undrainable-pods', 'netshoot', /no controller/],
  ])('trap %s: %s reports %s', (_trap, ruleId, name, message) => {
    const hits = find(ruleId, name);
    expect(hits.length, `${ruleId} ${name}`).toBeGreaterThan(0);
    expect(hits.map((h) => h.message).join('\n')).toMatch(message);
  });

  it('reports nothing on what the example keeps healthy (Cilium mounts, PDB-covered workloads, postgres volumes)', () => {
    expect(fs.filter((f) => f.ruleId === 'workload.hostpath-readonly-root')).toEqual([]);
    expect(
      fs.filter((f) =>
        [
          'workload.kernel-modules',
          'workload.host-binaries',
          'workload.flexvolume',
          'workload.node-pinned',
        ].includes(f.ruleId),
      ),
    ).toEqual([]);
    for (const name of ['frontend', 'api', 'postgres'])
      expect(find('workload.pdb-missing', name)).toEqual([]);
    expect(
      fs.filter((f) => f.ruleId === 'workload.undrainable-pods' && f.subject.name === 'postgres'),
    ).toEqual([]);
    expect(fs.filter((f) => f.severity === 'blocker').map((f) => f.ruleId)).toEqual([
      'workload.pdb-blocking',
    ]);
  });
});
