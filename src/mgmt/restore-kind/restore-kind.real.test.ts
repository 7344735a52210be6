/**
 * `ferry mgmt restore` into kind through the CLI, with stand-in kind/clusterctl/kubectl/docker on
 * PATH (src/mgmt/tools/testing-standin.mjs) and a lab API server playing the kind cluster: the kind stand-in
 * writes a kubeconfig pointing at it, and the lab serves the CAPI CRDs and the clusterctl inventory
 * that `clusterctl init` would have installed. The backup comes from a source lab through moto.
 * Loopback subnets: source lab 127.0.184.1, kind lab 127.0.185.1, kind lab of the kill test
 * 127.0.186.1; moto on 127.0.0.1:ephemeral.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CreateBucketCommand, PutBucketVersioningCommand, S3Client } from '@aws-sdk/client-s3';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIo } from '../../cli/io.js';
import { runCli } from '../../cli/run-cli.js';
import { MemoryStore } from '../../lab/apiserver/memory-store.js';
import type { KObj } from '../../lab/apiserver/object.js';
import type { WriteResult } from '../../lab/apiserver/store.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../../lab/apiserver/testing.js';
import { runBackup } from '../backup.js';
import type { MgmtKube } from '../kube.js';
import { parseS3Url, type S3Settings } from '../s3-config.js';
import { openBackupStore } from '../s3-store.js';
import { StageJournal } from '../stage-journal.js';
import { installCapiCrds, labKube, seedCluster, seedProviders } from '../testing-fleet.js';
import { type Moto, startMoto } from '../testing-moto.js';
import { fixture, type Rule, Standins } from '../tools/testing-standins.js';

const REPO = resolve(import.meta.dirname, '..', '..', '..');
const slowness = Number(process.env['FERRY_TEST_SLOWNESS'] ?? '1');
const ACCESS_KEY = 'AKIAKINDRESTORE00001';
const SECRET_KEY = 'kind-restore-s3-secret-5e4d3c2b1a';
// Not the bootstrap's defaults: the versions clusterctl init pins must come from the backup.
const VERSIONS = { 'control-plane-talos': 'v0.5.12', 'infrastructure-proxmox': 'v0.8.1' };

/** A lab store whose creates of chosen keys wait until released: a restore caught mid-write. */
class GatedStore extends MemoryStore {
  hold: ((key: string) => boolean) | undefined;
  readonly held: (() => void)[] = [];
  override async create(key: string, value: KObj): Promise<WriteResult> {
    if (this.hold?.(key)) await new Promise<void>((r) => this.held.push(r));
    return super.create(key, value);
  }
}

let moto: Moto;
let source: LabApiFixture;
let kindLab: LabApiFixture;
let killLab: LabApiFixture;
const gate = new GatedStore();
let dir: string;
let identity: string;

async function kindLike(lab: LabApiFixture): Promise<MgmtKube> {
  const kube = labKube(lab.kc, lab.server.url);
  await installCapiCrds(kube);
  await seedProviders(kube, VERSIONS);
  return kube;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-restore-kind-'));
  [moto, source, kindLab, killLab] = await Promise.all([
    startMoto(),
    startLabApi({ host: '127.0.184.1' }),
    startLabApi({ host: '127.0.185.1' }),
    startLabApi({ host: '127.0.186.1', store: gate }),
  ]);
  const src = labKube(source.kc, source.server.url);
  await installCapiCrds(src);
  await seedProviders(src, VERSIONS);
  await seedCluster(src, 'alpha');
  await Promise.all([kindLike(kindLab), kindLike(killLab)]);
  await writeAdminKubeconfig(kindLab, join(dir, 'kind-lab.kubeconfig'));
  await writeAdminKubeconfig(killLab, join(dir, 'kill-lab.kubeconfig'));
  identity = await generateIdentity();
  await writeFile(join(dir, 'key.txt'), `# created: now\n${identity}\n`, { mode: 0o600 });
  await writeFile(
    join(dir, 'credentials'),
    `[default]\naws_access_key_id = ${ACCESS_KEY}\naws_secret_access_key = ${SECRET_KEY}\n`,
    { mode: 0o600 },
  );
  const settings: S3Settings = {
    endpoint: moto.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
  };
  const client = new S3Client({ ...settings, forcePathStyle: true });
  for (const b of ['dr-fleet', 'empty']) {
    await client.send(new CreateBucketCommand({ Bucket: b }));
    await client.send(
      new PutBucketVersioningCommand({ Bucket: b, VersioningConfiguration: { Status: 'Enabled' } }),
    );
  }
  client.destroy();
  const loc = parseS3Url('s3://dr-fleet/mgmt', '--to');
  const store = openBackupStore(loc, settings);
  await runBackup({
    kube: src,
    store,
    loc,
    recipients: [await identityToRecipient(identity)],
    retention: {},
  });
  store.destroy();
});
afterAll(async () => {
  await Promise.all([moto?.stop(), source?.stop(), kindLab?.stop(), killLab?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const inventory = JSON.stringify({
  items: [
    ['cluster-api', 'CoreProvider', 'v1.14.0'],
    ['talos', 'BootstrapProvider', 'v0.6.12'],
    ['talos', 'ControlPlaneProvider', 'v0.5.12'],
    ['proxmox', 'InfrastructureProvider', 'v0.8.1'],
    ['in-cluster', 'IPAMProvider', 'v1.1.0'],
  ].map(([providerName, type, version]) => ({ kind: 'Provider', providerName, type, version })),
});

/** kind, clusterctl init and the Ready check as the real tools answer (fixtures/), kind's kubeconfig pointing at `lab`. */
function kindRules(labKubeconfig: string): Rule[] {
  return [
    { tool: 'docker', match: '^-v$', stdout: 'Docker version 27.3.1, build ce12230\n' },
    { tool: 'kind', match: '^version$', stdout: 'kind v0.32.0 go1.24.4 linux/amd64\n' },
    {
      tool: 'kubectl',
      match: '^version --client -o json$',
      stdout:
        '{"clientVersion":{"major":"1","minor":"36","gitVersion":"v1.36.1","platform":"linux/amd64"}}\n',
    },
    { tool: 'clusterctl', match: '^version -o short$', stdout: 'v1.14.0\n' },
    { tool: 'kind', match: '^get clusters$', unless: 'kind-created', stderr: 'No kind clusters found.\n' },
    { tool: 'kind', match: '^get clusters$', stdout: 'ferry-restore\n' },
    {
      tool: 'kind',
      match: '^create cluster --name ferry-restore ',
      mark: 'kind-created',
      stderr: fixture('kind-create.txt').replaceAll('ferry-bootstrap', 'ferry-restore'),
      writeFiles: [{ afterArg: '--kubeconfig', content: readFileSync(labKubeconfig, 'utf8') }],
    },
    {
      tool: 'kubectl',
      match: ' wait --for=condition=Ready nodes ',
      stdout: 'node/ferry-restore-control-plane condition met\n',
    },
    {
      tool: 'kubectl',
      match: ' get providers.clusterctl.cluster.x-k8s.io ',
      unless: 'init-done',
      code: 1,
      stderr: 'error: the server doesn\'t have a resource type "providers"\n',
    },
    { tool: 'kubectl', match: ' get providers.clusterctl.cluster.x-k8s.io ', stdout: inventory },
    {
      tool: 'clusterctl',
      match: '^init ',
      mark: 'init-done',
      stdout: fixture('clusterctl-init.txt')
        .replace('"v0.5.13"', '"v0.5.12"')
        .replace('infrastructure-proxmox" version="v0.9.0"', 'infrastructure-proxmox" version="v0.8.1"'),
    },
  ];
}

const s3 = () => ['--s3-endpoint', moto.endpoint, '--s3-credentials-file', join(dir, 'credentials')];

async function ferry(tools: Standins, ...argv: string[]) {
  const io = Object.assign(memoryIo({ cwd: dir }), { env: tools.env() });
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}

async function until(what: string, ok: () => boolean, ms = 60_000 * slowness) {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('ferry mgmt restore into kind', () => {
  it('creates kind, installs the providers at the versions the backup recorded, restores and verifies', async () => {
    const tools = new Standins(await mkdtemp(join(dir, 'tools-')));
    tools.script(kindRules(join(dir, 'kind-lab.kubeconfig')));
    const state = join(dir, 'state-ok');
    const r = await ferry(
      tools,
      'mgmt',
      'restore',
      '--from',
      's3://dr-fleet/mgmt',
      '--identity',
      join(dir, 'key.txt'),
      '--state-dir',
      state,
      ...s3(),
    );
    expect(r.err).not.toMatch(/^error/m);
    expect(r.code).toBe(0);
    expect(r.out).toContain('verify     every Cluster Ready');
    expect(r.out).toContain(
      `kind cluster ferry-restore is the management cluster now; kubeconfig ${state}/kind.kubeconfig`,
    );

    const create = tools.called('kind', /^create cluster/);
    expect(create).toHaveLength(1);
    expect(create[0]?.args).toEqual(expect.arrayContaining(['--kubeconfig', join(state, 'kind.kubeconfig')]));
    const init = tools.called('clusterctl', /^init /);
    expect(init).toHaveLength(1);
    expect(init[0]?.args.join(' ')).toContain(
      '--core cluster-api:v1.14.0 --bootstrap talos:v0.6.12 --control-plane talos:v0.5.12 --infrastructure proxmox:v0.8.1 --ipam in-cluster:v1.1.0 --wait-providers',
    );
    expect(init[0]?.env['CLUSTERCTL_DISABLE_VERSIONCHECK']).toBe('true');
    const yaml = await readFile(join(state, 'clusterctl.yaml'), 'utf8');
    expect(yaml).toContain(
      'cluster-api-control-plane-provider-talos/releases/v0.5.12/control-plane-components.yaml',
    );
    expect(yaml).toContain('cluster-api-provider-proxmox/releases/v0.8.1/infrastructure-components.yaml');
    expect(yaml).not.toContain('latest');

    const kind = labKube(kindLab.kc, kindLab.server.url);
    await kind.discoverKinds();
    const tcp = (await kind.list('controlplane.cluster.x-k8s.io/v1alpha3', 'TalosControlPlane'))[0];
    expect(tcp?.status?.['bootstrapped']).toBe(true);
    expect((await kind.list('cluster.x-k8s.io/v1beta2', 'Machine')).length).toBe(3);

    const events = StageJournal.read(join(state, 'restore.journal.sqlite')).events;
    expect(events.map((e) => `${e.stage} ${e.state}`)).toEqual([
      'kind-cluster started',
      'kind-cluster done',
      'clusterctl-config started',
      'clusterctl-config done',
      'clusterctl-init started',
      'clusterctl-init done',
      'restore started',
      'restore done',
    ]);

    // Nothing more to do: a second run changes nothing and verifies again.
    const again = await ferry(
      tools,
      'mgmt',
      'restore',
      '--from',
      's3://dr-fleet/mgmt',
      '--identity',
      join(dir, 'key.txt'),
      '--state-dir',
      state,
      ...s3(),
    );
    expect(again.code).toBe(0);
    expect(again.out).toContain('(4 stage(s) were done by an earlier run)');
    expect(tools.called('kind', /^create cluster/)).toHaveLength(1);

    // No secret on a tool's command line or environment, in the journal or in what was printed.
    const journalBytes = await readFile(join(state, 'restore.journal.sqlite'));
    const calls = JSON.stringify(tools.calls());
    for (const s of [identity, SECRET_KEY, 'kubeconfig-token-alpha', 'proxmox-secret-alpha']) {
      expect(calls.includes(s)).toBe(false);
      expect(journalBytes.includes(Buffer.from(s))).toBe(false);
      expect(`${r.out}${r.err}${again.out}${again.err}`.includes(s)).toBe(false);
    }
  });

  it('with an empty bucket: exit 2 naming ferry mgmt bootstrap, and no kind cluster', async () => {
    const tools = new Standins(await mkdtemp(join(dir, 'tools-')));
    tools.script(kindRules(join(dir, 'kind-lab.kubeconfig')));
    const r = await ferry(
      tools,
      'mgmt',
      'restore',
      '--from',
      's3://empty/mgmt',
      '--identity',
      join(dir, 'key.txt'),
      '--state-dir',
      join(dir, 'state-empty'),
      ...s3(),
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain('no backup at s3://empty/mgmt');
    expect(r.err).toContain('ferry mgmt bootstrap --config mgmt.yaml');
    expect(tools.calls()).toEqual([]);
    // --bootstrap-config runs the bootstrap instead (here: its own refusal of a file that is not there).
    const b = await ferry(
      tools,
      'mgmt',
      'restore',
      '--from',
      's3://empty/mgmt',
      '--identity',
      join(dir, 'key.txt'),
      '--state-dir',
      join(dir, 'state-empty'),
      '--bootstrap-config',
      join(dir, 'no-such-mgmt.yaml'),
      ...s3(),
    );
    expect(b.err).toContain('building a new management cluster from');
    expect(b.err).toContain('no-such-mgmt.yaml');
    expect(b.code).toBe(2);
  });

  it('kill -9 mid-restore: the next run completes the restore, kind and clusterctl init are not run again', async () => {
    const tools = new Standins(await mkdtemp(join(dir, 'tools-')));
    tools.script(kindRules(join(dir, 'kill-lab.kubeconfig')));
    const state = join(dir, 'state-kill');
    const argv = [
      'mgmt',
      'restore',
      '--from',
      's3://dr-fleet/mgmt',
      '--identity',
      join(dir, 'key.txt'),
      '--state-dir',
      state,
      ...s3(),
    ];
    // Machines come after their owners: holding them catches the restore with part of the graph created.
    gate.hold = (key) => key.includes('/machines/');
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'src/cli/main.ts'), ...argv], {
      cwd: REPO,
      env: { ...tools.env(), PATH: `${tools.bin}:${process.env['PATH'] ?? ''}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_c, sig) => r(sig)));
    try {
      await until('a Machine create to reach the kind lab', () => gate.held.length > 0);
    } catch (e) {
      child.kill('SIGKILL');
      throw new Error(`${(e as Error).message}; ferry said:\n${err}`);
    }
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    // The writes in flight land after the client died, as they may on a real API server.
    gate.hold = undefined;
    for (const release of gate.held.splice(0)) release();

    const journal = join(state, 'restore.journal.sqlite');
    expect(
      StageJournal.read(journal)
        .events.map((e) => `${e.stage} ${e.state}`)
        .slice(-2),
    ).toEqual(['clusterctl-init done', 'restore started']);
    const kill = labKube(killLab.kc, killLab.server.url);
    await kill.discoverKinds();
    const clustersBefore = await kill.list('cluster.x-k8s.io/v1beta2', 'Cluster');
    expect(clustersBefore.map((c) => c.spec?.paused)).toEqual([true]);

    const r = await ferry(tools, ...argv);
    expect(r.err).not.toMatch(/^error/m);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/\[4\/4\] restore .*\(again: it was in flight when the last run ended\)/);
    expect(r.err).toMatch(/\d+ of 18 object\(s\) were created by the interrupted run/);
    expect(r.out).toContain('(the restore an earlier run started was completed)');
    expect(r.out).toContain('verify     every Cluster Ready');
    expect(tools.called('kind', /^create cluster/)).toHaveLength(1);
    expect(tools.called('clusterctl', /^init /)).toHaveLength(1);
    const clusters = await kill.list('cluster.x-k8s.io/v1beta2', 'Cluster');
    expect(clusters.map((c) => [c.metadata.uid, c.spec?.paused])).toEqual([
      [clustersBefore[0]?.metadata.uid, undefined],
    ]);
    const machines = await kill.list('cluster.x-k8s.io/v1beta2', 'Machine');
    expect(machines).toHaveLength(3);
    // Every ownerRef points at an object that exists: the completed part was wired to the part created before the kill.
    const uids = new Set<string>();
    for (const k of await kill.discoverKinds())
      for (const o of await kill.listKind(k)) uids.add(o.metadata.uid!);
    for (const s of await kill.list('v1', 'Secret')) uids.add(s.metadata.uid!);
    for (const m of machines)
      for (const ref of m.metadata.ownerReferences ?? [])
        expect(uids.has(ref.uid), `${m.metadata.name} → ${ref.kind}`).toBe(true);
  });
});
