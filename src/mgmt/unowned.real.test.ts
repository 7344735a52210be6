/**
 * Backup and restore with no Cluster API controller writing owner references: lab API servers that
 * serve the repository's CAPI CRDs (schemas/capi) and run no reconciler, as a management cluster is
 * right after `ferry capi adopt` or with its controllers down. The graph then reaches objects
 * through the cluster-name label and the spec references (graph.ts), a paused TalosControlPlane
 * refuses the backup wherever it sits, an archive missing what a reference names is refused, and a
 * server refusal mid-restore exits 2. Loopback: source 127.0.144.1, targets 127.0.145.1–3; moto on
 * 127.0.0.1:ephemeral.
 */
import { CreateBucketCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adopt } from '../adapters/capi/adopt-apply.js';
import { labKitObjects } from '../capi/testing-kit.js';
import { describeError, FerryError } from '../errors.js';
import { CrdValidator } from '../generate/schema/crd.js';
import { type LabApiFixture, startLabApi } from '../lab/apiserver/testing.js';
import { type BackupOptions, runBackup } from './backup.js';
import { MgmtKube } from './kube.js';
import type { Archive, KubeObject } from './model.js';
import { type FetchedBackup, fetchBackup, runRestore, verifyRestore } from './restore.js';
import { parseS3Url, type S3Settings } from './s3-config.js';
import { openBackupStore } from './s3-store.js';
import { installCapiCrds, labKube, seedCluster, seedProviders } from './testing-fleet.js';
import { type Moto, startMoto } from './testing-moto.js';

let moto: Moto;
let source: LabApiFixture;
let target: LabApiFixture;
let src: MgmtKube;
let dst: MgmtKube;
let settings: S3Settings;
let identity: string;
let recipient: string;
const loc = parseS3Url('s3://unowned/prod', '--to');
const PAUSED = 'cluster.x-k8s.io/paused';
const TCP_API = 'controlplane.cluster.x-k8s.io/v1alpha3';

beforeAll(async () => {
  [moto, source, target] = await Promise.all([
    startMoto(),
    startLabApi({ host: '127.0.144.1' }),
    startLabApi({ host: '127.0.145.1' }),
  ]);
  src = labKube(source.kc, source.server.url);
  dst = labKube(target.kc, target.server.url);
  await Promise.all([installCapiCrds(src), installCapiCrds(dst)]);
  await Promise.all([seedProviders(src), seedProviders(dst)]);
  settings = {
    endpoint: moto.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIAFERRYTEST', secretAccessKey: 'ferry-s3-secret-key' },
  };
  const s3 = new S3Client({ ...settings, forcePathStyle: true });
  try {
    await s3.send(new CreateBucketCommand({ Bucket: 'unowned' }));
    await s3.send(
      new PutBucketVersioningCommand({ Bucket: 'unowned', VersioningConfiguration: { Status: 'Enabled' } }),
    );
  } finally {
    s3.destroy();
  }
  identity = await generateIdentity();
  recipient = await identityToRecipient(identity);
});
afterAll(async () => {
  await Promise.all([moto?.stop(), source?.stop(), target?.stop()]);
});

const backupOpts = (): BackupOptions => ({
  kube: src,
  store: openBackupStore(loc, settings),
  loc,
  recipients: [recipient],
  retention: {},
});
const fetched = (versionId: string) =>
  fetchBackup({
    store: openBackupStore(loc, settings),
    loc,
    versionId,
    identities: [identity],
    identityFile: 'id',
  });
const versions = () => openBackupStore(loc, settings).versions();

const key = (o: { kind: string; metadata: { namespace?: string; name: string } }) =>
  `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`;

/** Every Cluster API object (the inventory aside) and Secret in `namespace`. */
async function inNamespace(kube: MgmtKube, namespace: string): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const k of await kube.discoverKinds())
    if (k.kind !== 'Provider') out.push(...(await kube.listKind(k)));
  out.push(...(await kube.list('v1', 'Secret')));
  return out.filter((o) => o.metadata.namespace === namespace);
}

async function caught(p: Promise<unknown>): Promise<FerryError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof FerryError) return err;
    throw err;
  }
  throw new Error('expected a FerryError');
}

const tcpRef = (namespace: string, name: string) => ({
  apiVersion: TCP_API,
  kind: 'TalosControlPlane',
  namespace,
  name,
});
let adoptedBackup: FetchedBackup;

describe('right after `ferry capi adopt`', () => {
  it('refuses the backup while the TalosControlPlane stays paused (kubeadm members remain), storing nothing', async () => {
    await adopt(src.req, labKitObjects('adopted'), {
      kubeadmMembersRemain: true,
      crds: CrdValidator.fromSchemas(),
    });
    const tcp = await src.get(tcpRef('adopted', 'lab-control-plane'));
    expect(tcp?.metadata.ownerReferences).toBeUndefined();
    expect(tcp?.metadata.annotations?.[PAUSED]).toBeDefined();
    const err = await caught(runBackup(backupOpts()));
    expect(err.exitCode).toBe(3);
    expect(err.message).toContain(
      `TalosControlPlane adopted/lab-control-plane carries ${PAUSED}: cluster adopted/lab is mid-migration`,
    );
    expect(await versions()).toEqual([]);
    // Adoption leaves the Cluster at spec.paused false; the backup put that back after reading.
    for (const c of await src.list('cluster.x-k8s.io/v1beta2', 'Cluster')) expect(c.spec.paused).toBe(false);
  });

  it('once unpaused, carries every object adoption wrote, though none has an owner reference but the Secrets', async () => {
    await src.mergePatch(tcpRef('adopted', 'lab-control-plane'), {
      metadata: { annotations: { [PAUSED]: null } },
    });
    const live = await inNamespace(src, 'adopted');
    for (const o of live.filter((x) => x.kind !== 'Secret' && x.kind !== 'Cluster'))
      expect(o.metadata.ownerReferences, key(o)).toBeUndefined();
    const r = await runBackup(backupOpts());
    expect(r.leftBehind).toEqual([]);
    adoptedBackup = await fetched(r.versionId);
    const reasons = Object.fromEntries(
      adoptedBackup.archive.manifest.objects.map((e) => [`${e.kind} ${e.namespace}/${e.name}`, e.reason]),
    );
    expect(Object.keys(reasons).sort()).toEqual(live.map(key).sort());
    expect(reasons['Cluster adopted/lab']).toBe('root');
    expect(reasons['TalosControlPlane adopted/lab-control-plane']).toBe('reference');
    expect(reasons['MachineDeployment adopted/lab-workers']).toBe('cluster-label');
    expect(reasons['ProxmoxMachineTemplate adopted/lab-control-plane']).toBe('reference');
    expect(reasons['Secret adopted/lab-talos']).toBe('talos-secret');
    for (const k of [
      'TalosControlPlane',
      'ProxmoxCluster',
      'ProxmoxMachineTemplate',
      'TalosConfigTemplate',
      'MachineDeployment',
    ])
      expect(r.counts[k], k).toBeGreaterThan(0);
  });

  it('round-trips: restored whole, the TalosControlPlane bootstrapped, every reference resolving', async () => {
    const r = await runRestore({ kube: dst, backup: adoptedBackup, loc });
    // No controller ran: the Cluster was never Ready. Nothing else is amiss.
    expect(r.verify.problems).toEqual(['Cluster adopted/lab is not Ready']);
    const before = new Map((await inNamespace(src, 'adopted')).map((o) => [key(o), o]));
    const after = await inNamespace(dst, 'adopted');
    expect(after.map(key).sort()).toEqual([...before.keys()].sort());
    for (const o of after)
      for (const f of ['spec', 'status', 'data'] as const)
        expect(o[f], `${key(o)} ${f}`).toEqual(before.get(key(o))![f]);
    expect((await dst.get(tcpRef('adopted', 'lab-control-plane')))?.status.bootstrapped).toBe(true);
  });

  it('reports after a restore a reference the target does not resolve', async () => {
    const ref = tcpRef('adopted', 'lab-control-plane');
    const tcp = (await dst.get(ref))!;
    await dst.delete(ref);
    try {
      const v = await verifyRestore(dst, adoptedBackup.archive);
      expect(v.ok).toBe(false);
      expect(v.problems).toContain('TalosControlPlane adopted/lab-control-plane is missing');
      expect(v.problems).toContain(
        'Cluster adopted/lab spec.controlPlaneRef names TalosControlPlane adopted/lab-control-plane (controlplane.cluster.x-k8s.io), which the target does not hold',
      );
    } finally {
      const { uid: _u, resourceVersion: _r, creationTimestamp: _c, ...metadata } = tcp.metadata;
      const c = await dst.create({ ...tcp, metadata });
      await dst.putStatus({ ...c, status: tcp.status });
    }
  });
});

describe('a steady cluster with an owner reference missing', () => {
  const ref = tcpRef('steady', 'steady-cp');

  it('refuses the backup when the ownerless TalosControlPlane is paused', async () => {
    await seedCluster(src, 'steady');
    await src.mergePatch(ref, { metadata: { ownerReferences: null, annotations: { [PAUSED]: 'true' } } });
    const before = (await versions()).length;
    const err = await caught(runBackup(backupOpts()));
    expect(err.exitCode).toBe(3);
    expect(err.message).toContain(`TalosControlPlane steady/steady-cp carries ${PAUSED}`);
    expect((await versions()).length).toBe(before);
  });

  it('carries it unpaused through the controlPlaneRef alone, unlabelled, with the Machine it owns', async () => {
    await src.mergePatch(ref, { metadata: { annotations: { [PAUSED]: null }, labels: null } });
    // Its Machine unlabelled too: only its owner reference to the TalosControlPlane leads to it.
    await src.mergePatch(
      { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', namespace: 'steady', name: 'steady-cp-0' },
      { metadata: { labels: null } },
    );
    const tcp = (await src.get(ref))!;
    expect(tcp.metadata.ownerReferences ?? []).toEqual([]);
    expect(tcp.metadata.labels ?? {}).toEqual({});
    const r = await runBackup(backupOpts());
    const archive = (await fetched(r.versionId)).archive;
    const reasons = Object.fromEntries(
      archive.manifest.objects.map((e) => [`${e.kind} ${e.namespace}/${e.name}`, e.reason]),
    );
    expect(reasons['TalosControlPlane steady/steady-cp']).toBe('reference');
    expect(reasons['Machine steady/steady-cp-0']).toBe('owner-chain');
    expect(r.counts['TalosControlPlane']).toBe(2);
  });

  it('refuses a paused TalosControlPlane that nothing leads to', async () => {
    const stray = {
      apiVersion: TCP_API,
      kind: 'TalosControlPlane',
      metadata: { name: 'stray-cp', namespace: 'steady', annotations: { [PAUSED]: 'true' } },
      spec: {
        replicas: 0,
        version: 'v1.36.2',
        infrastructureTemplate: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha2',
          kind: 'ProxmoxMachineTemplate',
          name: 'steady-cp',
        },
      },
    };
    await src.create(stray);
    try {
      const err = await caught(runBackup(backupOpts()));
      expect(err.exitCode).toBe(3);
      expect(err.message).toContain(`TalosControlPlane steady/stray-cp carries ${PAUSED}`);
    } finally {
      await src.delete(tcpRef('steady', 'stray-cp'));
    }
  });
});

/** The archive without its TalosControlPlanes, manifest and counts to match: what an older ferry wrote. */
function withoutTcp(a: Archive): FetchedBackup {
  const keep = a.objects.map((o) => o.kind !== 'TalosControlPlane');
  const { TalosControlPlane: _t, ...counts } = a.manifest.counts;
  return {
    archive: {
      manifest: { ...a.manifest, counts, objects: a.manifest.objects.filter((_, i) => keep[i]) },
      objects: a.objects.filter((_, i) => keep[i]),
    },
    versionId: 'hand-made',
    lastModified: new Date(),
    size: 0,
  };
}

describe('restore', () => {
  it('refuses an archive without the TalosControlPlane its Cluster names, before the first write', async () => {
    const empty = await startLabApi({ host: '127.0.145.2' });
    try {
      const kube = labKube(empty.kc, empty.server.url);
      await installCapiCrds(kube);
      await seedProviders(kube);
      let writes = 0;
      const counting = new MgmtKube({
        address: kube.req.address,
        server: kube.req.server,
        request: async (method, path, opts) => {
          if (method !== 'GET') writes++;
          return kube.req.request(method, path, opts);
        },
      });
      const err = await caught(
        runRestore({ kube: counting, backup: withoutTcp(adoptedBackup.archive), loc }),
      );
      expect(err.exitCode).toBe(2);
      expect(err.message).toContain(
        'Cluster adopted/lab spec.controlPlaneRef names TalosControlPlane adopted/lab-control-plane (controlplane.cluster.x-k8s.io), which the backup does not hold',
      );
      expect(err.remediation).toContain('nothing was applied');
      expect(writes).toBe(0);
    } finally {
      await empty.stop();
    }
  });

  it("exits 2 with the server's message when the target refuses a write (403), deleting what it created", async () => {
    const refusing = await startLabApi({ host: '127.0.145.3' });
    try {
      const kube = labKube(refusing.kc, refusing.server.url);
      await installCapiCrds(kube);
      await seedProviders(kube);
      // The first TalosControlPlane create is refused by the server itself, as RBAC or a quota refuses it.
      const gated = new MgmtKube({
        address: kube.req.address,
        server: kube.req.server,
        request: async (method, path, opts) => {
          if (method === 'POST' && path.endsWith('/taloscontrolplanes'))
            refusing.server.setForbidden([
              { group: 'controlplane.cluster.x-k8s.io', resource: 'taloscontrolplanes' },
            ]);
          return kube.req.request(method, path, opts);
        },
      });
      const err = await caught(runRestore({ kube: gated, backup: adoptedBackup, loc }));
      refusing.server.setForbidden([]);
      expect(err.exitCode).toBe(2);
      expect(err.message).toMatch(
        /^restore failed after creating \d+ object\(s\); they were deleted again: the target's API server answered create TalosControlPlane adopted\/lab-control-plane with HTTP 403 Forbidden$/,
      );
      const text = describeError(err);
      // The server's own message, as the lab's RBAC words it.
      expect(text).toContain(
        'HTTP 403 Forbidden: taloscontrolplanes.controlplane.cluster.x-k8s.io is forbidden: User "kubernetes-admin" cannot create resource "taloscontrolplanes" in API group "controlplane.cluster.x-k8s.io" in the namespace "adopted"',
      );
      expect(text).not.toContain('fix the cause below');
      expect(await inNamespace(kube, 'adopted')).toEqual([]);
    } finally {
      await refusing.stop();
    }
  });
});
