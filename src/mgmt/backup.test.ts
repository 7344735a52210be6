/**
 * `runBackup` against in-memory fakes of its ports (testing-backup.ts): a management cluster and a
 * versioned bucket. Real age encryption to a generated identity, real sha256. Time is faked where
 * the block-move wait is under test: `Date.now` reads a clock that the (mocked) sleep advances.
 * The lab + moto round trip (roundtrip.real.test.ts) runs the same code against real servers.
 */
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FerryError } from '../errors.js';
import { decrypt } from './age.js';
import { archivedCopy, unpackArchive } from './archive.js';
import { type BackupOptions, type BackupReport, runBackup } from './backup.js';
import { sha256Hex } from './canonical.js';
import type { Archive, KindInfo, KubeObject } from './model.js';
import { parseS3Url } from './s3-config.js';
import { FakeMgmtKube, MemoryStore } from './testing-backup.js';

const time = vi.hoisted(() => ({ waits: [] as number[], clock: { t: 0 } }));
vi.mock('node:timers/promises', async (importOriginal) => ({
  ...(await importOriginal<typeof import('node:timers/promises')>()),
  setTimeout: async (ms: number) => {
    time.waits.push(ms);
    time.clock.t += ms;
  },
}));

/** Date.now reads `time.clock`, which only the backup's sleeps advance. */
function fakeClock(): void {
  time.clock.t = Date.UTC(2026, 11, 2, 0, 0, 0);
  vi.spyOn(Date, 'now').mockImplementation(() => time.clock.t);
}

afterEach(() => {
  vi.restoreAllMocks();
  time.waits.length = 0;
});

const PAUSED = 'cluster.x-k8s.io/paused';
const BLOCK_MOVE = 'clusterctl.cluster.x-k8s.io/block-move';
const MOVE_LABEL = 'clusterctl.cluster.x-k8s.io/move';
const CORE = 'cluster.x-k8s.io/v1beta2';
const CP = 'controlplane.cluster.x-k8s.io/v1alpha3';
const INFRA = 'infrastructure.cluster.x-k8s.io/v1alpha1';
const INVENTORY = 'clusterctl.cluster.x-k8s.io/v1alpha3';

function kindInfo(crd: string, kind: string, version: string): KindInfo {
  const [plural, ...group] = crd.split('.');
  return {
    crd,
    group: group.join('.'),
    kind,
    plural: plural!,
    scope: 'Namespaced',
    storageVersion: version,
    served: [version],
    statusSubresource: true,
  };
}

const KINDS: KindInfo[] = [
  kindInfo('clusterclasses.cluster.x-k8s.io', 'ClusterClass', 'v1beta2'),
  kindInfo('clusters.cluster.x-k8s.io', 'Cluster', 'v1beta2'),
  kindInfo('machines.cluster.x-k8s.io', 'Machine', 'v1beta2'),
  kindInfo('providers.clusterctl.cluster.x-k8s.io', 'Provider', 'v1alpha3'),
  kindInfo('proxmoxclusters.infrastructure.cluster.x-k8s.io', 'ProxmoxCluster', 'v1alpha1'),
  kindInfo('proxmoxmachinetemplates.infrastructure.cluster.x-k8s.io', 'ProxmoxMachineTemplate', 'v1alpha1'),
  kindInfo('taloscontrolplanes.controlplane.cluster.x-k8s.io', 'TalosControlPlane', 'v1alpha3'),
];

function mk(
  apiVersion: string,
  kind: string,
  namespace: string,
  name: string,
  body: Omit<Partial<KubeObject>, 'metadata'> = {},
  meta: Partial<KubeObject['metadata']> = {},
): KubeObject {
  return {
    apiVersion,
    kind,
    metadata: { name, namespace, uid: `uid-${kind}-${namespace}-${name}`, ...meta },
    ...body,
  };
}

const ownedBy = (o: KubeObject) => ({
  ownerReferences: [{ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid! }],
});

/**
 * A management cluster: Cluster alpha (its control plane, infrastructure, a Machine, soft-owned and
 * talos Secrets, a ConfigMap with the move label), Cluster beta on ClusterClass gold with
 * `spec.paused: false`, Cluster gamma without a spec, a template nothing leads to, an unrelated
 * Secret and clusterctl's provider inventory.
 */
function fleet(): KubeObject[] {
  const alpha = mk(
    CORE,
    'Cluster',
    'alpha',
    'alpha',
    {
      spec: {
        controlPlaneRef: {
          apiGroup: 'controlplane.cluster.x-k8s.io',
          kind: 'TalosControlPlane',
          name: 'alpha-cp',
        },
        infrastructureRef: {
          apiGroup: 'infrastructure.cluster.x-k8s.io',
          kind: 'ProxmoxCluster',
          name: 'alpha',
        },
      },
      status: { phase: 'Provisioned' },
    },
    { labels: { env: 'prod' } },
  );
  const tcp = mk(
    CP,
    'TalosControlPlane',
    'alpha',
    'alpha-cp',
    {
      spec: {
        replicas: 3,
        infrastructureTemplate: {
          apiGroup: 'infrastructure.cluster.x-k8s.io',
          kind: 'ProxmoxMachineTemplate',
          name: 'alpha-cp',
        },
      },
    },
    ownedBy(alpha),
  );
  return [
    alpha,
    mk(CORE, 'Cluster', 'beta', 'beta', {
      spec: { paused: false, topology: { classRef: { name: 'gold', namespace: 'alpha' } } },
    }),
    mk(CORE, 'Cluster', 'gamma', 'gamma'),
    mk(
      CORE,
      'ClusterClass',
      'alpha',
      'gold',
      { spec: { infrastructure: {} } },
      { annotations: { team: 'platform' } },
    ),
    tcp,
    mk(INFRA, 'ProxmoxMachineTemplate', 'alpha', 'alpha-cp', { spec: { template: {} } }, ownedBy(tcp)),
    mk(INFRA, 'ProxmoxCluster', 'alpha', 'alpha', { spec: { ipv4Config: {} } }, ownedBy(alpha)),
    mk(
      CORE,
      'Machine',
      'alpha',
      'alpha-cp-0',
      { spec: { clusterName: 'alpha' } },
      { ...ownedBy(tcp), resourceVersion: '42' },
    ),
    mk(INFRA, 'ProxmoxMachineTemplate', 'alpha', 'stray'),
    mk('v1', 'Secret', 'alpha', 'alpha-ca', { data: { 'tls.crt': 'Y2E=' } }),
    mk('v1', 'Secret', 'alpha', 'alpha-talos', { data: { bundle: 'YnVuZGxl' } }),
    mk('v1', 'Secret', 'alpha', 'alpha-unrelated', { data: { x: 'eA==' } }),
    mk('v1', 'ConfigMap', 'alpha', 'alpha-moved', { data: { k: 'v' } }, { labels: { [MOVE_LABEL]: '' } }),
    mk(INVENTORY, 'Provider', 'capi-system', 'cluster-api', {
      providerName: 'cluster-api',
      type: 'CoreProvider',
      version: 'v1.10.5',
    }),
    mk(INVENTORY, 'Provider', 'cabpt-system', 'bootstrap-talos', {
      providerName: 'talos',
      type: 'BootstrapProvider',
      version: 'v0.6.9',
    }),
  ];
}
/** What the fleet's backup must carry: everything a Cluster leads to, nothing else. */
const CARRIED = [
  'Cluster alpha/alpha',
  'Cluster beta/beta',
  'Cluster gamma/gamma',
  'ClusterClass alpha/gold',
  'TalosControlPlane alpha/alpha-cp',
  'ProxmoxMachineTemplate alpha/alpha-cp',
  'ProxmoxCluster alpha/alpha',
  'Machine alpha/alpha-cp-0',
  'Secret alpha/alpha-ca',
  'Secret alpha/alpha-talos',
  'ConfigMap alpha/alpha-moved',
];

const key = (o: { kind: string; metadata: { namespace?: string | undefined; name: string } }) =>
  `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`;
const named = (objects: KubeObject[], k: string) => objects.find((o) => key(o) === k)!;
const without = (objects: KubeObject[], ...keys: string[]) => objects.filter((o) => !keys.includes(key(o)));
function edit(objects: KubeObject[], k: string, f: (o: KubeObject) => void): KubeObject[] {
  f(named(objects, k));
  return objects;
}
const pausedSpec = (paused: boolean) => (o: KubeObject) => {
  o.spec = { ...o.spec, paused };
};
const annotate = (annotations: Record<string, string>) => (o: KubeObject) => {
  o.metadata.annotations = { ...o.metadata.annotations, ...annotations };
};

const NOW = new Date(Date.UTC(2026, 11, 2, 3, 4, 5));
const loc = parseS3Url('s3://mgmt-backups/prod', '--to');
let identity: string;
let recipient: string;
beforeAll(async () => {
  identity = await generateIdentity();
  recipient = await identityToRecipient(identity);
});

interface Rig {
  kube: FakeMgmtKube;
  store: MemoryStore;
  opts: BackupOptions;
}

function rig(objects = fleet(), over: Partial<BackupOptions> = {}, kinds = KINDS): Rig {
  const kube = new FakeMgmtKube(objects, kinds);
  const store = new MemoryStore();
  return {
    kube,
    store,
    opts: {
      kube: kube.asKube(),
      store,
      loc,
      recipients: [recipient],
      retention: {},
      now: () => NOW,
      ...over,
    },
  };
}

async function refusal(p: Promise<unknown>): Promise<FerryError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof FerryError) return err;
    throw err;
  }
  throw new Error('expected the backup to be refused');
}

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the backup to fail');
}

async function archiveOf(store: MemoryStore, versionId: string): Promise<Archive> {
  const held = store.held.find((h) => h.versionId === versionId)!;
  return unpackArchive(await decrypt(held.bytes, [identity], versionId, 'test.key'), versionId);
}

/** How each Cluster and ClusterClass is paused: spec.paused (or its absence) and the annotations. */
function pauseState(objects: KubeObject[]): Record<string, unknown> {
  return Object.fromEntries(
    objects
      .filter((o) => o.kind === 'Cluster' || o.kind === 'ClusterClass')
      .map((o) => [
        key(o),
        {
          paused: o.spec && 'paused' in o.spec ? o.spec.paused : 'absent',
          annotations: o.metadata.annotations ?? {},
        },
      ]),
  );
}

/** Each Cluster and ClusterClass is as the fleet had it: nothing left paused, nothing unpaused that was not paused by ferry. */
function expectAsFound(kube: FakeMgmtKube, objects: KubeObject[]): void {
  expect(pauseState(kube.objects)).toEqual(pauseState(objects));
}

/** An object as the archive must hold it: as listed before ferry paused it (an empty spec counts as none). */
function comparable(o: KubeObject): KubeObject {
  const c = structuredClone(archivedCopy(o));
  if (c.spec && Object.keys(c.spec).length === 0) delete c.spec;
  return c;
}

function countsOf(keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) {
    const kind = k.split(' ')[0]!;
    out[kind] = (out[kind] ?? 0) + 1;
  }
  return out;
}

const pauses = (kube: FakeMgmtKube) =>
  kube.patches.filter((p) => JSON.stringify(p.body).includes('true')).map((p) => p.object);

describe('runBackup: what it stores', () => {
  it('archives the graph as it was before the pause, encrypted to the recipients, and reports what it stored', async () => {
    const objects = fleet();
    const lines: string[] = [];
    const { kube, store, opts } = rig(objects, { log: (l) => lines.push(l) });
    const r = await runBackup(opts);

    expect(store.puts).toHaveLength(1);
    const put = store.puts[0]!;
    const [held] = store.held;
    expect(r.versionId).toBe(held!.versionId);
    expect(store.gets).toEqual([r.versionId]);
    const archive = await archiveOf(store, r.versionId);
    expect(archive.objects.map(key).sort()).toEqual([...CARRIED].sort());
    for (const o of archive.objects) expect(comparable(o)).toEqual(comparable(named(objects, key(o))));
    expect(archive.manifest.source.server).toBe(kube.req.address);
    expect(archive.manifest.createdAt).toBe(NOW.toISOString());
    expect(archive.manifest.kinds).toEqual(KINDS);
    const providers = [
      {
        namespace: 'capi-system',
        name: 'cluster-api',
        providerName: 'cluster-api',
        type: 'CoreProvider',
        version: 'v1.10.5',
      },
      {
        namespace: 'cabpt-system',
        name: 'bootstrap-talos',
        providerName: 'talos',
        type: 'BootstrapProvider',
        version: 'v0.6.9',
      },
    ];
    expect(archive.manifest.providers).toEqual(providers);
    expect(archive.manifest.leftBehind).toEqual(['ProxmoxMachineTemplate alpha/stray']);

    const sha = sha256Hex(put.bytes);
    expect(put.metadata).toEqual({
      'ferry-sha256': sha,
      'ferry-created': NOW.toISOString(),
      'ferry-objects': String(CARRIED.length),
      'ferry-clusters': '3',
    });
    const report: BackupReport = {
      url: loc.url,
      versionId: held!.versionId,
      createdAt: NOW.toISOString(),
      size: put.bytes.length,
      sha256: sha,
      verified: true,
      objects: CARRIED.length,
      counts: countsOf(CARRIED),
      clusters: ['alpha/alpha', 'beta/beta', 'gamma/gamma'],
      providers,
      leftBehind: ['ProxmoxMachineTemplate alpha/stray'],
      retention: { kept: [{ versionId: held!.versionId, why: ['no retention policy'] }], deleted: [] },
    };
    expect({ ...r, clusters: [...r.clusters].sort() }).toEqual(report);
    expect(lines.some((l) => l.includes(r.versionId))).toBe(true);
  });

  it('dates the backup by the wall clock when no clock is given, and needs no log', async () => {
    const { store, opts } = rig();
    delete opts.now;
    const before = Date.now();
    const r = await runBackup(opts);
    const at = Date.parse(r.createdAt);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
    expect(store.puts[0]!.metadata['ferry-created']).toBe(r.createdAt);
  });

  it('encrypts to every recipient: none of them can be left out', async () => {
    const other = await generateIdentity();
    const { store, opts } = rig(fleet(), { recipients: [recipient, await identityToRecipient(other)] });
    const r = await runBackup(opts);
    const bytes = store.held[0]!.bytes;
    await expect(decrypt(bytes, [other], r.versionId, 'other.key')).resolves.toBeInstanceOf(Uint8Array);
    await expect(decrypt(bytes, [identity], r.versionId, 'test.key')).resolves.toBeInstanceOf(Uint8Array);
  });

  it('keeps a carried Secret that carries the pause annotation as it is: only ClusterClasses lose ferry’s', async () => {
    const objects = edit(fleet(), 'Secret alpha/alpha-ca', annotate({ [PAUSED]: 'true' }));
    const { store, opts } = rig(objects);
    const r = await runBackup(opts);
    const archive = await archiveOf(store, r.versionId);
    expect(named(archive.objects, 'Secret alpha/alpha-ca').metadata.annotations).toEqual({
      [PAUSED]: 'true',
    });
    expect(named(archive.objects, 'ClusterClass alpha/gold').metadata.annotations).toEqual({
      team: 'platform',
    });
  });

  it('archives a ClusterClass created after the pause as it was read (ferry did not pause it)', async () => {
    const { kube, store, opts } = rig();
    const late = mk(CORE, 'ClusterClass', 'alpha', 'late', { spec: { infrastructure: {} } });
    kube.onPatch = (_object, _body, k) => {
      if (!k.find('ClusterClass', 'alpha', 'late')) k.objects.push(structuredClone(late));
    };
    const r = await runBackup(opts);
    const archive = await archiveOf(store, r.versionId);
    expect(named(archive.objects, 'ClusterClass alpha/late')).toEqual(archivedCopy(late));
  });

  it('records no providers when the cluster has no clusterctl inventory (no such CRD)', async () => {
    const kinds = KINDS.filter((k) => k.kind !== 'Provider');
    const { store, opts } = rig(fleet(), {}, kinds);
    const r = await runBackup(opts);
    expect(r.providers).toEqual([]);
    expect((await archiveOf(store, r.versionId)).manifest.providers).toEqual([]);
  });

  it('backs up a management cluster without ClusterClasses (no such CRD)', async () => {
    const kinds = KINDS.filter((k) => k.kind !== 'ClusterClass');
    const objects = edit(without(fleet(), 'ClusterClass alpha/gold'), 'Cluster beta/beta', (o) => {
      delete o.spec.topology;
    });
    const { kube, store, opts } = rig(objects, {}, kinds);
    const r = await runBackup(opts);
    expect(r.counts['Cluster']).toBe(3);
    expect(r.counts['ClusterClass']).toBeUndefined();
    expect(pauses(kube).sort()).toEqual(['Cluster alpha/alpha', 'Cluster beta/beta', 'Cluster gamma/gamma']);
    expect(store.puts).toHaveLength(1);
    expectAsFound(kube, objects);
  });
});

describe('runBackup: before touching the cluster', () => {
  it('refuses a bucket without versioning before reading anything', async () => {
    const { kube, store, opts } = rig();
    store.versioned = false;
    const err = await refusal(runBackup(opts));
    expect(err.exitCode).toBe(2);
    expect(kube.lists).toEqual([]);
    expect(kube.patches).toEqual([]);
    expect(store.puts).toEqual([]);
  });

  it('refuses a server that serves no Cluster API, and passes one that serves it among other kinds', async () => {
    const kinds = KINDS.filter((k) => k.kind !== 'Cluster');
    const { kube, store, opts } = rig(fleet(), {}, kinds);
    const err = await refusal(runBackup(opts));
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain(kube.req.server);
    expect(err.location?.object).toContain('clusters.cluster.x-k8s.io');
    expect(kube.lists).toEqual([]);
    expect(store.puts).toEqual([]);

    const ok = rig(fleet(), {}, KINDS);
    await expect(runBackup(ok.opts)).resolves.toMatchObject({ verified: true });
  });

  it.each([
    ['spec.paused', 'Cluster alpha/alpha', pausedSpec(true)],
    ['the pause annotation', 'Cluster alpha/alpha', annotate({ [PAUSED]: 'true' })],
    ['a paused ClusterClass', 'ClusterClass alpha/gold', annotate({ [PAUSED]: '' })],
  ])('refuses a Cluster paused by someone else (%s) and pauses nothing', async (_how, k, pause) => {
    const objects = edit(fleet(), k, pause);
    const { kube, store, opts } = rig(objects);
    const err = await refusal(runBackup(opts));
    expect(err.exitCode).toBe(3);
    expect(err.message).toContain(k);
    expect(err.remediation).toBeTruthy();
    expect(kube.patches).toEqual([]);
    expect(kube.reads).toBe(0);
    expect(store.puts).toEqual([]);
    expectAsFound(kube, objects);
  });

  it('passes a Cluster whose spec.paused is false, and leaves it false', async () => {
    const objects = edit(fleet(), 'Cluster alpha/alpha', pausedSpec(false));
    const { kube, store, opts } = rig(objects);
    await runBackup(opts);
    expect(store.puts).toHaveLength(1);
    expect(kube.find('Cluster', 'alpha', 'alpha')!.spec.paused).toBe(false);
    expectAsFound(kube, objects);
  });
});

describe('runBackup: the pause around the read', () => {
  it('reads the graph only while every Cluster and ClusterClass is paused, then unpauses each as it was', async () => {
    const objects = fleet();
    const { kube, opts } = rig(objects);
    await runBackup(opts);
    // The first lists (Clusters and ClusterClasses, to check them) come before any pause.
    expect(
      kube.lists
        .slice(0, 2)
        .map((l) => `${l.kind} ${l.allPaused}`)
        .sort(),
    ).toEqual(['Cluster false', 'ClusterClass false']);
    const graphReads = kube.lists.slice(2);
    expect(graphReads.map((l) => l.kind).sort()).toEqual(
      [...KINDS.map((k) => k.kind), 'Secret', 'ConfigMap'].sort(),
    );
    expect(graphReads.every((l) => l.allPaused)).toBe(true);
    // Each paused once and restored once.
    const patched = kube.patches.map((p) => p.object).sort();
    const each = [
      'Cluster alpha/alpha',
      'Cluster beta/beta',
      'Cluster gamma/gamma',
      'ClusterClass alpha/gold',
    ];
    expect(patched).toEqual(each.flatMap((o) => [o, o]).sort());
    expectAsFound(kube, objects);
  });

  it('unpauses every Cluster when reading fails while they are paused, and stores nothing', async () => {
    const objects = fleet();
    const { kube, store, opts } = rig(objects);
    const broken = new Error('injected: the API server went away');
    kube.onList = (kind) => {
      if (kind === 'Machine') throw broken;
    };
    expect(await failure(runBackup(opts))).toBe(broken);
    expect(pauses(kube)).toHaveLength(4);
    expect(store.puts).toEqual([]);
    expectAsFound(kube, objects);
  });

  it('undoes a pause that failed halfway: the Clusters already paused are unpaused', async () => {
    const objects = fleet();
    const { kube, store, opts } = rig(objects);
    const broken = new Error('injected: patch refused');
    kube.onPatch = (object, body) => {
      if (object === 'Cluster beta/beta' && JSON.stringify(body).includes('true')) throw broken;
    };
    expect(await failure(runBackup(opts))).toBe(broken);
    expect(kube.reads).toBe(0);
    expect(store.puts).toEqual([]);
    expectAsFound(kube, objects);
    expect(kube.patches.filter((p) => p.object === 'Cluster beta/beta').map((p) => p.body)).toEqual([
      { spec: { paused: false } },
    ]);
  });

  it('fails (exit 4) when a Cluster or ClusterClass cannot be unpaused, naming each with the command that unpauses it', async () => {
    const { kube, store, opts } = rig();
    const broken = new Error('injected: unpause refused');
    kube.onPatch = (object, body) => {
      const undo = !JSON.stringify(body).includes('true');
      if (undo && (object === 'Cluster beta/beta' || object === 'ClusterClass alpha/gold')) throw broken;
    };
    const err = await refusal(runBackup(opts));
    expect(err.exitCode).toBe(4);
    expect(err.cause).toBe(broken);
    expect(err.message).toContain('Cluster beta/beta');
    expect(err.message).toContain('ClusterClass alpha/gold');
    expect(err.message).not.toContain('Cluster alpha/alpha');
    expect(err.remediation).toContain(
      `kubectl patch cluster beta -n beta --type merge -p '{"spec":{"paused":false}}'`,
    );
    expect(err.remediation).toContain(`kubectl annotate clusterclass gold -n alpha ${PAUSED}-`);
    expect(store.puts).toEqual([]);
    // The others were unpaused all the same.
    expect(kube.find('Cluster', 'alpha', 'alpha')!.spec.paused).toBeUndefined();
    expect(kube.find('Cluster', 'gamma', 'gamma')!.spec.paused).toBeUndefined();
  });

  it('gives the command that removes spec.paused for a Cluster that had none', async () => {
    const { kube, opts } = rig();
    kube.onPatch = (object, body) => {
      if (object === 'Cluster alpha/alpha' && !JSON.stringify(body).includes('true')) throw new Error('no');
    };
    const err = await refusal(runBackup(opts));
    expect(err.remediation).toContain(
      `kubectl patch cluster alpha -n alpha --type merge -p '{"spec":{"paused":null}}'`,
    );
  });

  it('reports the unpause failure over the read failure that led to it', async () => {
    const { kube, opts } = rig();
    const unpause = new Error('injected: unpause refused');
    kube.onList = (kind) => {
      if (kind === 'Machine') throw new Error('injected: read failed');
    };
    kube.onPatch = (object, body) => {
      if (object === 'Cluster alpha/alpha' && !JSON.stringify(body).includes('true')) throw unpause;
    };
    const err = await refusal(runBackup(opts));
    expect(err.exitCode).toBe(4);
    expect(err.cause).toBe(unpause);
  });

  it.each([
    ['the TalosControlPlane of a cluster mid-migration', 'TalosControlPlane alpha/alpha-cp'],
    ['an object no Cluster leads to', 'ProxmoxMachineTemplate alpha/stray'],
  ])('refuses %s paused by annotation when it reads, and unpauses', async (_what, k) => {
    const objects = edit(fleet(), k, annotate({ [PAUSED]: 'true' }));
    const { kube, store, opts } = rig(objects);
    const err = await refusal(runBackup(opts));
    expect(err.exitCode).toBe(3);
    expect(err.message).toContain(k);
    expect(err.remediation).toBeTruthy();
    expect(kube.reads).toBe(1);
    expect(store.puts).toEqual([]);
    expectAsFound(kube, objects);
    expect(named(kube.objects, k).metadata.annotations).toEqual({ [PAUSED]: 'true' });
  });
});

describe('runBackup: clusterctl block-move', () => {
  const blockMachine = (objects: KubeObject[]) =>
    edit(objects, 'Machine alpha/alpha-cp-0', annotate({ [BLOCK_MOVE]: 'true' }));
  /** The provider removes the annotation just before the `n`th read. */
  const unblockAt = (kube: FakeMgmtKube, n: number) => {
    let reads = 0;
    kube.onList = (kind, k) => {
      if (kind === 'Machine' && ++reads === n)
        delete k.find('Machine', 'alpha', 'alpha-cp-0')!.metadata.annotations;
    };
  };

  it('waits, still paused, for a provider to remove block-move, polling at growing intervals, then archives', async () => {
    fakeClock();
    const objects = blockMachine(fleet());
    const { kube, store, opts } = rig(objects);
    unblockAt(kube, 4);
    const r = await runBackup(opts);
    expect(kube.reads).toBe(4);
    expect(time.waits).toEqual([500, 750, 1125]);
    expect(kube.lists.slice(2).every((l) => l.allPaused)).toBe(true);
    const archive = await archiveOf(store, r.versionId);
    expect(named(archive.objects, 'Machine alpha/alpha-cp-0').metadata.annotations).toBeUndefined();
    expectAsFound(kube, objects);
  });

  it('gives up once the default 60 s have passed, naming what blocks, unpauses and stores nothing', async () => {
    fakeClock();
    const objects = blockMachine(fleet());
    const { kube, store, opts } = rig(objects);
    kube.onList = (kind) => {
      if (kind === 'Machine' && kube.reads > 100) throw new Error('still polling after 100 reads');
    };
    const err = await refusal(runBackup(opts));
    expect(err.exitCode).toBe(3);
    expect(err.message).toContain('Machine alpha/alpha-cp-0');
    expect(err.remediation).toBeTruthy();
    // 0.5 s, then half as long again each time, at most 5 s; it stops at the first read past 60 s.
    expect(time.waits[0]).toBe(500);
    time.waits.slice(1).forEach((w, i) => {
      expect(w).toBe(Math.min(time.waits[i]! * 1.5, 5000));
    });
    expect(time.waits.at(-1)).toBe(5000);
    const total = time.waits.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(60_000);
    expect(total - time.waits.at(-1)!).toBeLessThanOrEqual(60_000);
    expect(kube.reads).toBe(time.waits.length + 1);
    expect(store.puts).toEqual([]);
    expectAsFound(kube, objects);
  });

  it('holds to --block-move-timeout at its boundary: a read exactly at the deadline still waits once more', async () => {
    // Reads at 0, 500, 1250 and 2375 ms; the annotation is gone at the fourth.
    fakeClock();
    const within = rig(blockMachine(fleet()), { blockMoveTimeoutMs: 1250 });
    unblockAt(within.kube, 4);
    await expect(runBackup(within.opts)).resolves.toMatchObject({ verified: true });
    expect(within.kube.reads).toBe(4);

    time.waits.length = 0;
    const past = rig(blockMachine(fleet()), { blockMoveTimeoutMs: 1249 });
    unblockAt(past.kube, 4);
    const err = await refusal(runBackup(past.opts));
    expect(err.exitCode).toBe(3);
    expect(past.kube.reads).toBe(3);
    expect(past.store.puts).toEqual([]);
  });

  it('does not wait for block-move on an object the backup does not carry', async () => {
    fakeClock();
    const { kube, store, opts } = rig(
      edit(fleet(), 'ProxmoxMachineTemplate alpha/stray', annotate({ [BLOCK_MOVE]: 'true' })),
      { blockMoveTimeoutMs: 0 },
    );
    await runBackup(opts);
    expect(kube.reads).toBe(1);
    expect(time.waits).toEqual([]);
    expect(store.puts).toHaveLength(1);
  });
});

describe('runBackup: references', () => {
  it('refuses an archive whose Cluster names a control plane it would not hold, after unpausing, storing nothing', async () => {
    const objects = without(fleet(), 'TalosControlPlane alpha/alpha-cp');
    const { kube, store, opts } = rig(objects);
    const err = await refusal(runBackup(opts));
    expect(err.exitCode).toBe(3);
    expect(err.message).toContain('Cluster alpha/alpha spec.controlPlaneRef');
    expect(store.puts).toEqual([]);
    expectAsFound(kube, objects);
  });

  it('passes the same Cluster once the control plane it names is there, reached by its reference alone', async () => {
    const objects = edit(fleet(), 'TalosControlPlane alpha/alpha-cp', (o) => {
      delete o.metadata.ownerReferences;
    });
    const { store, opts } = rig(objects);
    const r = await runBackup(opts);
    expect((await archiveOf(store, r.versionId)).objects.map(key)).toContain(
      'TalosControlPlane alpha/alpha-cp',
    );
  });
});

describe('runBackup: the read-back', () => {
  it.each([
    [
      'bytes that differ from those uploaded',
      (d: { bytes: Uint8Array }) => {
        d.bytes[0] = d.bytes[0]! ^ 1;
      },
    ],
    [
      'a sha256 in the metadata that is not the upload’s',
      (d: { metadata: Record<string, string> }) => {
        d.metadata['ferry-sha256'] = sha256Hex('something else');
      },
    ],
  ])('fails (exit 4) when the store answers %s, and applies no retention', async (_what, damage) => {
    const { store, opts } = rig(fleet(), { retention: { keep: 1 } });
    const old = store.seed(new Date(Date.UTC(2026, 10, 1)));
    store.tamper = (d) => {
      damage(d);
      return d;
    };
    const err = await refusal(runBackup(opts));
    expect(err.exitCode).toBe(4);
    expect(err.message).toContain(store.held.at(-1)!.versionId);
    expect(err.remediation).toBeTruthy();
    expect(store.deletes).toEqual([]);
    expect(store.ids()).toContain(old);
  });

  it('passes a faithful read-back and keeps what the bucket already held without a policy', async () => {
    const { store, opts } = rig();
    const old = [store.seed(new Date(Date.UTC(2026, 10, 1))), store.seed(new Date(Date.UTC(2026, 10, 2)))];
    const r = await runBackup(opts);
    expect(r.verified).toBe(true);
    expect(store.deletes).toEqual([]);
    expect(r.retention.kept.map((k) => k.versionId).sort()).toEqual([...old, r.versionId].sort());
  });

  it('stores nothing it has not verified when the upload fails', async () => {
    const { kube, store, opts } = rig(fleet(), { retention: { keep: 1 } });
    store.seed(new Date(Date.UTC(2026, 10, 1)));
    const broken = new Error('injected: upload refused');
    store.failPut = broken;
    expect(await failure(runBackup(opts))).toBe(broken);
    expect(store.gets).toEqual([]);
    expect(store.deletes).toEqual([]);
    expectAsFound(kube, fleet());
  });
});

describe('runBackup: retention', () => {
  it('deletes the versions the policy does not keep and reports what it kept and why', async () => {
    const { store, opts } = rig(fleet(), { retention: { keep: 2 } });
    const [a, b, c] = [1, 2, 3].map((d) => store.seed(new Date(Date.UTC(2026, 10, d))));
    const r = await runBackup(opts);
    expect(store.deletes.sort()).toEqual([a, b].sort());
    expect(r.retention.deleted.sort()).toEqual([a, b].sort());
    expect(store.ids().sort()).toEqual([c, r.versionId].sort());
    expect(r.retention.kept.map((k) => k.versionId)).toEqual([r.versionId, c]);
    for (const k of r.retention.kept) expect(k.why.length).toBeGreaterThan(0);
  });

  it('never deletes the version it just wrote, whatever the clocks say', async () => {
    const { store, opts } = rig(fleet(), { retention: { keep: 1 } });
    // Versions dated after the new one (a skewed clock): the policy's newest is not ours.
    const [a, b] = [1, 2].map((h) => store.seed(new Date(NOW.getTime() + h * 3_600_000)));
    store.clock = () => NOW;
    const r = await runBackup(opts);
    expect(store.ids()).toContain(r.versionId);
    expect(store.deletes).not.toContain(r.versionId);
    expect(r.retention.deleted).toEqual([a]);
    expect(store.ids().sort()).toEqual([b, r.versionId].sort());
  });
});

describe('runBackup: interrupted', () => {
  it('stops before pausing when interrupted before it starts', async () => {
    const ac = new AbortController();
    ac.abort();
    const { kube, store, opts } = rig(fleet(), { signal: ac.signal });
    const err = await refusal(runBackup(opts));
    expect(err.exitCode).toBe(3);
    expect(err.remediation).toBeTruthy();
    expect(kube.patches).toEqual([]);
    expect(store.puts).toEqual([]);
  });

  it('stops before pausing when interrupted during the clusterctl export', async () => {
    const ac = new AbortController();
    const { kube, store, opts } = rig(fleet(), {
      signal: ac.signal,
      moveExport: async () => {
        ac.abort();
        return [];
      },
    });
    expect((await refusal(runBackup(opts))).exitCode).toBe(3);
    expect(kube.patches).toEqual([]);
    expect(store.puts).toEqual([]);
  });

  it('stops before reading when interrupted while pausing, and unpauses', async () => {
    const ac = new AbortController();
    const objects = fleet();
    const { kube, store, opts } = rig(objects, { signal: ac.signal });
    kube.onPatch = () => ac.abort();
    expect((await refusal(runBackup(opts))).exitCode).toBe(3);
    expect(kube.reads).toBe(0);
    expect(store.puts).toEqual([]);
    expectAsFound(kube, objects);
  });

  it('stops before uploading when interrupted while reading, and unpauses', async () => {
    const ac = new AbortController();
    const objects = fleet();
    const { kube, store, opts } = rig(objects, { signal: ac.signal });
    kube.onList = (kind) => {
      if (kind === 'Secret') ac.abort();
    };
    expect((await refusal(runBackup(opts))).exitCode).toBe(3);
    expect(kube.reads).toBe(1);
    expect(store.puts).toEqual([]);
    expectAsFound(kube, objects);
  });

  it('runs to the end with a signal that is not aborted', async () => {
    const { store, opts } = rig(fleet(), { signal: new AbortController().signal });
    await runBackup(opts);
    expect(store.puts).toHaveLength(1);
  });
});

describe('runBackup --via clusterctl', () => {
  it('exports with clusterctl before pausing, then archives its objects as they were before any pause, with what it drops', async () => {
    const objects = fleet();
    const { kube, store, opts } = rig(objects);
    let asked: string[] = [];
    let patchesBefore = -1;
    const alpha = named(objects, 'Cluster alpha/alpha');
    const gold = named(objects, 'ClusterClass alpha/gold');
    const onlyMove = mk('v1', 'Secret', 'alpha', 'alpha-move-only', { data: { y: 'eQ==' } });
    opts.moveExport = async (clusters) => {
      asked = clusters.map(key);
      patchesBefore = kube.patches.length;
      // As move writes them: paused, without status.
      const { status: _s, ...movedAlpha } = structuredClone(alpha);
      movedAlpha.spec = { ...movedAlpha.spec, paused: true };
      const movedGold = structuredClone(gold);
      movedGold.metadata.annotations = { ...movedGold.metadata.annotations, [PAUSED]: 'true' };
      return [movedAlpha as KubeObject, movedGold, onlyMove];
    };
    const r = await runBackup(opts);
    expect(asked.sort()).toEqual(['Cluster alpha/alpha', 'Cluster beta/beta', 'Cluster gamma/gamma']);
    expect(patchesBefore).toBe(0);
    const archive = await archiveOf(store, r.versionId);
    expect(archive.objects.map(key).sort()).toEqual([...CARRIED, 'Secret alpha/alpha-move-only'].sort());
    expect(comparable(named(archive.objects, 'Cluster alpha/alpha'))).toEqual(comparable(alpha));
    expect(comparable(named(archive.objects, 'ClusterClass alpha/gold'))).toEqual(comparable(gold));
    const entry = archive.manifest.objects.find((e) => e.name === 'alpha-move-only')!;
    expect(entry.reason).toBe('clusterctl-move');
    expectAsFound(kube, objects);
  });
});
