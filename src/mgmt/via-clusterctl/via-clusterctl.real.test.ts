/**
 * `ferry mgmt backup --via clusterctl` through the CLI: a stand-in clusterctl on PATH writes the
 * move directory the way clusterctl does (one `<Kind>_<Namespace>_<Name>.yaml` per object holding
 * the live object as JSON, 0600, Clusters with `spec.paused: true`, the unowned `<cluster>-talos`
 * Secret left out), ferry adds what move drops; `restore --via clusterctl` has the stand-in do what
 * `--from-directory` does with the real kubectl. Source lab 127.0.187.1, target lab 127.0.187.2;
 * moto on 127.0.0.1:ephemeral.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CreateBucketCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIo } from '../../cli/io.js';
import { runCli } from '../../cli/run-cli.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../../lab/apiserver/testing.js';
import { runBackup } from '../backup.js';
import { type MgmtKube, refOf } from '../kube.js';
import type { KubeObject } from '../model.js';
import { fetchBackup } from '../restore.js';
import { parseS3Url, type S3Settings } from '../s3-config.js';
import { openBackupStore } from '../s3-store.js';
import { installCapiCrds, labKube, seedCluster, seedProviders } from '../testing-fleet.js';
import { type Moto, startMoto } from '../testing-moto.js';
import { type Rule, Standins } from '../tools/testing-standins.js';

const ACCESS_KEY = 'AKIAVIACLUSTERCTL001';
const SECRET_KEY = 'via-clusterctl-s3-secret-0a9b8c7d';
let moto: Moto;
let source: LabApiFixture;
let target: LabApiFixture;
let src: MgmtKube;
let dir: string;
let identity: string;
let settings: S3Settings;
/** What clusterctl move would write for namespace alpha: the live objects, Clusters paused. */
let moveFiles: { afterArg: string; name: string; content: string }[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-via-clusterctl-'));
  [moto, source, target] = await Promise.all([
    startMoto(),
    startLabApi({ host: '127.0.187.1' }),
    startLabApi({ host: '127.0.187.2' }),
  ]);
  const dst = labKube(target.kc, target.server.url);
  await installCapiCrds(dst);
  await seedProviders(dst);
  await writeAdminKubeconfig(target, join(dir, 'target.kubeconfig'));
  src = labKube(source.kc, source.server.url);
  await installCapiCrds(src);
  await seedProviders(src);
  await seedCluster(src, 'alpha');
  await writeAdminKubeconfig(source, join(dir, 'source.kubeconfig'));
  identity = await generateIdentity();
  await writeFile(join(dir, 'key.txt'), `${identity}\n`, { mode: 0o600 });
  await writeFile(join(dir, 'recipients'), `${await identityToRecipient(identity)}\n`);
  await writeFile(
    join(dir, 'credentials'),
    `[default]\naws_access_key_id = ${ACCESS_KEY}\naws_secret_access_key = ${SECRET_KEY}\n`,
    { mode: 0o600 },
  );
  settings = {
    endpoint: moto.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
  };
  const client = new S3Client({ ...settings, forcePathStyle: true });
  await client.send(new CreateBucketCommand({ Bucket: 'via-cc' }));
  await client.send(
    new PutBucketVersioningCommand({ Bucket: 'via-cc', VersioningConfiguration: { Status: 'Enabled' } }),
  );
  client.destroy();
  // The graph move carries, read from ferry's own export; move leaves the unowned <cluster>-talos and the inventory.
  const loc = parseS3Url('s3://via-cc/api', '--to');
  const api = await runBackup({
    kube: src,
    store: openBackupStore(loc, settings),
    loc,
    recipients: [await identityToRecipient(identity)],
    retention: {},
  });
  const fetched = await fetchBackup({
    store: openBackupStore(loc, settings),
    loc,
    versionId: api.versionId,
    identities: [identity],
    identityFile: 'key.txt',
  });
  moveFiles = [];
  for (const [i, e] of fetched.archive.manifest.objects.entries()) {
    if (e.reason === 'talos-secret' || e.reason === 'inventory') continue;
    const live = (await src.get(refOf(fetched.archive.objects[i]!))) as KubeObject;
    const file = live.kind === 'Cluster' ? { ...live, spec: { ...live.spec, paused: true } } : live;
    moveFiles.push({
      afterArg: '--to-directory',
      name: `${e.kind}_${e.namespace ?? ''}_${e.name}.yaml`,
      content: JSON.stringify(file),
    });
  }
});
afterAll(async () => {
  await Promise.all([moto?.stop(), source?.stop(), target?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const clusterctl = (move: Partial<Rule>): Rule[] => [
  { tool: 'clusterctl', match: '^version -o short$', stdout: 'v1.14.0\n' },
  {
    tool: 'clusterctl',
    match: '^move .*--to-directory ',
    stdout: 'Performing move...\nDiscovering Cluster API objects\nMoving Cluster API objects Clusters=1\n',
    ...move,
  },
];

async function backupVia(tools: Standins, to: string) {
  const io = Object.assign(memoryIo({ cwd: dir }), { env: tools.env() });
  const code = await runCli(
    [
      'mgmt',
      'backup',
      '--via',
      'clusterctl',
      '--to',
      to,
      '--kubeconfig',
      'source.kubeconfig',
      '--recipients-file',
      'recipients',
      '--s3-endpoint',
      moto.endpoint,
      '--s3-credentials-file',
      'credentials',
    ],
    io,
  );
  return { code, out: io.out, err: io.err };
}

describe('ferry mgmt backup --via clusterctl', () => {
  it("archives what clusterctl move wrote plus what it drops; move's directory is gone afterwards", async () => {
    const tools = new Standins(await mkdtemp(join(dir, 'tools-')));
    tools.script(clusterctl({ writeFiles: moveFiles }));
    const r = await backupVia(tools, 's3://via-cc/cc');
    expect(r.err).not.toMatch(/^error/m);
    expect(r.code).toBe(0);
    const move = tools.called('clusterctl', /^move /);
    expect(move).toHaveLength(1);
    expect(move[0]?.args).toEqual([
      'move',
      '--kubeconfig',
      join(dir, 'source.kubeconfig'),
      '--namespace',
      'alpha',
      '--to-directory',
      expect.stringContaining('ferry-move-'),
    ]);
    expect(move[0]?.env['CLUSTERCTL_DISABLE_VERSIONCHECK']).toBe('true');
    // Move's files are the Secrets in plain text: the directory and its parent are removed.
    const moveDir = move[0]!.args.at(-1)!;
    expect(existsSync(moveDir)).toBe(false);
    expect(existsSync(dirname(moveDir))).toBe(false);

    const loc = parseS3Url('s3://via-cc/cc', '--from');
    const got = await fetchBackup({
      store: openBackupStore(loc, settings),
      loc,
      identities: [identity],
      identityFile: 'key.txt',
    });
    const entries = Object.fromEntries(
      got.archive.manifest.objects.map((e) => [`${e.kind} ${e.namespace ?? ''}/${e.name}`, e.reason]),
    );
    // What move dropped, added from ferry's read: the unowned <cluster>-talos Secret; the inventory in the manifest.
    expect(entries['Secret alpha/alpha-talos']).toBe('talos-secret');
    expect(got.archive.objects.length).toBe(moveFiles.length + 1);
    expect(got.archive.manifest.providers.map((p) => p.version)).toContain('v0.5.13');
    // Move writes Clusters paused; the archive holds them as they were, with their statuses.
    const cluster = got.archive.objects.find((o) => o.kind === 'Cluster');
    expect(cluster?.spec?.paused).toBeUndefined();
    const tcp = got.archive.objects.find((o) => o.kind === 'TalosControlPlane');
    expect(tcp?.status?.['bootstrapped']).toBe(true);
    // ferry never paused anything of its own that it left paused.
    for (const c of await src.list('cluster.x-k8s.io/v1beta2', 'Cluster'))
      expect(c.spec.paused).toBeUndefined();
  });

  it('clusterctl move refusing (a paused cluster): exit 3, nothing uploaded, the directory removed all the same', async () => {
    const tools = new Standins(await mkdtemp(join(dir, 'tools-')));
    tools.script(
      clusterctl({
        code: 1,
        stdout: 'Performing move...\nDiscovering Cluster API objects\n',
        stderr: 'Error: cannot start operation while Cluster alpha/alpha is paused\n',
        writeFiles: moveFiles.slice(0, 2),
      }),
    );
    const r = await backupVia(tools, 's3://via-cc/refused');
    expect(r.code).toBe(3);
    expect(r.err).toContain('clusterctl move --to-directory refused the namespace alpha');
    expect(r.err).toContain('is paused');
    const moveDir = tools.called('clusterctl', /^move /)[0]!.args.at(-1)!;
    expect(existsSync(dirname(moveDir))).toBe(false);
    const versions = await openBackupStore(parseS3Url('s3://via-cc/refused', '--from'), settings).versions();
    expect(versions).toEqual([]);
  });

  it('restore --via clusterctl: move --from-directory, then the statuses, then the pause annotations removed', async () => {
    const tools = new Standins(await mkdtemp(join(dir, 'tools-')));
    tools.script([
      { tool: 'clusterctl', match: '^version -o short$', stdout: 'v1.14.0\n' },
      {
        tool: 'clusterctl',
        match: '^move .*--from-directory ',
        stdout: 'Moving Cluster API objects from directory\n',
        fromDirectory: true,
      },
    ]);
    const io = Object.assign(memoryIo({ cwd: dir }), { env: tools.env() });
    const code = await runCli(
      [
        'mgmt',
        'restore',
        '--via',
        'clusterctl',
        '--from',
        's3://via-cc/cc',
        '--to-kubeconfig',
        'target.kubeconfig',
        '--identity',
        'key.txt',
        '--s3-endpoint',
        moto.endpoint,
        '--s3-credentials-file',
        'credentials',
      ],
      io,
    );
    expect(io.err).not.toMatch(/^error/m);
    expect(code).toBe(0);
    expect(io.out).toContain('verify     every Cluster Ready');
    const move = tools.called('clusterctl', /^move /)[0]!;
    expect(move.args.slice(0, 3)).toEqual(['move', '--kubeconfig', join(dir, 'target.kubeconfig')]);
    expect(existsSync(dirname(move.args.at(-1)!))).toBe(false);
    const dst = labKube(target.kc, target.server.url);
    await dst.discoverKinds();
    const tcp = (await dst.list('controlplane.cluster.x-k8s.io/v1alpha3', 'TalosControlPlane'))[0];
    expect(tcp?.status?.['bootstrapped']).toBe(true);
    expect((await dst.list('v1', 'Secret')).some((x) => x.metadata.name === 'alpha-talos')).toBe(true);
    for (const k of await dst.discoverKinds())
      for (const o of await dst.listKind(k))
        expect(
          o.metadata.annotations?.['cluster.x-k8s.io/paused'],
          `${o.kind} ${o.metadata.name}`,
        ).toBeUndefined();
  });
});
