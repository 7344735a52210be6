/**
 * Backup → moto → restore between two lab API servers serving the real CAPI CRDs (schemas/capi).
 * Loopback subnets: source lab 127.0.140.1, target labs 127.0.141.1–3; moto on 127.0.0.1:ephemeral.
 */
import { createConnection, createServer, type Server } from 'node:net';
import {
  CreateBucketCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { type LabApiFixture, startLabApi } from '../lab/apiserver/testing.js';
import { type BackupOptions, META, runBackup } from './backup.js';
import { sha256Hex } from './canonical.js';
import { MgmtKube } from './kube.js';
import type { KubeObject } from './model.js';
import { fetchBackup, runRestore } from './restore.js';
import { parseS3Url, type S3Settings } from './s3-config.js';
import { openBackupStore } from './s3-store.js';
import { installCapiCrds, labKube, seedCluster, seedProviders } from './testing-fleet.js';
import { type Moto, startMoto } from './testing-moto.js';

let moto: Moto;
let source: LabApiFixture;
let target: LabApiFixture;
let src: MgmtKube;
let dst: MgmtKube;
let s3: S3Client;
let settings: S3Settings;
let identity: string;
let recipient: string;
const loc = parseS3Url('s3://mgmt-backups/prod', '--to');

beforeAll(async () => {
  [moto, source, target] = await Promise.all([
    startMoto(),
    startLabApi({ host: '127.0.140.1' }),
    startLabApi({ host: '127.0.141.1' }),
  ]);
  src = labKube(source.kc, source.server.url);
  dst = labKube(target.kc, target.server.url);
  await Promise.all([installCapiCrds(src), installCapiCrds(dst)]);
  await Promise.all([seedProviders(src), seedProviders(dst)]);
  await seedCluster(src, 'alpha');
  await seedCluster(src, 'beta');
  settings = {
    endpoint: moto.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIAFERRYTEST', secretAccessKey: 'ferry-s3-secret-key' },
  };
  s3 = new S3Client({ ...settings, forcePathStyle: true });
  for (const b of ['mgmt-backups', 'unversioned', 'empty'])
    await s3.send(new CreateBucketCommand({ Bucket: b }));
  for (const b of ['mgmt-backups', 'empty'])
    await s3.send(
      new PutBucketVersioningCommand({ Bucket: b, VersioningConfiguration: { Status: 'Enabled' } }),
    );
  identity = await generateIdentity();
  recipient = await identityToRecipient(identity);
});
afterAll(async () => {
  s3?.destroy();
  await Promise.all([moto?.stop(), source?.stop(), target?.stop()]);
});

function backupOpts(over: Partial<BackupOptions> = {}): BackupOptions {
  return {
    kube: src,
    store: openBackupStore(loc, settings),
    loc,
    recipients: [recipient],
    retention: {},
    ...over,
  };
}

async function all(kube: MgmtKube): Promise<KubeObject[]> {
  const kinds = await kube.discoverKinds();
  const out: KubeObject[] = [];
  for (const k of kinds) if (k.kind !== 'Provider') out.push(...(await kube.listKind(k)));
  out.push(...(await kube.list('v1', 'Secret')));
  return out;
}

const key = (o: KubeObject) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`;

async function caught(p: Promise<unknown>): Promise<FerryError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof FerryError) return err;
    throw err;
  }
  throw new Error('expected a FerryError');
}

describe('backup', () => {
  it('exports the graph move carries, the <cluster>-talos secrets it drops, not the unrelated ones', async () => {
    const r = await runBackup(backupOpts());
    expect(r.verified).toBe(true);
    expect(r.clusters.sort()).toEqual(['alpha/alpha', 'beta/beta']);
    expect(r.counts).toEqual({
      Cluster: 2,
      ProxmoxCluster: 2,
      ProxmoxMachineTemplate: 4,
      TalosControlPlane: 2,
      TalosConfigTemplate: 2,
      MachineDeployment: 2,
      MachineSet: 2,
      Machine: 6,
      TalosConfig: 4,
      Secret: 10,
    });
    expect(r.providers.map((p) => `${p.type}/${p.providerName}@${p.version}`).sort()).toContain(
      'ControlPlaneProvider/talos@v0.5.13',
    );
    const fetched = await fetchBackup({
      store: openBackupStore(loc, settings),
      loc,
      versionId: r.versionId,
      identities: [identity],
      identityFile: 'id',
    });
    const byReason = Object.fromEntries(
      fetched.archive.manifest.objects.map((e) => [`${e.kind} ${e.namespace}/${e.name}`, e.reason]),
    );
    expect(byReason['Secret alpha/alpha-talos']).toBe('talos-secret');
    expect(byReason['Secret alpha/alpha-ca']).toBe('soft-owned-secret');
    expect(byReason['Secret alpha/alpha-proxmox-credentials']).toBe('owner-chain');
    expect(byReason['Secret alpha/unrelated']).toBeUndefined();
    // Never left paused, and archived as it was before ferry paused it.
    for (const c of await src.list('cluster.x-k8s.io/v1beta2', 'Cluster'))
      expect(c.spec.paused).toBeUndefined();
    expect(fetched.archive.objects.filter((o) => o.kind === 'Cluster').map((o) => o.spec.paused)).toEqual([
      undefined,
      undefined,
    ]);
  });

  it('refuses a paused cluster, uploads nothing, and leaves it paused as it found it', async () => {
    const store = openBackupStore(loc, settings);
    const before = (await store.versions()).length;
    const beta = { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', namespace: 'beta', name: 'beta' };
    await src.mergePatch(beta, { spec: { paused: true } });
    try {
      const err = await caught(runBackup(backupOpts()));
      expect(err.exitCode).toBe(3);
      expect(err.message).toContain('Cluster beta/beta is paused');
      expect((await store.versions()).length).toBe(before);
      expect((await src.get(beta))?.spec.paused).toBe(true);
      expect((await src.get({ ...beta, namespace: 'alpha', name: 'alpha' }))?.spec.paused).toBeUndefined();
    } finally {
      await src.mergePatch(beta, { spec: { paused: null } });
    }
  });

  it('refuses a cluster mid-migration (TalosControlPlane paused) and unpauses the clusters it paused to read', async () => {
    const store = openBackupStore(loc, settings);
    const before = (await store.versions()).length;
    const tcp = {
      apiVersion: 'controlplane.cluster.x-k8s.io/v1alpha3',
      kind: 'TalosControlPlane',
      namespace: 'alpha',
      name: 'alpha-cp',
    };
    await src.mergePatch(tcp, { metadata: { annotations: { 'cluster.x-k8s.io/paused': 'true' } } });
    try {
      const err = await caught(runBackup(backupOpts()));
      expect(err.exitCode).toBe(3);
      expect(err.message).toContain(
        'TalosControlPlane alpha/alpha-cp carries cluster.x-k8s.io/paused: cluster alpha/alpha is mid-migration',
      );
      expect((await store.versions()).length).toBe(before);
      for (const c of await src.list('cluster.x-k8s.io/v1beta2', 'Cluster'))
        expect(c.spec.paused).toBeUndefined();
      expect((await src.get(tcp))?.metadata.annotations?.['cluster.x-k8s.io/paused']).toBe('true');
    } finally {
      await src.mergePatch(tcp, { metadata: { annotations: { 'cluster.x-k8s.io/paused': null } } });
    }
  });

  it('unpauses every cluster when reading fails while they are paused', async () => {
    let pausedSeen = false;
    const req = src.req;
    const failing = new MgmtKube({
      address: req.address,
      server: req.server,
      request: async (method, path, opts) => {
        if (method === 'PATCH' && JSON.stringify(opts?.body).includes('"paused":true')) pausedSeen = true;
        if (pausedSeen && method === 'GET' && path.endsWith('/machines'))
          throw new Error('injected: the API server went away');
        return req.request(method, path, opts);
      },
    });
    const err = await caught(runBackup(backupOpts({ kube: failing }))).catch((e) => e as Error);
    expect(String((err as Error).message)).toContain('injected');
    expect(pausedSeen).toBe(true);
    for (const c of await src.list('cluster.x-k8s.io/v1beta2', 'Cluster'))
      expect(c.spec.paused).toBeUndefined();
  });

  it('stops when a provider keeps blocking the move, and unpauses', async () => {
    const m = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      namespace: 'beta',
      name: 'beta-cp-0',
    };
    await src.mergePatch(m, {
      metadata: { annotations: { 'clusterctl.cluster.x-k8s.io/block-move': 'true' } },
    });
    try {
      const err = await caught(runBackup(backupOpts({ blockMoveTimeoutMs: 0 })));
      expect(err.exitCode).toBe(3);
      expect(err.message).toContain(
        'Machine beta/beta-cp-0 still carry clusterctl.cluster.x-k8s.io/block-move',
      );
      for (const c of await src.list('cluster.x-k8s.io/v1beta2', 'Cluster'))
        expect(c.spec.paused).toBeUndefined();
    } finally {
      await src.mergePatch(m, {
        metadata: { annotations: { 'clusterctl.cluster.x-k8s.io/block-move': null } },
      });
    }
  });

  it('refuses an unversioned bucket before touching the cluster', async () => {
    const l = parseS3Url('s3://unversioned/x', '--to');
    const err = await caught(runBackup(backupOpts({ loc: l, store: openBackupStore(l, settings) })));
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain('bucket unversioned is not versioned');
  });

  it('keeps versions by the retention policy', async () => {
    const l = parseS3Url('s3://mgmt-backups/retention', '--to');
    const store = openBackupStore(l, settings);
    for (let i = 0; i < 3; i++) await runBackup(backupOpts({ loc: l, store }));
    expect((await store.versions()).length).toBe(3);
    const r = await runBackup(backupOpts({ loc: l, store, retention: { keep: 2 } }));
    const left = await store.versions();
    expect(left.length).toBe(2);
    expect(left[0]!.versionId).toBe(r.versionId);
    expect(r.retention.deleted.length).toBe(2);
  });
  it('reads the graph with parallel lists, at most 8 at once, and archives the same objects', async () => {
    let inFlight = 0;
    let most = 0;
    const watched = new MgmtKube({
      address: src.req.address,
      server: src.req.server,
      request: async (method, path, opts) => {
        const list = method === 'GET' && opts?.query?.['limit'] !== undefined;
        if (list) most = Math.max(most, ++inFlight);
        try {
          return await src.req.request(method, path, opts);
        } finally {
          if (list) inFlight--;
        }
      },
    });
    const l = parseS3Url('s3://mgmt-backups/parallel', '--to');
    const r = await runBackup(backupOpts({ kube: watched, loc: l, store: openBackupStore(l, settings) }));
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(8);
    const again = await runBackup(backupOpts({ loc: l, store: openBackupStore(l, settings) }));
    expect(r.counts).toEqual(again.counts);
    expect(r.objects).toBe(36);
  });
});

describe('restore', () => {
  it('fails clearly on an empty bucket, a version that does not exist, a wrong key and a corrupted object, applying nothing', async () => {
    const empty = parseS3Url('s3://empty/none', '--from');
    const e1 = await caught(
      fetchBackup({
        store: openBackupStore(empty, settings),
        loc: empty,
        identities: [identity],
        identityFile: 'id',
      }),
    );
    expect(e1.exitCode).toBe(2);
    expect(e1.message).toContain('no backup at s3://empty/none');
    expect(e1.remediation).toContain('ferry mgmt bootstrap');

    const store = openBackupStore(loc, settings);
    const e2 = await caught(
      fetchBackup({ store, loc, versionId: 'no-such-version', identities: [identity], identityFile: 'id' }),
    );
    expect(e2.message).toContain('backup version no-such-version does not exist');

    const other = await generateIdentity();
    const e3 = await caught(fetchBackup({ store, loc, identities: [other], identityFile: 'other.key' }));
    expect(e3.exitCode).toBe(2);
    expect(e3.message).toContain('cannot be decrypted with the identity in other.key');
    expect(e3.message).not.toContain('AGE-SECRET-KEY');

    // A damaged object whose metadata still claims the original checksum.
    const good = await store.get();
    const bad = Uint8Array.from(good.bytes);
    bad[bad.length - 5]! ^= 0xff;
    const l = parseS3Url('s3://mgmt-backups/corrupt', '--from');
    await s3.send(new PutObjectCommand({ Bucket: l.bucket, Key: l.key, Body: bad, Metadata: good.metadata }));
    const e4 = await caught(
      fetchBackup({
        store: openBackupStore(l, settings),
        loc: l,
        identities: [identity],
        identityFile: 'id',
      }),
    );
    expect(e4.message).toMatch(/is corrupted: its sha256 is [0-9a-f]{64}, the backup recorded/);
    // Checksum right, content not a ferry archive (e.g. a manifest entry edited before encryption): caught by the manifest.
    const { encrypt } = await import('./age.js');
    const { gzipSync } = await import('node:zlib');
    const fetched = await fetchBackup({ store, loc, identities: [identity], identityFile: 'id' });
    fetched.archive.objects[3]!.spec = { tampered: true };
    const cipher = await encrypt(gzipSync(JSON.stringify(fetched.archive)), [recipient]);
    await s3.send(
      new PutObjectCommand({
        Bucket: l.bucket,
        Key: l.key,
        Body: cipher,
        Metadata: { ...good.metadata, [META.sha256]: sha256Hex(cipher) },
      }),
    );
    const e5 = await caught(
      fetchBackup({
        store: openBackupStore(l, settings),
        loc: l,
        identities: [identity],
        identityFile: 'id',
      }),
    );
    expect(e5.message).toContain('sha256 differs from the manifest');
    expect((await all(dst)).filter((o) => o.kind === 'Cluster')).toEqual([]);
  });

  it('refuses a target with other provider versions before the first create', async () => {
    const fetched = await fetchBackup({
      store: openBackupStore(loc, settings),
      loc,
      identities: [identity],
      identityFile: 'id',
    });
    const p = {
      apiVersion: 'clusterctl.cluster.x-k8s.io/v1alpha3',
      kind: 'Provider',
      namespace: 'cacppt-system',
      name: 'control-plane-talos',
    };
    await dst.mergePatch(p, { version: 'v0.5.12' });
    try {
      const err = await caught(runRestore({ kube: dst, backup: fetched, loc }));
      expect(err.message).toContain(
        'provider ControlPlaneProvider talos is v0.5.12 on the target, the backup was taken at v0.5.13',
      );
      expect(err.remediation).toContain('nothing was applied');
      expect(await dst.list('cluster.x-k8s.io/v1beta2', 'Cluster')).toEqual([]);
    } finally {
      await dst.mergePatch(p, { version: 'v0.5.13' });
    }
  });

  it('re-creates every object with its status, ownerRef UIDs rewritten, unpaused and verified', async () => {
    const fetched = await fetchBackup({
      store: openBackupStore(loc, settings),
      loc,
      identities: [identity],
      identityFile: 'id',
    });
    const r = await runRestore({ kube: dst, backup: fetched, loc });
    expect(r.verify).toEqual({ ok: true, problems: [] });
    expect(r.created).toBe(36);
    expect(r.namespaces).toEqual(['alpha', 'beta']);
    const before = new Map((await all(src)).map((o) => [key(o), o]));
    const after = await all(dst);
    expect(after.length).toBe(36);
    const afterByUid = new Map(after.map((o) => [o.metadata.uid, o]));
    for (const o of after) {
      const s = before.get(key(o));
      expect(s, key(o)).toBeDefined();
      expect(o.metadata.uid).not.toBe(s!.metadata.uid);
      expect(r.uids[s!.metadata.uid!]).toBe(o.metadata.uid);
      for (const f of ['spec', 'status', 'data', 'type'] as const)
        expect(o[f], `${key(o)} ${f}`).toEqual(s![f]);
      expect(o.metadata.labels).toEqual(s!.metadata.labels);
      // Each owner reference points at the restored owner, by its new UID.
      expect(o.metadata.ownerReferences?.map((x) => key({ ...afterByUid.get(x.uid)! })) ?? []).toEqual(
        s!.metadata.ownerReferences?.map((x) =>
          key([...before.values()].find((b) => b.metadata.uid === x.uid)!),
        ) ?? [],
      );
    }
    const tcp = after.find((o) => o.kind === 'TalosControlPlane')!;
    expect(tcp.status.bootstrapped).toBe(true);
    for (const c of after.filter((o) => o.kind === 'Cluster')) expect(c.spec.paused).toBeUndefined();
    // Restoring again finds every object present and applies nothing.
    const again = await caught(runRestore({ kube: dst, backup: fetched, loc }));
    expect(again.message).toContain('36 object(s) already exist on the target');
  });

  it('deletes what it created when a write fails midway', async () => {
    const third = await startLabApi({ host: '127.0.141.2' });
    try {
      const kube = labKube(third.kc, third.server.url);
      await installCapiCrds(kube);
      await seedProviders(kube);
      let posts = 0;
      const failing = new MgmtKube({
        address: kube.req.address,
        server: kube.req.server,
        request: async (method, path, opts) => {
          if (method === 'POST' && path.includes('/namespaces/') && ++posts === 20)
            throw new Error('injected: write refused');
          return kube.req.request(method, path, opts);
        },
      });
      const fetched = await fetchBackup({
        store: openBackupStore(loc, settings),
        loc,
        identities: [identity],
        identityFile: 'id',
      });
      const err = await caught(runRestore({ kube: failing, backup: fetched, loc }));
      expect(err.message).toMatch(/restore failed after creating \d+ object\(s\); they were deleted again/);
      expect(posts).toBeGreaterThanOrEqual(20);
      for (const k of ['Cluster', 'Machine', 'TalosControlPlane'])
        expect(
          await kube.list(
            `${k === 'TalosControlPlane' ? 'controlplane.' : ''}cluster.x-k8s.io/${k === 'TalosControlPlane' ? 'v1alpha3' : 'v1beta2'}`,
            k,
          ),
        ).toEqual([]);
      expect(
        (await kube.list('v1', 'Secret')).filter((x) =>
          ['alpha', 'beta'].includes(x.metadata.namespace ?? ''),
        ),
      ).toEqual([]);
    } finally {
      await third.stop();
    }
  });

  it('deletes a create whose answer was lost too, with writes kept within writeConcurrency', async () => {
    const fourth = await startLabApi({ host: '127.0.141.3' });
    try {
      const kube = labKube(fourth.kc, fourth.server.url);
      await installCapiCrds(kube);
      await seedProviders(kube);
      // The namespaces exist already: the rollback cannot lean on deleting them (a namespace takes its objects along).
      for (const ns of ['alpha', 'beta'])
        await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      let posts = 0;
      let inFlight = 0;
      let most = 0;
      let lost: string | undefined;
      const failing = new MgmtKube({
        address: kube.req.address,
        server: kube.req.server,
        request: async (method, path, opts) => {
          const write = method !== 'GET';
          if (write) most = Math.max(most, ++inFlight);
          try {
            const answer = await kube.req.request(method, path, opts);
            // The server applied the create; its answer never reaches ferry.
            if (method === 'POST' && ++posts === 20) {
              lost = `${path.split('/').pop()} ${(opts!.body as KubeObject).metadata.name}`;
              throw new Error('injected: connection reset before the answer');
            }
            return answer;
          } finally {
            if (write) inFlight--;
          }
        },
      });
      const fetched = await fetchBackup({
        store: openBackupStore(loc, settings),
        loc,
        identities: [identity],
        identityFile: 'id',
      });
      const err = await caught(runRestore({ kube: failing, backup: fetched, loc, writeConcurrency: 3 }));
      expect(err.message).toMatch(/restore failed after creating \d+ object\(s\); they were deleted again/);
      expect(lost).toBeDefined();
      expect(most).toBeGreaterThan(1);
      expect(most).toBeLessThanOrEqual(3);
      expect(
        (await all(kube)).filter((x) => ['alpha', 'beta'].includes(x.metadata.namespace ?? '')).map(key),
      ).toEqual([]);
    } finally {
      await fourth.stop();
    }
  });

  it('fails clearly when S3 goes away mid-download', async () => {
    // A proxy in front of moto that cuts every answer after its first 600 bytes.
    const proxy: Server = createServer((client) => {
      const upstream = createConnection({ host: '127.0.0.1', port: moto.port });
      let sent = 0;
      client.pipe(upstream);
      upstream.on('data', (chunk: Buffer) => {
        const room = 600 - sent;
        if (room > 0) client.write(chunk.subarray(0, room));
        sent += chunk.length;
        if (sent >= 600) {
          client.destroy();
          upstream.destroy();
        }
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (proxy.address() as { port: number }).port;
      const store = openBackupStore(loc, { ...settings, endpoint: `http://127.0.0.1:${port}` });
      const err = await caught(fetchBackup({ store, loc, identities: [identity], identityFile: 'id' }));
      expect(err.exitCode).toBe(2);
      expect(err.message).toMatch(/broke off|cannot reach S3/);
      expect(err.remediation).toContain('nothing was applied');
    } finally {
      proxy.close();
    }
  });
});
