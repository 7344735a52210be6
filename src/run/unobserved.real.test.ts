import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeAdmin } from '../adapters/kube/admin.js';
import { loadKubeconfig } from '../adapters/kube/kubeconfig.js';
import { createRequester } from '../adapters/kube/request.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../lab/apiserver/testing.js';
import type { ExpectedState, KubeadmNodeRef } from '../plan/expected-state.js';
import type { Plan, Step } from '../plan/model.js';
import type { EtcdAdminPort, LoadBalancerPort, ProvisionerPort } from '../ports/run.js';
import type { Check } from './gates.js';
import { Journal } from './journal.js';
import { Orchestrator, type RunOptions } from './orchestrator.js';
import { applyAcceptance, parseAcceptUnobserved } from './unobserved.js';

// A gate that cannot observe something has not seen it hold: the production kube adapter against
// a lab API server whose RBAC refuses the default/kubernetes EndpointSlices (403).

const n1: KubeadmNodeRef = { kind: 'kubeadm', name: 'n1', address: '10.0.0.1' };

let lab: LabApiFixture;
let dir: string;
let kube: KubeAdmin;

beforeAll(async () => {
  lab = await startLabApi();
  dir = await mkdtemp(join(tmpdir(), 'ferry-unobserved-'));
  const kc = join(dir, 'admin.kubeconfig');
  await writeAdminKubeconfig(lab, kc);
  kube = KubeAdmin.fromKubeconfig({ kubeconfig: kc });
  const r = createRequester(loadKubeconfig(kc));
  await r.request('POST', '/api/v1/nodes', {
    body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } },
  });
  await writeFile(join(dir, 'plan.json'), '{}');
});
afterAll(async () => {
  await lab?.stop();
  await rm(dir, { recursive: true, force: true });
});

function step(id: string, kind: 'gate' | 'cordon', expect: ExpectedState): Step {
  const [phase, index] = id.split('.');
  return {
    id,
    kind,
    phase: Number(phase),
    index: Number(index),
    subject: 'n1',
    title: kind,
    target: { node: n1 },
    params: kind === 'gate' ? { reason: 'test', stableSeconds: 0 } : { node: n1 },
    expect,
    action: { summary: kind, performer: 'ferry', commands: [] },
    verify: {
      expect: kind === 'cordon' ? { nodes: [{ node: n1, exists: true, cordoned: true }] } : {},
      commands: [],
    },
    timeoutSeconds: 1,
    destructive: false,
    undo: { possible: false, reason: 'test' },
    idempotencyCheck: { description: 'x', doneWhen: {}, ifNotDone: 'redo' },
  } as Step;
}

function plan(): Plan {
  return {
    phases: [
      {
        id: 2,
        name: 'control-planes',
        title: '',
        summary: '',
        steps: [
          step('2.01.gate.n1', 'gate', { apiservers: [{ node: n1, serving: true }] }),
          step('2.02.cordon.n1', 'cordon', { nodes: [{ node: n1, exists: true }] }),
        ],
      },
    ],
    controlPlanes: [],
    workers: [],
    audit: { blockers: [], risks: 0, suppressed: 0, allowBlockers: false },
    cluster: { name: 'test', endpoint: null },
  } as unknown as Plan;
}

const noEtcd: EtcdAdminPort = {
  observe: async () => ({ members: [], statuses: [], leaderId: undefined, healthy: [] }),
  moveLeader: async () => {},
  removeMember: async () => 'already-absent',
  endpoints: () => [],
  useEndpoints: () => {},
  close: () => {},
};
const provisioner: ProvisionerPort = {
  kind: 'test',
  provision: async () => {
    throw new Error('no');
  },
  decommission: async () => {},
};

async function run(journalName: string, options: RunOptions = {}, lb?: LoadBalancerPort) {
  const journal = Journal.open(join(dir, journalName));
  const p = plan();
  journal.beginRun({
    planFile: 'plan.json',
    planDigest: 'd',
    steps: p.phases[0]!.steps.map((s, i) => ({
      id: s.id,
      position: i,
      kind: s.kind,
      subject: s.subject,
      destructive: s.destructive,
      title: s.title,
    })),
  });
  const o = new Orchestrator(
    {
      plan: p,
      planFile: join(dir, 'plan.json'),
      journal,
      etcd: noEtcd,
      kube,
      provisioner,
      lb,
      operator: { instruct: () => {}, ask: async () => true },
      log: () => {},
    },
    { pollMs: 20, gateGraceSeconds: 0.2, timeouts: { gate: 0.3 }, ...options },
  );
  return { r: await o.run(), journal };
}

describe('a gate that cannot observe', () => {
  it('stops on a 403 for the kubernetes EndpointSlices, with the status, path and address, and acts no further', async () => {
    lab.server.setForbidden([{ group: 'discovery.k8s.io', resource: 'endpointslices' }]);
    try {
      const { r, journal } = await run('forbidden.sqlite');
      expect(r.status).toBe('stopped');
      expect(r.stoppedAt).toBe('2.01.gate.n1');
      expect(r.error?.exitCode).toBe(3);
      expect(r.error?.message).toContain('(unobserved) apiservers n1');
      expect(r.error?.message).toContain('HTTP 403');
      expect(r.error?.message).toContain('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices');
      expect(r.error?.message).toContain(lab.server.address);
      expect(r.error?.remediation).toContain("--accept-unobserved 'apiservers:n1'");
      expect((await kube.getNode('n1'))?.unschedulable).toBe(false);
      journal.close();
    } finally {
      lab.server.setForbidden([]);
    }
  });

  it('passes only with --accept-unobserved, and journals that it did', async () => {
    lab.server.setForbidden([{ group: 'discovery.k8s.io', resource: 'endpointslices' }]);
    try {
      const { r, journal } = await run('accepted.sqlite', {
        acceptUnobserved: [parseAcceptUnobserved('apiservers:n1')],
      });
      expect(r.status).toBe('completed');
      const notes = journal.observations({ purpose: 'note' }).map((o) => o.data as Record<string, unknown>);
      expect(notes).toContainEqual(
        expect.objectContaining({ acceptedUnobserved: 'apiservers:n1', check: 'apiservers:n1' }),
      );
      expect(String(notes.find((n) => n['acceptedUnobserved'])?.['seen'])).toContain('HTTP 403');
      expect((await kube.getNode('n1'))?.unschedulable).toBe(true);
      journal.close();
    } finally {
      lab.server.setForbidden([]);
      await kube.setUnschedulable('n1', false);
    }
  });

  it('a load balancer whose check fails is unobserved too, never "cannot tell"', async () => {
    const lb: LoadBalancerPort = {
      kind: 'cmd',
      add: async () => {},
      remove: async () => {},
      inRotation: async () => {
        throw new Error('lb-cmd check exited 1: connection refused (127.0.0.1:8404)');
      },
    };
    const p = plan();
    p.phases[0]!.steps[0]!.expect = {
      loadBalancer: [{ node: n1, address: '10.0.0.1', port: 6443, inRotation: true }],
    };
    const journal = Journal.open(join(dir, 'lb.sqlite'));
    journal.beginRun({ planFile: 'plan.json', planDigest: 'd', steps: [] });
    const r = await new Orchestrator(
      {
        plan: p,
        planFile: join(dir, 'plan.json'),
        journal,
        etcd: noEtcd,
        kube,
        provisioner,
        lb,
        operator: { instruct: () => {}, ask: async () => true },
        log: () => {},
      },
      { pollMs: 20, timeouts: { gate: 0.3 } },
    ).run();
    journal.close();
    expect(r.status).toBe('stopped');
    expect(r.error?.message).toContain('(unobserved) loadBalancer n1 (10.0.0.1:6443)');
    expect(r.error?.message).toContain('connection refused (127.0.0.1:8404)');
  });
});

describe('--accept-unobserved', () => {
  const unobserved: Check = {
    section: 'apiservers',
    subject: 'cp-2',
    expected: 'apiserver serving',
    seen: 'cannot read it: HTTP 403',
    status: 'mismatch',
    unobserved: true,
  };
  const seenBad: Check = { ...unobserved, seen: 'apiserver out of service' };
  delete seenBad.unobserved;

  it('lets pass only unobserved mismatches it names; what was seen to fail still fails', () => {
    const r = applyAcceptance([unobserved, seenBad], [parseAcceptUnobserved('apiservers')]);
    expect(r.checks.map((c) => c.status)).toEqual(['ok', 'mismatch']);
    expect(r.checks[0]?.unobserved).toBe(true); // never proof for a resumed destructive step
    expect(applyAcceptance([unobserved], [parseAcceptUnobserved('apiservers:cp-1')]).checks[0]?.status).toBe(
      'mismatch',
    );
    expect(applyAcceptance([unobserved], [parseAcceptUnobserved('etcd')]).checks[0]?.status).toBe('mismatch');
  });

  it('refuses a section no gate observes', () => {
    expect(() => parseAcceptUnobserved('files')).toThrow(/not a section a gate observes/);
    expect(() => parseAcceptUnobserved('apiservers:')).toThrow(/empty/);
  });
});
