/**
 * observe() against fakes at the port boundary: it reads exactly the sections an expectation
 * names, and what it could not read is recorded as not observed (ok: false), never as absent.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ExpectedState, NodeRef } from '../plan/expected-state.js';
import type {
  ApiserverStatusPort,
  BackendRef,
  EtcdAdminPort,
  EtcdView,
  KubeAdminPort,
  LoadBalancerPort,
  MachineState,
  NodeView,
  PodView,
  ProvisionerPort,
} from '../ports/run.js';
import { Bindings } from './bindings.js';
import { type ObserveDeps, observe } from './observe.js';

const kubeadm = (name: string, address: string | null = null): NodeRef => ({
  kind: 'kubeadm',
  name,
  address,
});
const talos = (replaces: string, name: string | null = null, address: string | null = null): NodeRef => ({
  kind: 'talos',
  replaces,
  name,
  address,
});

const nodeView = (name: string, unschedulable = false): NodeView => ({
  name,
  ready: true,
  unschedulable,
  labels: {},
  addresses: [],
  osImage: undefined,
});
const pod = (name: string, ignoredByDrain: boolean): PodView =>
  ({
    namespace: 'shop',
    name,
    uid: name,
    terminating: false,
    ignoredByDrain,
    node: 'w1',
    ready: true,
    finished: false,
  }) as PodView;

/** A fake cluster: every read is recorded; a name in `failing` makes that read reject. */
class FakeWorld {
  calls: string[] = [];
  nodes = new Map<string, NodeView>();
  pods = new Map<string, PodView[]>();
  objects = new Map<string, Record<string, unknown>>();
  apiserverAddresses: string[] | undefined = undefined;
  readyz = true;
  failing = new Set<string>();
  lbAnswers = new Map<string, boolean | undefined>();
  lbAsked: BackendRef[] = [];
  serving: Map<string, boolean | undefined> | undefined = undefined;
  servingAsked: [string, string | null][] = [];
  machineStates: Map<string, MachineState | undefined> | undefined = undefined;
  machineAsked: [string, string | null][] = [];
  withInRotation = true;

  #read<T>(what: string, value: () => T): Promise<T> {
    this.calls.push(what);
    if (this.failing.has(what)) return Promise.reject(new Error(`${what} forbidden`));
    return Promise.resolve(value());
  }

  deps(over: Partial<ObserveDeps> = {}): ObserveDeps {
    const kube = {
      getNode: (name: string) => this.#read(`getNode ${name}`, () => this.nodes.get(name)),
      podsOnNode: (name: string) => this.#read(`podsOnNode ${name}`, () => this.pods.get(name) ?? []),
      readyz: () => this.#read('readyz', () => this.readyz),
      apiserverAddresses: () => this.#read('apiserverAddresses', () => this.apiserverAddresses),
      getObject: (apiVersion: string, kind: string, namespace: string | undefined, name: string) =>
        this.#read(`getObject ${apiVersion} ${kind} ${namespace ?? ''}/${name}`, () =>
          this.objects.get(`${kind}/${namespace ?? ''}/${name}`),
        ),
    } as unknown as KubeAdminPort;
    const etcdView = { members: [] } as unknown as EtcdView;
    const etcd = { observe: () => this.#read('etcd', () => etcdView) } as unknown as EtcdAdminPort;
    const lb = {
      kind: 'fake-lb',
      ...(this.withInRotation && {
        inRotation: (b: BackendRef) => {
          this.lbAsked.push(b);
          return this.#read(`inRotation ${b.node}`, () => this.lbAnswers.get(b.node));
        },
      }),
    } as unknown as LoadBalancerPort;
    const states = this.machineStates;
    const provisioner = {
      kind: 'fake',
      ...(states && {
        machineState: (name: string, address: string | null) => {
          this.machineAsked.push([name, address]);
          return this.#read(`machineState ${name}`, () => states.get(name));
        },
      }),
    } as unknown as ProvisionerPort;
    const serving = this.serving;
    const apiservers: ApiserverStatusPort | undefined = serving && {
      serving: (name: string, address: string | null) => {
        this.servingAsked.push([name, address]);
        return this.#read(`serving ${name}`, () => serving.get(name));
      },
    };
    return {
      etcd,
      kube,
      provisioner,
      lb,
      ...(apiservers && { apiservers }),
      bindings: new Bindings(),
      baseDir: '/nonexistent',
      audit: { blockers: [] },
      confirmed: new Set(),
      ...over,
    };
  }
}

describe('observe: what is read is what the expectation names', () => {
  it('an empty expectation reads nothing', async () => {
    const f = new FakeWorld();
    const w = await observe({}, f.deps());
    expect(f.calls).toEqual([]);
    expect(w.etcd).toBeUndefined();
    expect(w.endpoint).toBeUndefined();
    for (const m of [w.nodes, w.loadBalancer, w.apiservers, w.machines, w.objects, w.files])
      expect(m.size).toBe(0);
  });

  it('etcd and the endpoint are read when named; a failure to read etcd is recorded, not thrown', async () => {
    const f = new FakeWorld();
    f.readyz = false;
    const w = await observe(
      { etcd: { voters: 3 } as ExpectedState['etcd'], endpoint: { readyz: true } },
      f.deps(),
    );
    expect(w.etcd).toEqual({ ok: true, value: { members: [] } });
    expect(w.endpoint).toBe(false);
    f.failing.add('etcd');
    const failed = await observe({ etcd: { voters: 3 } as ExpectedState['etcd'] }, f.deps());
    expect(failed.etcd).toEqual({ ok: false, error: 'etcd forbidden' });
  });

  it('passes on what the run was told and confirmed', async () => {
    const f = new FakeWorld();
    const confirmed = new Set(['q']);
    const audit = { blockers: [] };
    const w = await observe({}, f.deps({ confirmed, audit }));
    expect(w.confirmed).toBe(confirmed);
    expect(w.audit).toBe(audit);
  });
});

describe('observe: nodes', () => {
  it('a node is read once however many expectations name it; one not named yet is left out', async () => {
    const f = new FakeWorld();
    f.nodes.set('w1', nodeView('w1'));
    const w = await observe(
      {
        nodes: [
          { node: kubeadm('w1'), exists: true },
          { node: kubeadm('w1'), exists: true, cordoned: false },
          { node: talos('w1'), exists: true },
        ],
      },
      f.deps(),
    );
    expect(f.calls).toEqual(['getNode w1']);
    expect([...w.nodes.keys()]).toEqual(['w1']);
    expect(w.nodes.get('w1')).toEqual({ ok: true, value: { node: nodeView('w1') } });
  });

  it('a missing node is null; drained asks for the pods drain would still evict, DaemonSet and mirror pods left out', async () => {
    const f = new FakeWorld();
    f.nodes.set('w1', nodeView('w1', true));
    f.pods.set('w1', [pod('web-1', false), pod('fluentd-x', true), pod('api-2', false)]);
    const w = await observe(
      {
        nodes: [
          { node: kubeadm('w1'), exists: true, drained: true },
          { node: kubeadm('gone'), exists: false, drained: true },
        ],
      },
      f.deps(),
    );
    expect(w.nodes.get('w1')).toEqual({
      ok: true,
      value: { node: nodeView('w1', true), evictable: ['shop/web-1', 'shop/api-2'] },
    });
    expect(w.nodes.get('gone')).toEqual({ ok: true, value: { node: null } });
    expect(f.calls).not.toContain('podsOnNode gone');
  });

  it('pods are not listed unless drained is asked', async () => {
    const f = new FakeWorld();
    f.nodes.set('w1', nodeView('w1'));
    f.pods.set('w1', [pod('web-1', false)]);
    const w = await observe({ nodes: [{ node: kubeadm('w1'), exists: true, cordoned: true }] }, f.deps());
    expect(f.calls).toEqual(['getNode w1']);
    expect(w.nodes.get('w1')).toEqual({ ok: true, value: { node: nodeView('w1') } });
  });

  it('a node or its pods that could not be read is not observed (never absent)', async () => {
    const f = new FakeWorld();
    f.nodes.set('w2', nodeView('w2'));
    f.failing.add('getNode w1').add('podsOnNode w2');
    const w = await observe(
      {
        nodes: [
          { node: kubeadm('w1'), exists: false },
          { node: kubeadm('w2'), exists: true, drained: true },
        ],
      },
      f.deps(),
    );
    expect(w.nodes.get('w1')).toEqual({ ok: false, error: 'getNode w1 forbidden' });
    expect(w.nodes.get('w2')).toEqual({ ok: false, error: 'podsOnNode w2 forbidden' });
  });
});

describe('observe: the load balancer', () => {
  it('asks about each named backend at its bound address, else the expectation address', async () => {
    const f = new FakeWorld();
    f.lbAnswers.set('t1', true).set('w1', false);
    const bindings = Bindings.from([{ replaces: 'w0', name: 't1', address: '10.0.0.9' }]);
    const w = await observe(
      {
        loadBalancer: [
          { node: talos('w0'), address: '10.0.0.1', port: 6443, inRotation: true },
          { node: talos('w1', 'w1'), address: '10.0.0.2', port: 6443, inRotation: false },
          { node: talos('w5'), address: '10.0.0.5', port: 6443, inRotation: true },
        ],
      },
      f.deps({ bindings }),
    );
    expect(f.lbAsked).toEqual([
      { node: 't1', address: '10.0.0.9', port: 6443 },
      { node: 'w1', address: '10.0.0.2', port: 6443 },
    ]);
    expect([...w.loadBalancer.entries()]).toEqual([
      ['t1', { ok: true, value: true }],
      ['w1', { ok: true, value: false }],
    ]);
  });

  it('a load balancer that cannot be asked cannot tell; one that fails to answer is not observed, with where', async () => {
    const f = new FakeWorld();
    f.withInRotation = false;
    const exp: ExpectedState = {
      loadBalancer: [
        { node: kubeadm('cp1', '10.0.0.1'), address: '10.0.0.1', port: 6443, inRotation: true },
        { node: kubeadm('cp2'), address: null, port: 6443, inRotation: true },
      ],
    };
    const cannot = await observe(exp, f.deps());
    expect(cannot.loadBalancer.get('cp1')).toEqual({ ok: true, value: undefined });

    const g = new FakeWorld();
    g.failing.add('inRotation cp1').add('inRotation cp2');
    const failed = await observe(exp, g.deps());
    expect(failed.loadBalancer.get('cp1')).toEqual({
      ok: false,
      error: 'asking the load balancer about cp1 (10.0.0.1:6443): inRotation cp1 forbidden',
    });
    expect(failed.loadBalancer.get('cp2')).toEqual({
      ok: false,
      error: 'asking the load balancer about cp2 (?:6443): inRotation cp2 forbidden',
    });
  });
});

describe('observe: apiservers', () => {
  it("the run's apiserver port answers first, even when the EndpointSlices say otherwise", async () => {
    const f = new FakeWorld();
    f.serving = new Map([['cp1', false]]);
    f.apiserverAddresses = ['10.0.0.1'];
    const w = await observe({ apiservers: [{ node: kubeadm('cp1', '10.0.0.1'), serving: false }] }, f.deps());
    expect(w.apiservers.get('cp1')).toEqual({ ok: true, value: false });
    expect(f.servingAsked).toEqual([['cp1', '10.0.0.1']]);
    expect(f.calls).not.toContain('apiserverAddresses');
  });

  it('when the port cannot tell, the address is looked up in the EndpointSlices', async () => {
    const f = new FakeWorld();
    f.serving = new Map();
    f.apiserverAddresses = ['10.0.0.1'];
    const w = await observe(
      {
        apiservers: [
          { node: kubeadm('cp1', '10.0.0.1'), serving: true },
          { node: kubeadm('cp2', '10.0.0.2'), serving: false },
        ],
      },
      f.deps(),
    );
    expect(w.apiservers.get('cp1')).toEqual({ ok: true, value: true });
    expect(w.apiservers.get('cp2')).toEqual({ ok: true, value: false });
  });

  it('cannot tell without an address or without EndpointSlices; an unnamed node is left out', async () => {
    const f = new FakeWorld();
    const noAddress = await observe(
      {
        apiservers: [
          { node: kubeadm('cp1'), serving: true },
          { node: talos('cp9'), serving: true },
        ],
      },
      f.deps(),
    );
    expect(noAddress.apiservers.get('cp1')).toEqual({ ok: true, value: undefined });
    expect(noAddress.apiservers.size).toBe(1);
    expect(f.calls).toEqual([]);

    const noSlices = await observe(
      { apiservers: [{ node: kubeadm('cp1', '10.0.0.1'), serving: true }] },
      f.deps(),
    );
    expect(noSlices.apiservers.get('cp1')).toEqual({ ok: true, value: undefined });
    expect(f.calls).toEqual(['apiserverAddresses']);
  });

  it('a failed lookup is not observed, saying which', async () => {
    const f = new FakeWorld();
    f.serving = new Map();
    f.failing.add('serving cp1').add('apiserverAddresses');
    const exp: ExpectedState = { apiservers: [{ node: kubeadm('cp1', '10.0.0.1'), serving: true }] };
    expect((await observe(exp, f.deps())).apiservers.get('cp1')).toEqual({
      ok: false,
      error: 'asking whether the apiserver on cp1 serves: serving cp1 forbidden',
    });
    f.failing.delete('serving cp1');
    expect((await observe(exp, f.deps())).apiservers.get('cp1')).toEqual({
      ok: false,
      error: 'reading the default/kubernetes EndpointSlices: apiserverAddresses forbidden',
    });
  });
});

describe('observe: machines', () => {
  it('the provisioner answers, at the bound address', async () => {
    const f = new FakeWorld();
    f.machineStates = new Map([['t1', 'decommissioned']]);
    const bindings = Bindings.from([{ replaces: 'w0', name: 't1', address: '10.0.0.9' }]);
    const w = await observe(
      { machines: [{ node: talos('w0'), state: 'decommissioned' }] },
      f.deps({ bindings }),
    );
    expect(w.machines.get('t1')).toEqual({ ok: true, value: 'decommissioned' });
    expect(f.machineAsked).toEqual([['t1', '10.0.0.9']]);
    expect(f.calls).toEqual(['machineState t1']);
  });

  it('when the provisioner cannot tell, a Talos machine whose Node registered was provisioned', async () => {
    const f = new FakeWorld();
    f.machineStates = new Map();
    f.nodes.set('t1', nodeView('t1'));
    const w = await observe(
      {
        machines: [
          { node: talos('w0', 't1'), state: 'provisioned' },
          { node: talos('w2', 't2'), state: 'provisioned' },
        ],
      },
      f.deps(),
    );
    expect(w.machines.get('t1')).toEqual({ ok: true, value: 'provisioned' });
    expect(w.machines.get('t2')).toEqual({ ok: true, value: undefined });
  });

  it('a kubeadm machine is not judged by its Node; an unnamed machine is left out', async () => {
    const f = new FakeWorld();
    f.nodes.set('w1', nodeView('w1'));
    const w = await observe(
      {
        machines: [
          { node: kubeadm('w1'), state: 'decommissioned' },
          { node: talos('w9'), state: 'provisioned' },
        ],
      },
      f.deps(),
    );
    expect(w.machines.get('w1')).toEqual({ ok: true, value: undefined });
    expect(w.machines.size).toBe(1);
    expect(f.calls).toEqual([]);
  });

  it('a failed lookup is not observed, saying which', async () => {
    const f = new FakeWorld();
    f.machineStates = new Map();
    f.failing.add('machineState t1');
    const exp: ExpectedState = { machines: [{ node: talos('w0', 't1'), state: 'provisioned' }] };
    expect((await observe(exp, f.deps())).machines.get('t1')).toEqual({
      ok: false,
      error: 'asking the fake provisioner about t1: machineState t1 forbidden',
    });
    f.failing.delete('machineState t1');
    f.failing.add('getNode t1');
    expect((await observe(exp, f.deps())).machines.get('t1')).toEqual({
      ok: false,
      error: 'reading Node t1: getNode t1 forbidden',
    });
  });
});

describe('observe: objects', () => {
  it("each object is read with its kind's apiVersion; a missing one is null", async () => {
    const f = new FakeWorld();
    const ds = { metadata: { name: 'kube-proxy' } };
    f.objects.set('DaemonSet/kube-system/kube-proxy', ds);
    const w = await observe(
      {
        objects: [
          { kind: 'DaemonSet', namespace: 'kube-system', name: 'kube-proxy', present: true },
          { kind: 'ClusterRole', name: 'ferry', present: false },
          { kind: 'Secret', namespace: 'kube-system', name: 'token', present: false },
        ],
      },
      f.deps(),
    );
    expect(f.calls.sort()).toEqual([
      'getObject apps/v1 DaemonSet kube-system/kube-proxy',
      'getObject rbac.authorization.k8s.io/v1 ClusterRole /ferry',
      'getObject v1 Secret kube-system/token',
    ]);
    expect(w.objects.get('DaemonSet/kube-system/kube-proxy')).toEqual({ ok: true, value: ds });
    expect(w.objects.get('ClusterRole//ferry')).toEqual({ ok: true, value: null });
    expect(w.objects.get('Secret/kube-system/token')).toEqual({ ok: true, value: null });
  });

  it('an object of an unknown kind, or one that could not be read, is not observed', async () => {
    const f = new FakeWorld();
    f.failing.add('getObject v1 ConfigMap kube-system/kubeadm-config');
    const w = await observe(
      {
        objects: [
          { kind: 'Widget', namespace: 'x', name: 'y', present: false },
          { kind: 'ConfigMap', namespace: 'kube-system', name: 'kubeadm-config', present: true },
        ],
      },
      f.deps(),
    );
    expect(w.objects.get('Widget/x/y')).toEqual({
      ok: false,
      error: 'ferry does not know the apiVersion of kind Widget',
    });
    expect(w.objects.get('ConfigMap/kube-system/kubeadm-config')).toEqual({
      ok: false,
      error: 'getObject v1 ConfigMap kube-system/kubeadm-config forbidden',
    });
    expect(f.calls).toEqual(['getObject v1 ConfigMap kube-system/kubeadm-config']);
  });
});

describe('observe: files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-observe-'));
  writeFileSync(join(dir, 'backup.db'), '');
  writeFileSync(join(dir, 'sealed.db.age'), '');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('workstation files are looked up (relative ones in the plan directory); files on a node cannot be told', async () => {
    const ws = { kind: 'workstation' } as const;
    const w = await observe(
      {
        files: [
          { path: 'backup.db', where: ws, exists: true },
          { path: 'missing.db', where: ws, exists: false },
          { path: 'sealed.db', where: ws, exists: true },
          { path: join(dir, 'backup.db'), where: ws, exists: true },
          { path: '/etc/kubernetes/pki/ca.key', where: { kind: 'node', node: 'cp1' }, exists: false },
        ],
      },
      new FakeWorld().deps({ baseDir: dir }),
    );
    expect([...w.files.entries()]).toEqual([
      ['backup.db', true],
      ['missing.db', false],
      // Encrypted by the run (--snapshot-recipient): only its .age is kept.
      ['sealed.db', true],
      [join(dir, 'backup.db'), true],
      ['/etc/kubernetes/pki/ca.key', undefined],
    ]);
  });
});
