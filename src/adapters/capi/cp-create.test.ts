/**
 * addControlPlaneMachine against an in-memory management cluster (the MgmtApi calls it makes):
 * what it refuses before the first write, the replica bump, and what a failed create takes back.
 * The lab-backed cp-create.real.test.ts runs the same code against a served CRD set.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { labKitObjects } from '../../capi/testing-kit.js';
import { FerryError } from '../../errors.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { addControlPlaneMachine } from './cp-create.js';
import { MemoryMgmt } from './testing-mgmt-memory.js';

const crds = CrdValidator.fromSchemas();
const RETRY = 'ferry run --resume';

const kit = labKitObjects('lab');
const kitTcp = () => structuredClone(kit.find((o) => o.kind === 'TalosControlPlane')!);
const templates = () => kit.filter((o) => o.kind.endsWith('MachineTemplate')).map((o) => structuredClone(o));

let api: MemoryMgmt;
let lines: string[];
beforeEach(() => {
  const tcp = kitTcp();
  tcp.spec = { ...tcp.spec, replicas: 0 };
  // The server's uid: the Machine's controller reference needs it.
  tcp.metadata.uid = 'tcp-uid-1';
  api = new MemoryMgmt(tcp, templates());
  lines = [];
});
const add = (target = 1) =>
  addControlPlaneMachine(api.asApi(), crds, { target, log: (l) => lines.push(l), retry: RETRY });
const failure = async (target = 1) => {
  const err = await add(target).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(FerryError);
  return err as FerryError;
};

describe('addControlPlaneMachine: refused before the first write', () => {
  it('stops when the TalosControlPlane does not exist, telling to adopt first', async () => {
    api.tcp = undefined;
    const err = await failure();
    expect(err.kind).toBe('gate');
    expect(err.message).toBe('TalosControlPlane lab/lab-control-plane does not exist');
    expect(err.remediation).toBe(`adopt first (ferry capi adopt KIT), then ${RETRY}`);
    expect(api.writes()).toEqual([]);
  });

  it('stops when the TalosControlPlane names no infrastructure template', async () => {
    delete api.tcp!.spec!['infrastructureTemplate'];
    const err = await failure();
    expect(err.kind).toBe('gate');
    expect(err.message).toMatch(/^TalosControlPlane lab\/lab-control-plane: .*infrastructureTemplate/);
    expect(err.remediation).toBe(`adopt again from the kit (ferry capi adopt KIT), then ${RETRY}`);
    expect(api.writes()).toEqual([]);
  });

  it('stops when the infrastructure template it names does not exist', async () => {
    const ref = api.tcp!.spec!['infrastructureTemplate'] as { kind: string; name: string };
    api.objects = [];
    const err = await failure();
    expect(err.kind).toBe('gate');
    expect(err.message).toBe(
      `${ref.kind} lab/${ref.name}, the TalosControlPlane's infrastructure template, does not exist`,
    );
    expect(err.remediation).toBe(`adopt again (ferry capi adopt KIT), then ${RETRY}`);
    expect(api.writes()).toEqual([]);
  });

  it('stops when the objects cannot be built from the TalosControlPlane (no version)', async () => {
    delete api.tcp!.spec!['version'];
    const err = await failure();
    expect(err.kind).toBe('gate');
    expect(err.message).toMatch(/^TalosControlPlane lab\/lab-control-plane: .*version/);
    expect(api.writes()).toEqual([]);
  });

  it('calls an object its CRD rejects a ferry bug, and creates nothing', async () => {
    const t = api.objects.find((o) => o.kind.endsWith('MachineTemplate'))!;
    (t.spec as { template: { spec: Record<string, unknown> } }).template.spec['numCores'] = 'four';
    const err = await failure();
    expect(err.kind).toBe('internal');
    expect(err.message).toMatch(/do not match their CRDs: ProxmoxMachine \S+ \S*numCores/);
    expect(err.remediation).toMatch(/nothing was created/);
    expect(api.writes()).toEqual([]);
  });

  it('names a kind ferry has no CRD for', async () => {
    const t = api.objects.find((o) => o.kind.endsWith('MachineTemplate'))!;
    const ref = api.tcp!.spec!['infrastructureTemplate'] as { apiVersion: string };
    t.apiVersion = ref.apiVersion = 'infrastructure.cluster.x-k8s.io/v9';
    const err = await failure();
    expect(err.kind).toBe('internal');
    expect(err.message).toMatch(/no CRD for infrastructure\.cluster\.x-k8s\.io\/v9 ProxmoxMachine/);
    expect(api.writes()).toEqual([]);
  });

  it('refuses (exit 2) when the server serves one of the kinds, naming it, and asks for every apiVersion', async () => {
    api.unserved.add('TalosConfig');
    const err = await failure();
    expect(err.kind).toBe('input');
    expect(err.message).toMatch(
      /serves no TalosConfig \(bootstrap\.cluster\.x-k8s\.io\/v1alpha3\): .*nothing was changed/,
    );
    expect(err.message).not.toMatch(/Machine \(/);
    expect(err.remediation).toMatch(/^install the provider that owns it /);
    expect(api.calls.filter((c) => c.startsWith('served'))).toHaveLength(3);
    expect(api.writes()).toEqual([]);
  });

  it('names every unserved kind, and says "them"', async () => {
    api.unserved.add('TalosConfig');
    api.unserved.add('ProxmoxMachine');
    const err = await failure();
    expect(err.message).toMatch(/serves no ProxmoxMachine \(\S+\), TalosConfig \(\S+\):/);
    expect(err.remediation).toMatch(/owns them/);
  });

  it('refuses a target that is not one above the replicas (never down, one at a time)', async () => {
    api.tcp!.spec!['replicas'] = 2;
    const down = await failure(1);
    expect(down.kind).toBe('gate');
    expect(down.message).toMatch(/lowering TalosControlPlane replicas 2 → 1/);
    const jump = await failure(4);
    expect(jump.message).toMatch(/replicas 2 → 4: ferry adds control planes one at a time/);
    expect(api.writes()).toEqual([]);
  });
});

describe('addControlPlaneMachine: creating', () => {
  it('raises replicas while paused, then creates infrastructure machine, TalosConfig and Machine under one name', async () => {
    const name = await add(1);
    expect(name).toMatch(/^lab-control-plane-[a-z0-9]{5}$/);
    expect(api.writes()).toEqual([
      'replicas 1',
      'create ProxmoxMachine',
      'create TalosConfig',
      'create Machine',
    ]);
    expect(api.tcp!.spec!['replicas']).toBe(1);
    const made = api.objects.filter((o) => o.metadata.name === name).map((o) => o.kind);
    expect(made).toEqual(['ProxmoxMachine', 'TalosConfig', 'Machine']);
    expect(lines).toEqual([
      `TalosControlPlane lab-control-plane kept paused: replicas 0 → 1; ferry creates Machine ${name} as it would`,
      `Machine ${name} created with the TalosControlPlane paused`,
    ]);
  });

  it('reads missing replicas as 0', async () => {
    delete api.tcp!.spec!['replicas'];
    await add(1);
    expect(api.writes()[0]).toBe('replicas 1');
  });

  it('does not touch replicas already at the target (a resumed step)', async () => {
    api.tcp!.spec!['replicas'] = 3;
    const name = await add(3);
    expect(api.writes()).toEqual(['create ProxmoxMachine', 'create TalosConfig', 'create Machine']);
    expect(lines[0]).toBe(
      `TalosControlPlane lab-control-plane kept paused: replicas 3 → 3; ferry creates Machine ${name} as it would`,
    );
  });
});

describe('addControlPlaneMachine: a create that fails', () => {
  it('deletes what it made, newest first, sets replicas back, and says both', async () => {
    api.failCreate = (o) => o.kind === 'Machine';
    const err = await failure();
    expect(err.kind).toBe('gate');
    expect(api.writes()).toEqual([
      'replicas 1',
      'create ProxmoxMachine',
      'create TalosConfig',
      'create Machine',
      'delete TalosConfig',
      'delete ProxmoxMachine',
      'replicas 0',
    ]);
    expect(err.message).toMatch(
      /^creating the control-plane Machine (lab-control-plane-\S+) failed at Machine\/\1: admission webhook denied Machine; deleted again: ProxmoxMachine\/\1, TalosConfig\/\1; replicas set back to 0$/,
    );
    expect(err.remediation).toBe(
      `fix the cause (the management cluster answered the error above), then ${RETRY}`,
    );
    expect((err as Error & { cause?: Error }).cause?.message).toBe('admission webhook denied Machine');
    expect(api.objects.filter((o) => o.kind === 'ProxmoxMachine' || o.kind === 'TalosConfig')).toEqual([]);
  });

  it('says nothing was deleted when the first create fails, and leaves replicas alone when they were not raised', async () => {
    api.tcp!.spec!['replicas'] = 1;
    api.failCreate = () => true;
    const err = await failure(1);
    expect(api.writes()).toEqual(['create ProxmoxMachine']);
    expect(err.message).toMatch(/failed at ProxmoxMachine\/\S+: admission webhook denied ProxmoxMachine$/);
  });

  it('names what it could not delete, with the kubectl command, and goes on deleting the rest', async () => {
    api.failCreate = (o) => o.kind === 'Machine';
    api.failDelete = (o) => o.kind === 'TalosConfig';
    const err = await failure();
    expect(api.writes().slice(4)).toEqual(['delete TalosConfig', 'delete ProxmoxMachine', 'replicas 0']);
    expect(err.message).toMatch(
      /left behind, delete by hand: TalosConfig\/lab-control-plane-\S+; replicas set back to 0$/,
    );
    expect(err.message).not.toMatch(/deleted again/);
    expect(err.remediation).toMatch(
      /^undo by hand \(kubectl .*-n lab .*TalosConfig\/lab-control-plane-\S+\), fix the cause, then /,
    );
    expect(err.remediation).not.toMatch(/scale|replicas/);
  });

  it('says replicas were left raised when setting them back fails, with the command that does it', async () => {
    api.failCreate = (o) => o.kind === 'TalosConfig';
    api.failReplicas = (n) => n === 0;
    const err = await failure();
    expect(err.message).toMatch(
      /deleted again: ProxmoxMachine\/\S+; replicas left at 1 \(setting them back to 0 failed\)$/,
    );
    expect(err.message).not.toMatch(/set back to 0;|set back to 0$/);
    expect(err.remediation).toMatch(
      /^undo by hand \(kubectl .*-n lab .*lab-control-plane.*0.*\), fix the cause/,
    );
    expect(err.remediation).not.toMatch(/delete/);
  });
});
