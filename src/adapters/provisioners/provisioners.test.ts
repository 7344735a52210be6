import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryError } from '../../errors.js';
import type { ActionContext, NodeView } from '../../ports/run.js';
import { runHook } from './command.js';
import { ExecLoadBalancer, ExecProvisioner } from './exec.js';
import { type LabControl, labNodeName, remoteLabControl, serveLabControl } from './lab-control.js';
import { ManualProvisioner, newTalosNode } from './manual.js';
import { machineStateByPorts } from './tcp.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-prov-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function ctx(over: Partial<ActionContext> = {}, log: string[] = []): ActionContext {
  return {
    stepId: '2.02.provision.cp-1',
    timeoutMs: 10_000,
    signal: new AbortController().signal,
    log: (l) => log.push(l),
    ...over,
  };
}

const req = {
  replaces: 'cp-1',
  name: 'talos-cp-1',
  address: null,
  role: 'controlplane' as const,
  talosVersion: 'v1.13.9',
  machineConfig: 'kit/talos/controlplane.yaml',
  endpoint: 'https://k8s-api.lab.example:6443',
  claimed: ['cp-1', 'cp-2', 'cp-3', 'worker-1'],
};

describe('exec provisioner', () => {
  it('runs the command with the step facts in its environment and reads what it created', async () => {
    const out = join(dir, 'env.txt');
    const log: string[] = [];
    const p = new ExecProvisioner({
      provisionCmd: `env | grep -E '^(NODE_NAME|ROLE|ADDRESS|REPLACES|TALOS_VERSION|MACHINE_CONFIG|CLUSTER_ENDPOINT|FERRY_ACTION|FERRY_STEP)=' | sort > ${out}; echo booting; echo FERRY_ADDRESS=10.20.0.41`,
    });
    const r = await p.provision(req, ctx({}, log));
    expect(r).toEqual({ name: 'talos-cp-1', address: '10.20.0.41' });
    expect((await readFile(out, 'utf8')).trim().split('\n')).toEqual([
      'ADDRESS=',
      'CLUSTER_ENDPOINT=https://k8s-api.lab.example:6443',
      'FERRY_ACTION=provision',
      'FERRY_STEP=2.02.provision.cp-1',
      'MACHINE_CONFIG=kit/talos/controlplane.yaml',
      'NODE_NAME=talos-cp-1',
      'REPLACES=cp-1',
      'ROLE=controlplane',
      'TALOS_VERSION=v1.13.9',
    ]);
    expect(log).toContain('  | booting');
  });

  it('a worker batch: its commands side by side, at most --provision-concurrency at once, each bound as it finishes', async () => {
    const running = join(dir, 'running');
    const p = new ExecProvisioner({
      // Counts the commands running at its start (one file per command), then holds for a while.
      provisionCmd: `mkdir -p ${running}; touch ${running}/$REPLACES; ls ${running} | wc -l > ${dir}/peak-$REPLACES; sleep 0.3; rm ${running}/$REPLACES; echo FERRY_NODE_NAME=talos-$REPLACES`,
      provisionConcurrency: 2,
    });
    const batch = ['w1', 'w2', 'w3', 'w4'].map((r) => ({
      ...req,
      replaces: r,
      name: null,
      role: 'worker' as const,
    }));
    const bound: string[] = [];
    await p.requestBatch(batch, ctx(), (r, res) => bound.push(`${r.replaces}=${res.name}`));
    expect(bound.sort()).toEqual(['w1=talos-w1', 'w2=talos-w2', 'w3=talos-w3', 'w4=talos-w4']);
    const peaks = await Promise.all(
      batch.map(async (r) => Number(await readFile(join(dir, `peak-${r.replaces}`), 'utf8'))),
    );
    expect(Math.max(...peaks)).toBe(2);
  });

  it('a worker batch whose command fails for one machine keeps the others bound, then fails', async () => {
    const p = new ExecProvisioner({
      provisionCmd:
        'if [ "$REPLACES" = w2 ]; then echo "Error: quota exceeded" >&2; exit 3; fi; echo FERRY_NODE_NAME=talos-$REPLACES',
      provisionConcurrency: 1,
    });
    const batch = ['w1', 'w2', 'w3'].map((r) => ({
      ...req,
      replaces: r,
      name: null,
      role: 'worker' as const,
    }));
    const bound: string[] = [];
    const err = await p.requestBatch(batch, ctx(), (r) => bound.push(r.replaces)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FerryError);
    expect((err as FerryError).message).toContain('quota exceeded');
    // One at a time: w1 started before the failure; nothing new starts after it.
    expect(bound).toEqual(['w1']);
  });

  it('never passes etcd variables on (etcd reads every ETCD_* as a flag)', async () => {
    process.env['ETCD_TEST_LEAK'] = 'x';
    try {
      const r = await runHook({ what: 'w', flag: '--f', command: 'env', env: {}, timeoutMs: 5_000 });
      expect(r.stdout).not.toContain('ETCD_TEST_LEAK');
    } finally {
      delete process.env['ETCD_TEST_LEAK'];
    }
  });

  it('a failing command is a gate error with its exit code and the tail of its output', async () => {
    const p = new ExecProvisioner({
      provisionCmd: 'echo "planning"; echo "Error: quota exceeded" >&2; exit 7',
    });
    const err = (await p.provision(req, ctx()).catch((e: unknown) => e)) as FerryError;
    expect(err).toBeInstanceOf(FerryError);
    expect(err.kind).toBe('gate');
    expect(err.message).toMatch(
      /provision command for talos-cp-1 failed: .* exited with code 7: Error: quota exceeded/,
    );
    expect(err.remediation).toContain('--provision-cmd');
  });

  it('a command past its deadline is stopped with everything it started', async () => {
    const pidFile = join(dir, 'grandchild.pid');
    const t0 = Date.now();
    const err = (await runHook({
      what: 'decommission command for cp-1',
      flag: '--decommission-cmd',
      command: `sleep 30 & echo $! > ${pidFile}; wait`,
      env: {},
      timeoutMs: 500,
      killGraceMs: 200,
    }).catch((e: unknown) => e)) as FerryError;
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(err.message).toContain('did not finish within 1 s and was stopped');
    const pid = Number(await readFile(pidFile, 'utf8'));
    for (let i = 0; i < 50 && existsSync(`/proc/${pid}`); i++) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(`/proc/${pid}`)).toBe(false);
  });

  it('a provisioner that chooses the name must say it', async () => {
    const p = new ExecProvisioner({ provisionCmd: 'true' });
    await expect(p.provision({ ...req, name: null }, ctx())).rejects.toMatchObject({
      message: expect.stringContaining('did not say which node it created'),
      remediation: expect.stringContaining('print FERRY_NODE_NAME=<hostname>'),
    });
    const q = new ExecProvisioner({ provisionCmd: 'echo FERRY_NODE_NAME=node-7' });
    expect((await q.provision({ ...req, name: null }, ctx())).name).toBe('node-7');
  });

  it('the load-balancer command gets LB_ACTION, NODE_NAME, ADDRESS and PORT', async () => {
    const out = join(dir, 'lb.txt');
    const lb = new ExecLoadBalancer(`echo "$LB_ACTION $NODE_NAME $ADDRESS $PORT" >> ${out}`);
    await lb.remove({ node: 'cp-1', address: '10.20.0.11', port: 6443 }, ctx());
    await lb.add({ node: 'talos-cp-1', address: '10.20.0.41', port: 6443 }, ctx());
    expect(await readFile(out, 'utf8')).toBe('remove cp-1 10.20.0.11 6443\nadd talos-cp-1 10.20.0.41 6443\n');
  });
});

describe('machine state by ports', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });

  it('running while the kubelet port answers, decommissioned once every port refuses', async () => {
    server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server!.listen(10250, '127.0.53.7', () => r()));
    expect(await machineStateByPorts('127.0.53.7')).toBe('running');
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    expect(await machineStateByPorts('127.0.53.7')).toBe('decommissioned');
  });

  it('provisioned when the Talos API port answers', async () => {
    server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server!.listen(50000, '127.0.53.8', () => r()));
    expect(await machineStateByPorts('127.0.53.8')).toBe('provisioned');
  });
});

describe('manual provisioner', () => {
  it('says what to boot and waits until the machine shows up', async () => {
    const said: string[] = [];
    let polls = 0;
    const p = new ManualProvisioner({
      say: (l) => said.push(l),
      detect: async () => (++polls >= 3 ? { name: 'talos-cp-1', address: '10.20.0.41' } : undefined),
      pollMs: 10,
    });
    expect(await p.provision(req, ctx())).toEqual({ name: 'talos-cp-1', address: '10.20.0.41' });
    expect(said.join('\n')).toMatch(/Boot a Talos v1.13.9 control plane to replace cp-1/);
    expect(said.join('\n')).toContain('kit/talos/controlplane.yaml');
    const never = new ManualProvisioner({ say: () => {}, detect: async () => undefined, pollMs: 10 });
    await expect(never.provision(req, ctx({ timeoutMs: 100 }))).rejects.toThrow(/did not show up within 0 s/);
  });

  it('a worker batch: every instruction at once, then detections side by side, each taking its own Node', async () => {
    const said: string[] = [];
    const workers = ['worker-1', 'worker-2', 'worker-3'].map((r) => ({
      ...req,
      replaces: r,
      name: null,
      role: 'worker' as const,
      claimed: ['worker-1', 'worker-2', 'worker-3'],
    }));
    const talos = ['talos-a', 'talos-b', 'talos-c'];
    let polls = 0;
    const p = new ManualProvisioner({
      say: (l) => said.push(l),
      // The Nodes register one by one; each detection is offered the first one not claimed.
      detect: async (r) => {
        const name = talos.slice(0, Math.min(3, ++polls)).find((n) => !r.claimed.includes(n));
        return name ? { name, address: null } : undefined;
      },
      pollMs: 10,
    });
    await p.requestBatch(workers);
    expect(said[0]).toBe('Boot these 3 machines side by side; ferry binds each Node as it registers.');
    expect(said.filter((l) => l.startsWith('Boot a Talos'))).toEqual(
      workers.map((w) => `Boot a Talos v1.13.9 worker to replace ${w.replaces}:`),
    );
    const found = await Promise.all(workers.map((w) => p.detect(w, ctx())));
    expect(found.map((f) => f.name).sort()).toEqual(talos);
  });
});

describe('a replacement the plan does not name (a Talos worker keeps the hostname Talos gives it)', () => {
  const node = (name: string, os: string, addresses: string[], cp = false): NodeView => ({
    name,
    ready: true,
    unschedulable: false,
    labels: cp ? { 'node-role.kubernetes.io/control-plane': '' } : {},
    addresses,
    osImage: os,
  });
  const worker = { ...req, replaces: 'worker-1', name: null, role: 'worker' as const };
  const nodes = [
    node('worker-1', 'Ubuntu 22.04.4 LTS', ['10.20.0.21']),
    node('talos-cp-1', 'Talos (v1.13.9)', ['10.20.0.41'], true),
    node('talos-9kq-x2m', 'Talos (v1.13.9)', ['10.20.0.52']),
    node('talos-4ab-77c', 'Talos (v1.13.9)', ['10.20.0.51']),
  ];

  it('takes the new Talos Node of its role that no other replacement holds, at the planned address if any', () => {
    expect(newTalosNode(worker, nodes)?.name).toBe('talos-4ab-77c');
    expect(newTalosNode({ ...worker, claimed: [...worker.claimed, 'talos-4ab-77c'] }, nodes)?.name).toBe(
      'talos-9kq-x2m',
    );
    expect(newTalosNode({ ...worker, address: '10.20.0.52' }, nodes)?.name).toBe('talos-9kq-x2m');
    // Not there yet: a kubeadm node, a control plane, an address that does not match.
    expect(newTalosNode(worker, nodes.slice(0, 2))).toBeUndefined();
    expect(newTalosNode({ ...worker, address: '10.20.0.99' }, nodes)).toBeUndefined();
  });

  it('in the lab, is named as Talos names it, the same on every ask (a resumed run finds the same machine)', () => {
    const a = labNodeName(worker);
    expect(a).toMatch(/^talos-[0-9a-z]{3}-[0-9a-z]{3}$/);
    expect(labNodeName(worker)).toBe(a);
    expect(labNodeName({ ...worker, replaces: 'worker-2' })).not.toBe(a);
    expect(labNodeName(req)).toBe('talos-cp-1');
  });
});

describe('lab control over a unix socket', () => {
  it('carries calls and answers, and errors with their kind and remediation', async () => {
    const seen: string[] = [];
    const local: LabControl = {
      provision: async (r) => ({ name: r.name ?? 'x', address: '127.0.53.4' }),
      decommission: async (n) => void seen.push(`decommission ${n}`),
      machineState: async (n) => (n === 'cp-1' ? 'running' : undefined),
      lb: async (op, n) => void seen.push(`lb ${op} ${n}`),
      inRotation: async () => true,
      apiserverServing: async () => false,
      stopApiserver: async () => {
        throw new FerryError('usage', 'no API server instance runs on cp-9', {
          remediation: 'check the name',
        });
      },
      standIn: async () => ({ lab: '3.4.23', snapshot: '3.5.16', note: 'n' }),
    };
    const socket = join(dir, 'lab.sock');
    const served = await serveLabControl(local, socket);
    try {
      const remote = remoteLabControl(socket);
      expect(await remote.provision(req)).toEqual({ name: 'talos-cp-1', address: '127.0.53.4' });
      expect(await remote.machineState('cp-1')).toBe('running');
      expect(await remote.machineState('cp-2')).toBeUndefined();
      await remote.lb('remove', 'cp-1');
      await remote.decommission('cp-1');
      expect(seen).toEqual(['lb remove cp-1', 'decommission cp-1']);
      const err = (await remote.stopApiserver('cp-9').catch((e: unknown) => e)) as FerryError;
      expect(err).toBeInstanceOf(FerryError);
      expect(err.kind).toBe('usage');
      expect(err.remediation).toBe('check the name');
    } finally {
      await served.close();
    }
    await expect(remoteLabControl(socket).standIn()).rejects.toThrow(/cannot reach the lab/);
  });
});
