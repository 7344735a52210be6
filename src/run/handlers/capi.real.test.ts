/**
 * capi-adopt and capi-handover through the production ManagementPort against a lab API server
 * serving the Cluster API CRDs (127.0.166.1; this engineer's range 127.0.165–169). The etcd
 * member list is a test's (what the handlers observe); the TalosControlPlane's status is written
 * by the test as its controller would. Adoption leaves the TalosControlPlane paused and says when
 * there was nothing to do; the hand-over refuses while a kubeadm member remains or the replicas
 * differ, waits for ready, and stops naming a member removed in its settle window, pausing again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManagementCluster } from '../../adapters/capi/management.js';
import { startTestMgmt, TestEtcd, type TestMgmt } from '../../adapters/capi/testing-mgmt.js';
import type { FerryError } from '../../errors.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { buildPlan } from '../../plan/build.js';
import { allSteps, type Plan, type StepOf } from '../../plan/model.js';
import { inputsFor } from '../../plan/testing-example.js';
import { exampleSnapshot } from '../../snapshot/testing-example.js';
import type { RunDeps } from '../deps.js';
import type { StepContext } from './context.js';
import { HANDLERS } from './index.js';

let m: TestMgmt;
let mgmt: ManagementCluster;
let plan: Plan;
const TCP =
  '/apis/controlplane.cluster.x-k8s.io/v1alpha3/namespaces/lab/taloscontrolplanes/lab-control-plane';
const MERGE = 'application/merge-patch+json';

beforeAll(async () => {
  m = await startTestMgmt('127.0.166.1');
  mgmt = new ManagementCluster({ req: m.req, api: m.api, kit: m.kit, crds: CrdValidator.fromSchemas() });
  plan = buildPlan(inputsFor(await exampleSnapshot(), { target: { provisioner: 'capi' } }));
});
afterAll(async () => {
  await m?.stop();
});

function stepOf<K extends 'capi-adopt' | 'capi-handover'>(kind: K): StepOf<K> {
  const s = allSteps(plan).find((x): x is StepOf<K> => x.kind === kind);
  if (!s) throw new Error(`no ${kind} step`);
  return s;
}

function context(etcd: TestEtcd, kubeadm: string[] = [], withMgmt = true) {
  const lines: string[] = [];
  const ids = new Set(etcd.members.filter((x) => kubeadm.includes(x.name)).map((x) => x.id));
  const ctx = {
    deps: { plan, etcd, ...(withMgmt && { mgmt }) } as unknown as RunDeps,
    options: { pollMs: 20, capiSettleSeconds: 0.5 },
    kubeadmIds: ids,
    action: {
      stepId: 's',
      timeoutMs: 10_000,
      signal: new AbortController().signal,
      log: (l: string) => lines.push(l),
    },
    log: (l: string) => lines.push(l),
  } as unknown as StepContext;
  return { ctx, lines };
}

async function act<K extends 'capi-adopt' | 'capi-handover'>(kind: K, ctx: StepContext) {
  const h = HANDLERS[kind];
  if (h.mode !== 'act') throw new Error('no action');
  return (h.act as (s: StepOf<K>, c: StepContext) => Promise<Record<string, unknown> | undefined>)(
    stepOf(kind),
    ctx,
  );
}

const stop = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as FerryError,
  );

describe('capi-adopt', () => {
  it('without a management cluster: a usage stop saying how to give one', async () => {
    const err = await stop(act('capi-adopt', context(new TestEtcd([]), [], false).ctx));
    expect(err?.kind).toBe('usage');
    expect(err?.remediation).toContain('--mgmt-kubeconfig');
  });

  it('adopts with the TalosControlPlane paused; a second run has nothing to do and says so', async () => {
    const first = context(new TestEtcd(['cp-1', 'cp-2', 'cp-3']));
    const r = await act('capi-adopt', first.ctx);
    expect(r?.['nothingToDo']).toBe(false);
    expect(first.lines.join('\n')).toMatch(/applied, verified: TalosControlPlane .*status\.bootstrapped/);
    expect(await mgmt.controlPlane()).toMatchObject({ paused: true, clusterPaused: false, replicas: 0 });

    const again = context(new TestEtcd(['cp-1', 'cp-2', 'cp-3']));
    expect((await act('capi-adopt', again.ctx))?.['nothingToDo']).toBe(true);
    expect(again.lines).toEqual(['already adopted: the management cluster shows every step, nothing to do']);
  });
});

describe('capi-handover', () => {
  const want = () => stepOf('capi-handover').params.replicas;
  const setTcp = async (replicas: number, status: Record<string, unknown>) => {
    await m.req.request('PATCH', TCP, { body: { spec: { replicas } }, contentType: MERGE });
    await m.req.request('PATCH', `${TCP}/status`, { body: { status }, contentType: MERGE });
  };

  it('refuses while a kubeadm member remains: the TalosControlPlane stays paused', async () => {
    const etcd = new TestEtcd(['cp-3', 'talos-a', 'talos-b']);
    const err = await stop(act('capi-handover', context(etcd, ['cp-3']).ctx));
    expect(err?.kind).toBe('gate');
    expect(err?.message).toMatch(/kubeadm etcd member\(s\) cp-3 \(1000\) remain/);
    expect((await mgmt.controlPlane())?.paused).toBe(true);
  });

  it('refuses when the TalosControlPlane asks for another size: unpaused, it would scale', async () => {
    await setTcp(want() - 1, { replicas: want() - 1 });
    const err = await stop(act('capi-handover', context(new TestEtcd(['talos-a'])).ctx));
    expect(err?.kind).toBe('gate');
    expect(err?.message).toMatch(new RegExp(`asks for ${want() - 1} replicas .* not the ${want()}`));
    expect((await mgmt.controlPlane())?.paused).toBe(true);
  });

  it('unpauses, waits for ready with every replica ready, and checks no member went', async () => {
    await setTcp(want(), { replicas: want(), readyReplicas: 0, ready: false });
    const etcd = new TestEtcd(['talos-a', 'talos-b', 'talos-c']);
    const { ctx, lines } = context(etcd);
    // The controller reports ready a little after it is unpaused.
    const later = setTimeout(() => {
      void setTcp(want(), { replicas: want(), readyReplicas: want(), ready: true });
    }, 300);
    try {
      const r = await act('capi-handover', ctx);
      const applied = r?.['unpaused'] as string[];
      // The controller's not-ready is its own: ferry does not write the status over it (its wait
      // would see its own write). The Cluster is asked again only because the status changed.
      expect(applied.filter((a) => /status\./.test(a))).toEqual([]);
      expect(applied.at(-1)).toBe('TalosControlPlane lab/lab-control-plane unpaused');
    } finally {
      clearTimeout(later);
    }
    expect(await mgmt.controlPlane()).toMatchObject({ paused: false, ready: true, readyReplicas: want() });
    expect(lines.join('\n')).toMatch(/every member of before is still there/);
  });

  it('a member removed in the settle window stops the run naming it, and the TalosControlPlane is paused again', async () => {
    await m.req.request('PATCH', TCP, {
      body: { metadata: { annotations: { 'cluster.x-k8s.io/paused': 'true' } } },
      contentType: MERGE,
    });
    const etcd = new TestEtcd(['talos-a', 'talos-b', 'talos-c']);
    const audit = setInterval(async () => {
      if ((await mgmt.controlPlane())?.paused === false)
        etcd.members = etcd.members.filter((x) => x.name !== 'talos-b');
    }, 50);
    try {
      const err = await stop(act('capi-handover', context(etcd).ctx));
      expect(err?.kind).toBe('gate');
      expect(err?.message).toMatch(/lost member\(s\) talos-b \(1001\)/);
      expect(err?.message).toContain('ferry paused it again');
    } finally {
      clearInterval(audit);
    }
    expect((await mgmt.controlPlane())?.paused).toBe(true);
  });

  it('a member list it cannot read after the settle window is a stop: ferry cannot tell', async () => {
    const etcd = new TestEtcd(['talos-a', 'talos-b', 'talos-c']);
    const { ctx } = context(etcd);
    setTimeout(() => {
      etcd.failObserve = true;
    }, 400);
    const err = await stop(act('capi-handover', ctx));
    expect(err?.kind).toBe('gate');
    expect(err?.message).toMatch(/could not read the etcd member list after the settle window/);
    expect((await mgmt.controlPlane())?.paused).toBe(true);
  });
});
