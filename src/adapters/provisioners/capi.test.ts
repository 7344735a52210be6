/**
 * The capi provisioner against an in-memory management cluster (testing-mgmt-memory.ts), the
 * controllers' work done by list hooks: which Machine it takes, when it refuses to create one,
 * and what stops each wait. Its waits run on a virtual clock (testing-virtual-clock.ts), so a test
 * can say the instant a wait stops and the defaults (minutes) cost nothing.
 * capi.real.test.ts and capi-link.real.test.ts run it on the lab.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { labKitObjects } from '../../capi/testing-kit.js';
import { CONTROL_PLANE_LABEL, PAUSED_ANNOTATION } from '../../capi/view.js';
import { FerryError } from '../../errors.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import type {
  ActionContext,
  EtcdMemberInfo,
  EtcdView,
  ProvisionerPort,
  ProvisionRequest,
} from '../../ports/run.js';
import type { KubeObject } from '../../snapshot/model.js';
import { useClock, VirtualClock } from '../../util/testing-virtual-clock.js';
import { DEPLOYMENT_NAME_LABEL } from '../capi/mgmt-api.js';
import { MemoryMgmt, machine } from '../capi/testing-mgmt-memory.js';
import { CapiProvisioner, type CapiProvisionerOptions } from './capi.js';

// The provisioner's polls sleep through node:timers/promises: on the virtual clock here.
vi.mock('node:timers/promises', async () => ({
  setTimeout: (await import('../../util/testing-virtual-clock.js')).virtualSetTimeout,
}));

const crds = CrdValidator.fromSchemas();
const kit = labKitObjects('lab');
const templates = kit.filter((o) => o.kind.endsWith('MachineTemplate'));
const CP = { [CONTROL_PLANE_LABEL]: '' };
const MD = { [DEPLOYMENT_NAME_LABEL]: 'lab-workers' };

const member = (name: string): EtcdMemberInfo => ({
  id: name,
  name,
  peerURLs: [],
  clientURLs: [],
  isLearner: false,
});
const node = (name: string, ip?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  status: { addresses: ip ? [{ type: 'InternalIP', address: ip }] : [{ type: 'Hostname', address: name }] },
});

let api: MemoryMgmt;
let members: EtcdMemberInfo[] | Error;
let nodes: Map<string, KubeObject>;
let decommissioned: string[];
let lines: string[];
let clock: VirtualClock;

beforeEach(() => {
  clock = new VirtualClock();
  useClock(clock);
  vi.spyOn(Date, 'now').mockImplementation(clock.now);
  const tcp = structuredClone(kit.find((o) => o.kind === 'TalosControlPlane')!);
  tcp.metadata.uid = 'tcp-uid-1';
  tcp.metadata.annotations = { ...tcp.metadata.annotations, [PAUSED_ANNOTATION]: 'true' };
  tcp.spec = { ...tcp.spec, replicas: 0 };
  api = new MemoryMgmt(tcp, structuredClone(templates));
  api.names.machineDeployments = [{ name: 'lab-workers', replaces: ['w1', 'w2'] }];
  api.mdReplicas.set('lab-workers', 0);
  members = [member('cp1'), member('cp2'), member('cp3')];
  nodes = new Map();
  decommissioned = [];
  lines = [];
  // What Cluster API needs to link a Machine to its Node; tests take parts away.
  api.cluster = {
    apiVersion: 'cluster.x-k8s.io/v1beta2',
    kind: 'Cluster',
    metadata: { name: 'lab', namespace: 'lab' },
    status: { initialization: { controlPlaneInitialized: true } },
  };
  api.kubeconfig = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'lab-kubeconfig', namespace: 'lab' },
    ...({ type: 'cluster.x-k8s.io/secret', data: { value: 'a3ViZWNvbmZpZw==' } } as object),
  } as KubeObject;
});

afterEach(() => {
  vi.restoreAllMocks();
});

function provisioner(o: Partial<CapiProvisionerOptions> = {}): CapiProvisioner {
  const decommissioner = {
    kind: 'manual',
    decommission: async (r: { name: string }) => {
      decommissioned.push(r.name);
    },
  } as unknown as ProvisionerPort;
  return new CapiProvisioner({
    api: api.asApi(),
    workload: { getObject: async (_v, _k, _ns, name) => nodes.get(name) },
    etcd: {
      observe: async () => {
        if (members instanceof Error) throw members;
        return { members } as EtcdView;
      },
    },
    decommissioner,
    templates,
    kitDir: 'kit',
    crds,
    pollMs: 10,
    ...o,
  });
}
const ctx = (timeoutMs = 2000, signal = new AbortController().signal): ActionContext => ({
  stepId: '2.01',
  timeoutMs,
  signal,
  log: (l) => lines.push(l),
});
const req = (role: 'controlplane' | 'worker', replaces: string, claimed: string[] = []): ProvisionRequest =>
  ({
    replaces,
    name: null,
    address: null,
    role,
    talosVersion: 'v1.11.0',
    machineConfig: null,
    endpoint: null,
    claimed,
  }) as ProvisionRequest;

/** The controllers: every Machine without a nodeRef gets its Node (named `as`), with an InternalIP. */
function boot(as: (m: string) => string = (m) => m, ip = '10.0.0.9'): void {
  api.onList = (a) => {
    for (const m of a.objects.filter((o) => o.kind === 'Machine' && !o.status?.['nodeRef'])) {
      m.status = { ...m.status, nodeRef: { name: as(m.metadata.name) } };
      nodes.set(as(m.metadata.name), node(as(m.metadata.name), ip));
    }
  };
}
const failure = async (p: Promise<unknown>) => {
  const err = await p.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(FerryError);
  return err as FerryError;
};

describe('capi provisioner: a control plane', () => {
  it('raises the paused TalosControlPlane by one, creates the Machine, and returns its Node and InternalIP', async () => {
    api.tcp!.spec!['replicas'] = 1;
    api.objects.push(machine('cp1', CP, { nodeRef: { name: 'cp1' } }));
    boot();
    const r = await provisioner().provision(req('controlplane', 'cp2', ['cp1', 'cp2', 'cp3']), ctx());
    expect(api.writes()).toEqual([
      'replicas 2',
      'create ProxmoxMachine',
      'create TalosConfig',
      'create Machine',
    ]);
    expect(r.name).toMatch(/^lab-control-plane-[a-z0-9]{5}$/);
    expect(r.address).toBe('10.0.0.9');
    expect(lines.some((l) => l.includes("'s Node is"))).toBe(false);
  });

  it('takes a Machine no known node claims (an earlier attempt of this step), whatever its case, and scales nothing', async () => {
    api.objects.push(machine('CP1', CP, { nodeRef: { name: 'cp1' } }), machine('lab-cp-x1', CP));
    boot();
    const r = await provisioner().provision(req('controlplane', 'cp2', ['cp1']), ctx());
    expect(r.name).toBe('lab-cp-x1');
    expect(api.writes()).toEqual([]);
    expect(lines[0]).toBe('Machine lab-cp-x1 already exists for cp2: no second scale step');
  });

  it('takes only control-plane Machines: an unclaimed Machine of no MachineDeployment is not ours', async () => {
    api.objects.push(machine('lab-pool-x1', {}));
    boot();
    const r = await provisioner().provision(req('controlplane', 'cp1'), ctx());
    expect(r.name).toMatch(/^lab-control-plane-/);
    expect(api.writes()).toContain('create Machine');
  });

  it('logs when the Node is not named as its Machine', async () => {
    boot((m) => `talos-${m}`);
    const r = await provisioner().provision(req('controlplane', 'cp1'), ctx());
    expect(r.name).toMatch(/^talos-lab-control-plane-/);
    expect(lines.at(-1)).toMatch(
      /^Machine lab-control-plane-\S+'s Node is talos-lab-control-plane-\S+: the Talos host name/,
    );
  });

  it('stops when the TalosControlPlane does not exist', async () => {
    api.tcp = undefined;
    const err = await failure(provisioner().provision(req('controlplane', 'cp1'), ctx()));
    expect(err.kind).toBe('gate');
    expect(err.message).toBe('TalosControlPlane lab/lab-control-plane does not exist');
    expect(api.writes()).toEqual([]);
  });

  it('stops, without writing, when the etcd member list cannot be read', async () => {
    members = new Error('context deadline exceeded');
    const err = await failure(provisioner().provision(req('controlplane', 'cp1'), ctx()));
    expect(err.message).toBe(
      'cannot read the etcd member list before adding a control plane: context deadline exceeded',
    );
    expect((err as Error & { cause?: unknown }).cause).toBe(members);
    expect(api.writes()).toEqual([]);
  });

  it('stops on an unpaused TalosControlPlane, naming the kubeadm members its audit would remove', async () => {
    delete api.tcp!.metadata.annotations![PAUSED_ANNOTATION];
    api.objects.push(machine('talos-a', CP, { nodeRef: { name: 'talos-a' } }));
    members = [member('cp1'), member('talos-a')];
    const err = await failure(provisioner().provision(req('controlplane', 'cp1', ['talos-a']), ctx()));
    expect(err.message).toBe(
      'TalosControlPlane lab-control-plane is not paused, and its etcd audit may remove the member(s) cp1 that no Machine names (the kubeadm members) at any moment: ferry adds control planes only while it is paused',
    );
    expect(err.remediation).toMatch(
      /^pause it now: kubectl .* -n lab annotate taloscontrolplanes\S* lab-control-plane cluster\.x-k8s\.io\/paused=true/,
    );
    expect(api.writes()).toEqual([]);
  });

  it('stops on an unpaused TalosControlPlane even when every member is a Machine’s', async () => {
    delete api.tcp!.metadata.annotations![PAUSED_ANNOTATION];
    members = [member('cp1')];
    const err = await failure(provisioner().provision(req('controlplane', 'cp1'), ctx()));
    expect(err.message).toBe(
      'TalosControlPlane lab-control-plane is not paused: ferry adds control planes only while it is paused',
    );
  });

  it('stops when the Cluster is paused: nothing would boot the Machine', async () => {
    api.clusterPaused = true;
    const err = await failure(provisioner().provision(req('controlplane', 'cp1'), ctx()));
    expect(err.message).toBe('Cluster lab/lab is paused: no controller would boot a new Machine');
    expect(err.remediation).toMatch(
      /^unpause the Cluster .*kubectl.* -n lab .*lab.*; then run ferry run --resume$/,
    );
    expect(api.writes()).toEqual([]);
  });
});

describe('capi provisioner: a worker', () => {
  it('finds the MachineDeployment that replaces the node, scales it up by one over what exists, and takes the new Machine', async () => {
    api.mdReplicas.set('lab-workers', 1);
    api.objects.push(
      machine('w-old1', MD, { nodeRef: { name: 'x' } }),
      machine('w-old2', MD, { nodeRef: { name: 'y' } }),
    );
    let lists = 0;
    api.onList = (a) => {
      // The MachineSet controller answers the raised replicas on the third list.
      if (++lists === 3) a.objects.push(machine('w-new', MD));
      for (const m of a.objects.filter((o) => o.metadata.name === 'w-new'))
        m.status = { nodeRef: { name: 'w-new' } };
    };
    nodes.set('w-new', node('w-new', '10.0.0.20'));
    const r = await provisioner().provision(req('worker', 'w2', ['x', 'y']), ctx());
    expect(api.writes()).toEqual(['md lab-workers replicas 3']);
    expect(lines[0]).toBe('MachineDeployment lab-workers: replicas 1 → 3');
    expect(r).toEqual({ name: 'w-new', address: '10.0.0.20' });
  });

  it('never lowers replicas: above the Machines it finds, it adds one to the replicas', async () => {
    api.mdReplicas.set('lab-workers', 5);
    api.onList = (a) => {
      if (a.mdReplicas.get('lab-workers') === 6 && !a.objects.some((o) => o.metadata.name === 'w-new'))
        a.objects.push(machine('w-new', MD, { nodeRef: { name: 'w-new' } }));
    };
    nodes.set('w-new', node('w-new', '10.0.0.20'));
    await provisioner().provision(req('worker', 'w1'), ctx());
    expect(api.writes()).toEqual(['md lab-workers replicas 6']);
  });

  it('refuses (exit 2) a node no MachineDeployment replaces', async () => {
    const err = await failure(provisioner().provision(req('worker', 'w3'), ctx()));
    expect(err.kind).toBe('input');
    expect(err.message).toBe('the kit has no MachineDeployment whose ferry.dev/replaces names w3');
    expect(err.location).toEqual({ field: 'metadata.annotations.ferry.dev/replaces' });
  });

  it('stops when the MachineDeployment does not exist', async () => {
    api.mdReplicas.clear();
    const err = await failure(provisioner().provision(req('worker', 'w1'), ctx()));
    expect(err.message).toBe('MachineDeployment lab/lab-workers does not exist');
    expect(api.writes()).toEqual([]);
  });

  it('stops when no Machine appears before the step’s deadline, at the first poll past it', async () => {
    const err = await failure(provisioner().provision(req('worker', 'w1'), ctx(30)));
    expect(clock.elapsed()).toBe(40);
    expect(err.message).toBe('MachineDeployment lab-workers created no Machine for replicas 1');
    expect(err.remediation).toMatch(
      /-n lab describe machinedeployments\.cluster\.x-k8s\.io lab-workers\), then run ferry run --resume$/,
    );
  });

  it('stops the wait for the new Machine when the run is interrupted', async () => {
    const ac = new AbortController();
    clock.at(25, () => ac.abort());
    const err = await provisioner()
      .provision(req('worker', 'w1'), ctx(10_000, ac.signal))
      .catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(clock.elapsed()).toBe(25);
  });

  it('hands decommissioning to the second provisioner', async () => {
    await provisioner().decommission({ name: 'w1' } as never, ctx());
    expect(decommissioned).toEqual(['w1']);
  });
});

describe('capi provisioner: waiting for the Node', () => {
  beforeEach(() => {
    api.mdReplicas.set('lab-workers', 1);
  });
  const waiting = (status: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) =>
    api.objects.push(machine('w-new', MD, status, spec));

  it('stops when the Machine is gone before it got a Node', async () => {
    waiting();
    let n = 0;
    api.onList = (a) => {
      if (++n === 2) a.objects = a.objects.filter((o) => o.kind !== 'Machine');
    };
    const err = await failure(provisioner().provision(req('worker', 'w1'), ctx()));
    expect(err.message).toBe('Machine w-new is gone before it got a Node');
  });

  it('stops at the deadline naming the phase, once the link to the Node is not the cause', async () => {
    waiting({ phase: 'Provisioning' });
    const err = await failure(provisioner({ linkGraceMs: 60_000 }).provision(req('worker', 'w1'), ctx(40)));
    expect(err.message).toBe('Machine w-new has no nodeRef yet (phase Provisioning)');
  });

  it('names the missing kubeconfig Secret once the link grace has passed', async () => {
    waiting({ phase: 'Running' });
    api.cluster = undefined;
    api.kubeconfig = undefined;
    const err = await failure(provisioner({ linkGraceMs: 0 }).provision(req('worker', 'w1'), ctx()));
    expect(err.message).toMatch(/^Machine lab\/w-new cannot get its Node: /);
    expect(err.remediation).toMatch(/ferry capi adopt kit/);
  });

  it('names what it cannot read of the link, and reads the Cluster and Secret both', async () => {
    waiting();
    api.cluster = new Error('clusters is forbidden');
    api.kubeconfig = new Error('secrets is forbidden');
    const err = await failure(provisioner({ linkGraceMs: 0 }).provision(req('worker', 'w1'), ctx()));
    expect(err.message).toMatch(
      /^Machine lab\/w-new has no Node yet, and ferry cannot read .*secrets is forbidden.*clusters is forbidden/,
    );
  });

  it('does not look at the link before its grace', async () => {
    waiting();
    let n = 0;
    api.onList = (a) => {
      if (++n === 5)
        for (const m of a.objects.filter((o) => o.kind === 'Machine'))
          m.status = { nodeRef: { name: 'w-new' } };
    };
    nodes.set('w-new', node('w-new', '10.0.0.21'));
    const r = await provisioner({ linkGraceMs: 60_000 }).provision(req('worker', 'w1'), ctx());
    expect(r.address).toBe('10.0.0.21');
  });

  it('stops a Machine Provisioned without a providerID past its grace, with the kit’s CCM as the fix', async () => {
    waiting({ phase: 'Provisioned' });
    const err = await failure(
      provisioner({ providerIdGraceMs: 0, linkGraceMs: 60_000, ccmRunning: async () => false }).provision(
        req('worker', 'w1'),
        ctx(),
      ),
    );
    expect(err.message).toMatch(/^Machines lab\/w-new are Provisioned without a providerID/);
  });

  it('counts a failing CCM check as not observed, and still stops', async () => {
    waiting({ phase: 'Provisioned' });
    const err = await failure(
      provisioner({
        providerIdGraceMs: 0,
        linkGraceMs: 60_000,
        ccmRunning: async () => {
          throw new Error('pods is forbidden');
        },
      }).provision(req('worker', 'w1'), ctx()),
    );
    expect(err.message).toMatch(/^Machines lab\/w-new are Provisioned without a providerID/);
    expect(err.message).toContain(
      'ferry could not see whether a cloud-controller-manager runs in the workload cluster',
    );
  });

  it('does not call a Machine with a providerID stuck', async () => {
    waiting({ phase: 'Provisioned' }, { providerID: 'proxmox://1' });
    const err = await failure(
      provisioner({ providerIdGraceMs: 0, linkGraceMs: 60_000 }).provision(req('worker', 'w1'), ctx(40)),
    );
    expect(err.message).toBe('Machine w-new has no nodeRef yet (phase Provisioned)');
  });

  it('does not call a Machine stuck before its providerID grace', async () => {
    waiting({ phase: 'Provisioned' });
    const err = await failure(
      provisioner({ providerIdGraceMs: 60_000, linkGraceMs: 60_000 }).provision(req('worker', 'w1'), ctx(40)),
    );
    expect(err.message).toBe('Machine w-new has no nodeRef yet (phase Provisioned)');
    expect(err.remediation).toMatch(
      /-n lab get machines\.cluster\.x-k8s\.io w-new -w\), then run ferry run --resume$/,
    );
  });

  it('looks at the link exactly when its grace has passed, not before', async () => {
    waiting({ phase: 'Running' });
    api.kubeconfig = undefined;
    const err = await failure(provisioner({ linkGraceMs: 50 }).provision(req('worker', 'w1'), ctx(10_000)));
    expect(err.message).toMatch(/^Machine lab\/w-new cannot get its Node: /);
    expect(clock.elapsed()).toBe(50);
  });

  it('gives the link 30 s by default', async () => {
    waiting({ phase: 'Running' });
    api.kubeconfig = undefined;
    const err = await failure(provisioner({ pollMs: 1000 }).provision(req('worker', 'w1'), ctx(600_000)));
    expect(err.message).toMatch(/^Machine lab\/w-new cannot get its Node: /);
    expect(clock.elapsed()).toBe(30_000);
  });

  it('looks at the link at the deadline even within its grace, and names it over the phase', async () => {
    waiting({ phase: 'Provisioning' });
    api.kubeconfig = undefined;
    const err = await failure(provisioner({ linkGraceMs: 60_000 }).provision(req('worker', 'w1'), ctx(100)));
    expect(err.message).toMatch(/^Machine lab\/w-new cannot get its Node: /);
    // The first poll past the deadline: 110 (at 100 it is not past yet).
    expect(clock.elapsed()).toBe(110);
  });

  it('counts an unreadable TalosControlPlane as paused when it names the link', async () => {
    waiting({ phase: 'Running' });
    api.kubeconfig = undefined;
    const paused = await failure(provisioner({ linkGraceMs: 0 }).provision(req('worker', 'w1'), ctx()));
    api.controlPlane = async () => {
      throw new Error('taloscontrolplanes is forbidden');
    };
    const unreadable = await failure(provisioner({ linkGraceMs: 0 }).provision(req('worker', 'w1'), ctx()));
    expect(unreadable.message).toBe(paused.message);
    expect(unreadable.remediation).toBe(paused.remediation);
    // An unpaused TalosControlPlane is told otherwise: the comparison above can tell them apart.
    delete api.tcp!.metadata.annotations![PAUSED_ANNOTATION];
    api.controlPlane = MemoryMgmt.prototype.controlPlane.bind(api);
    const unpaused = await failure(provisioner({ linkGraceMs: 0 }).provision(req('worker', 'w1'), ctx()));
    expect(`${unpaused.message} ${unpaused.remediation}`).not.toBe(`${paused.message} ${paused.remediation}`);
  });

  it('gives a Machine Provisioned without a providerID 300 s by default, counted from when it got there', async () => {
    waiting({ phase: 'Provisioning' });
    clock.at(5_000, () => {
      api.objects.find((o) => o.metadata.name === 'w-new')!.status!['phase'] = 'Provisioned';
    });
    const err = await failure(
      provisioner({ pollMs: 1000, linkGraceMs: 600_000, ccmRunning: async () => false }).provision(
        req('worker', 'w1'),
        ctx(600_000),
      ),
    );
    expect(err.message).toMatch(/^Machines lab\/w-new are Provisioned without a providerID/);
    expect(clock.elapsed()).toBe(305_000);
  });

  it('stops a stuck Machine exactly when its providerID grace has passed', async () => {
    waiting({ phase: 'Provisioned' });
    const err = await failure(
      provisioner({ providerIdGraceMs: 50, linkGraceMs: 60_000 }).provision(req('worker', 'w1'), ctx(10_000)),
    );
    expect(err.message).toMatch(/^Machines lab\/w-new are Provisioned without a providerID/);
    expect(clock.elapsed()).toBe(50);
  });

  it('starts the providerID grace over when the Machine leaves Provisioned', async () => {
    waiting({ phase: 'Provisioned' });
    const m = api.objects.find((o) => o.metadata.name === 'w-new')!;
    clock.at(30, () => {
      m.status!['phase'] = 'Provisioning';
    });
    clock.at(40, () => {
      m.status!['phase'] = 'Provisioned';
    });
    const err = await failure(
      provisioner({ providerIdGraceMs: 50, linkGraceMs: 60_000 }).provision(req('worker', 'w1'), ctx(10_000)),
    );
    expect(err.message).toMatch(/^Machines lab\/w-new are Provisioned without a providerID/);
    expect(clock.elapsed()).toBe(90);
  });

  it('calls stuck only a Machine in Provisioned: one still Provisioning waits for its deadline', async () => {
    waiting({ phase: 'Provisioning' });
    const err = await failure(
      provisioner({ providerIdGraceMs: 0, linkGraceMs: 60_000 }).provision(req('worker', 'w1'), ctx(40)),
    );
    expect(err.message).toBe('Machine w-new has no nodeRef yet (phase Provisioning)');
  });

  it('reads a Machine without status or spec as not stuck, its phase unknown', async () => {
    const m = machine('w-new', MD);
    delete m.status;
    delete m.spec;
    api.objects.push(m);
    const err = await failure(
      provisioner({ providerIdGraceMs: 0, linkGraceMs: 60_000 }).provision(req('worker', 'w1'), ctx(40)),
    );
    expect(err.message).toBe('Machine w-new has no nodeRef yet (phase unknown)');
    expect(clock.elapsed()).toBe(50);
  });

  it('stops the wait for the Node when the run is interrupted', async () => {
    waiting({ phase: 'Provisioning' });
    const ac = new AbortController();
    clock.at(25, () => ac.abort());
    const err = await provisioner({ linkGraceMs: 60_000 })
      .provision(req('worker', 'w1'), ctx(10_000, ac.signal))
      .catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(clock.elapsed()).toBe(25);
  });

  it('stops the wait for the InternalIP when the run is interrupted', async () => {
    waiting({ nodeRef: { name: 'w-new' } });
    nodes.set('w-new', node('w-new'));
    const ac = new AbortController();
    clock.at(25, () => ac.abort());
    const err = await provisioner()
      .provision(req('worker', 'w1'), ctx(10_000, ac.signal))
      .catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(clock.elapsed()).toBe(25);
  });

  it('returns no address when the Node has no InternalIP by the deadline', async () => {
    waiting({ nodeRef: { name: 'w-new' } });
    nodes.set('w-new', node('w-new'));
    const r = await provisioner().provision(req('worker', 'w1'), ctx(30));
    expect(r).toEqual({ name: 'w-new', address: null });
    expect(clock.elapsed()).toBe(40);
  });

  it('waits for the Node to exist, then takes its InternalIP', async () => {
    waiting({ nodeRef: { name: 'w-new' } });
    let reads = 0;
    const r = await provisioner({
      workload: {
        getObject: async () => (++reads < 3 ? undefined : node('w-new', '10.0.0.30')),
      },
    }).provision(req('worker', 'w1'), ctx());
    expect(r.address).toBe('10.0.0.30');
    expect(reads).toBe(3);
  });
});

describe('capi provisioner: a worker batch (request, then detect)', () => {
  const batch = (claimed: string[] = []) => [req('worker', 'w1', claimed), req('worker', 'w2', claimed)];
  /** The MachineSet controller: Machines up to the replicas; each gets its Node on the next list. */
  function machineSet(): void {
    api.onList = (a) => {
      const mine = a.objects.filter(
        (o) => o.kind === 'Machine' && o.metadata.labels?.[DEPLOYMENT_NAME_LABEL],
      );
      for (const m of mine.filter((x) => !x.status?.['nodeRef'] && x.metadata.name.startsWith('w-new'))) {
        m.status = { nodeRef: { name: m.metadata.name } };
        nodes.set(m.metadata.name, node(m.metadata.name, `10.0.0.${30 + mine.indexOf(m)}`));
      }
      for (let i = mine.length; i < (a.mdReplicas.get('lab-workers') ?? 0); i++)
        a.objects.push(machine(`w-new-${i}`, MD));
    };
  }

  it('scales the pool by the batch in one patch, then two detections side by side take one Machine each', async () => {
    api.mdReplicas.set('lab-workers', 1);
    api.objects.push(machine('w-old', MD, { nodeRef: { name: 'x' } }));
    machineSet();
    const p = provisioner();
    await p.requestBatch(batch(['x']), ctx());
    expect(api.writes()).toEqual(['md lab-workers replicas 3']);
    expect(lines[0]).toBe('MachineDeployment lab-workers: replicas 1 → 3 (w1, w2)');
    const [a, b] = await Promise.all(batch(['x']).map((r) => p.detect(r, ctx())));
    expect(new Set([a!.name, b!.name])).toEqual(new Set(['w-new-1', 'w-new-2']));
    expect(api.writes()).toEqual(['md lab-workers replicas 3']);
  });

  it('asked again (a resume, a fresh process) after the patch: no second patch, whether or not the Machines exist yet', async () => {
    api.mdReplicas.set('lab-workers', 3);
    api.objects.push(machine('w-old', MD, { nodeRef: { name: 'x' } }));
    // Killed before the MachineSet made the Machines: the replicas already cover the batch.
    await provisioner().requestBatch(batch(['x']), ctx());
    expect(api.writes()).toEqual([]);
    expect(lines[0]).toBe(
      'MachineDeployment lab-workers: replicas 3 already cover 2 replacement(s) beside 1 earlier: no patch',
    );
    // ... and after: still none, and each detection takes one of them.
    machineSet();
    const p = provisioner();
    await p.requestBatch(batch(['x']), ctx());
    const found = await Promise.all(batch(['x']).map((r) => p.detect(r, ctx())));
    expect(found.map((f) => f.name).sort()).toEqual(['w-new-1', 'w-new-2']);
    expect(api.writes()).toEqual([]);
  });

  it('a replacement bound before the resume counts as earlier: only the rest is asked for', async () => {
    api.mdReplicas.set('lab-workers', 2);
    api.objects.push(machine('w-old', MD, { nodeRef: { name: 'x' } }));
    api.objects.push(machine('w-new-1', MD, { nodeRef: { name: 'w-new-1' } }));
    // w1 was bound to w-new-1 (claimed); w2 was never asked for: one more.
    await provisioner().requestBatch([req('worker', 'w2', ['x', 'w-new-1'])], ctx());
    expect(api.writes()).toEqual(['md lab-workers replicas 3']);
  });

  it('prefers a Machine that has its Node: the first to boot is bound first', async () => {
    api.objects.push(machine('w-a', MD), machine('w-b', MD, { nodeRef: { name: 'w-b' } }));
    nodes.set('w-b', node('w-b', '10.0.0.40'));
    expect(await provisioner().detect(req('worker', 'w1'), ctx())).toEqual({
      name: 'w-b',
      address: '10.0.0.40',
    });
  });

  it('stops a detection whose Machine failed, naming it and its failure', async () => {
    api.objects.push(
      machine('w-bad', MD, { phase: 'Failed', failureMessage: 'VM 9001 could not be cloned' }),
    );
    const err = await failure(provisioner().detect(req('worker', 'w1'), ctx()));
    expect(err.message).toBe('Machine w-bad failed before it got a Node: VM 9001 could not be cloned');
    expect(err.remediation).toContain('describe machines.cluster.x-k8s.io w-bad');
  });

  it('stops a detection that finds no new Machine by its deadline, naming the pool and the node it replaces', async () => {
    api.objects.push(machine('w-old', MD, { nodeRef: { name: 'x' } }));
    const err = await failure(provisioner().detect(req('worker', 'w1', ['x']), ctx(30)));
    expect(err.message).toBe('MachineDeployment lab-workers has no new Machine for the replacement of w1');
    expect(clock.elapsed()).toBe(40);
  });

  it('a pool the kit does not name is refused before anything is written', async () => {
    const err = await failure(provisioner().requestBatch([req('worker', 'w1'), req('worker', 'w9')], ctx()));
    expect(err.kind).toBe('input');
    expect(api.writes()).toEqual([]);
  });
});
