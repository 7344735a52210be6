import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { rejected } from '../testing-errors.js';
import { loadSnapshot } from './load.js';
import { emptyResources, type KubeObject, type Snapshot } from './model.js';
import { openResourceFiles, readSavedSnapshot, saveSnapshot, writeSnapshotParts } from './store.js';
import { type FilesCluster, makeFilesCluster } from './testing-files-cluster.js';

describe('saved snapshots', () => {
  let fx: FilesCluster;
  let snapshot: Snapshot;
  let saved: string;
  beforeAll(async () => {
    fx = await makeFilesCluster();
    snapshot = await loadSnapshot(fx.dir, { now: new Date('2025-03-01T12:00:00Z') });
    saved = join(fx.tmp, 'saved');
    await saveSnapshot(snapshot, saved);
  });
  afterAll(async () => {
    await fx.cleanup();
  });

  it('round-trips: what is read back equals what was saved', async () => {
    const back = await readSavedSnapshot(saved);
    // Strictly: no property lost, turned into undefined or into another class on the way.
    expect(back).toStrictEqual(snapshot);
    // The exact uint64 member IDs survive.
    expect(back.etcd?.members[1]?.id).toBe('17115582512862521359');
    // loadSnapshot recognises a saved snapshot by its manifest.
    expect(await loadSnapshot(saved)).toEqual(snapshot);
  });

  it('writes the documented layout, owner-only, without private keys', async () => {
    for (const f of ['manifest.json', 'kubeadm.json', 'components.json', 'pki.json', 'served-certs.json']) {
      expect((await stat(join(saved, f))).mode & 0o777).toBe(0o600);
    }
    for (const f of [
      'encryption.json',
      'etcd.json',
      'audit-log.json',
      'resources/pods.json',
      'resources/bootstrapTokens.json',
    ]) {
      await stat(join(saved, f));
    }
    expect((await stat(saved)).mode & 0o777).toBe(0o700);
    const pki = await readFile(join(saved, 'pki.json'), 'utf8');
    expect(pki).not.toContain('PRIVATE KEY');
    const pods = await readFile(join(saved, 'resources', 'pods.json'), 'utf8');
    expect(pods.split('\n')[0]).toBe('[');
    expect(JSON.parse(pods)).toHaveLength(2);
  });

  describe("a live snapshot's GET /version", () => {
    const live = (): Snapshot => ({
      ...snapshot,
      manifest: {
        ...snapshot.manifest,
        source: { kind: 'live', server: 'https://10.0.0.10:6443', context: 'admin@lab' },
        parts: [...snapshot.manifest.parts, 'server-version'],
      },
      serverVersion: {
        source: { kind: 'api', server: 'https://10.0.0.10:6443', path: '/version' },
        info: {
          major: '1',
          minor: '36',
          emulationMajor: '1',
          emulationMinor: '36',
          gitVersion: 'v1.36.2',
          platform: 'linux/amd64',
        },
      },
    });

    it('round-trips in server-version.json, owner-only', async () => {
      const s = live();
      const dir = join(fx.tmp, 'live-version');
      await saveSnapshot(s, dir);
      expect((await stat(join(dir, 'server-version.json'))).mode & 0o777).toBe(0o600);
      expect(await readSavedSnapshot(dir)).toStrictEqual(s);
    });

    it('is absent from a snapshot saved before ferry recorded it, which still loads', async () => {
      const dir = join(fx.tmp, 'live-version-older');
      await saveSnapshot(live(), dir);
      // What an older ferry wrote: no file, no part.
      await rm(join(dir, 'server-version.json'));
      const m = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
      m.parts = m.parts.filter((p: string) => p !== 'server-version');
      await writeFile(join(dir, 'manifest.json'), JSON.stringify(m));
      const back = await readSavedSnapshot(dir);
      expect(back.serverVersion).toBeUndefined();
      expect(back.manifest.parts).not.toContain('server-version');
      expect(back.resources).toEqual(snapshot.resources);
    });

    it('without its manifest.json is refused as a saved snapshot missing a part, naming the manifest', async () => {
      const dir = join(fx.tmp, 'no-manifest');
      await saveSnapshot(snapshot, dir);
      await rm(join(dir, 'manifest.json'));
      const err = await loadSnapshot(dir).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FerryError);
      expect((err as FerryError).message).toContain('looks like a saved snapshot (it has kubeadm.json)');
      expect((err as FerryError).location?.file).toBe(join(dir, 'manifest.json'));
    });

    it('is validated like every other file', async () => {
      const dir = join(fx.tmp, 'live-version-damaged');
      await saveSnapshot(live(), dir);
      const file = join(dir, 'server-version.json');
      const v = JSON.parse(await readFile(file, 'utf8'));
      v.info.gitVersion = 136;
      await writeFile(file, JSON.stringify(v));
      const e = await rejected(readSavedSnapshot(dir), 2);
      expect(e.location).toEqual({ file, field: 'info.gitVersion' });
      await rm(file);
      const e2 = await rejected(readSavedSnapshot(dir), 2);
      expect(e2.message).toContain('lists part "server-version" but server-version.json is missing');
    });
  });

  it('refuses to replace an existing directory unless forced', async () => {
    const e = await rejected(saveSnapshot(snapshot, saved), 2);
    expect(e.kind).toBe('usage');
    const changed: Snapshot = { ...snapshot, manifest: { ...snapshot.manifest, warnings: ['again'] } };
    await saveSnapshot(changed, saved, { force: true });
    expect((await readSavedSnapshot(saved)).manifest.warnings).toEqual(['again']);
    await saveSnapshot(snapshot, saved, { force: true });
  });

  it('round-trips many objects and reads a hand-formatted resource file', async () => {
    const many: Snapshot = {
      ...snapshot,
      resources: {
        ...snapshot.resources,
        pods: Array.from(
          { length: 5000 },
          (_, i): KubeObject => ({
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: `p${i}`, namespace: 'ns', labels: { 'line\nbreak': 'a,\n]' } },
            spec: { nodeName: `n${i % 7}` },
          }),
        ),
      },
    };
    const dir = join(fx.tmp, 'many');
    await saveSnapshot(many, dir);
    expect(await readSavedSnapshot(dir)).toEqual(many);
    const pretty = join(dir, 'resources', 'nodes.json');
    await writeFile(pretty, JSON.stringify(snapshot.resources.nodes, null, 2));
    expect((await readSavedSnapshot(dir)).resources.nodes).toEqual(snapshot.resources.nodes);
  });

  it('streamed resource files: a checkpoint cuts back what came after it, also past a flush', async () => {
    const dir = join(fx.tmp, 'streamed');
    await mkdir(dir);
    const files = await openResourceFiles(dir);
    const pod = (name: string, pad = ''): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'ns', ...(pad && { annotations: { pad } }) },
    });
    files.add('pods', pod('kept'));
    const rewind = files.checkpoint();
    // Over 1 MiB after the checkpoint: some of it reached the file before the rewind.
    for (let i = 0; i < 300; i++) files.add('pods', pod(`dropped-${i}`, 'x'.repeat(4096)));
    files.add('nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'dropped' } });
    rewind();
    expect(files.counts.pods).toBe(1);
    files.add('pods', pod('after'));
    files.close();
    await writeSnapshotParts({ ...snapshot, resources: emptyResources() }, dir);
    const back = await readSavedSnapshot(dir);
    expect(back.resources.pods.map((p) => p.metadata.name)).toEqual(['kept', 'after']);
    expect(back.resources.nodes).toEqual([]);
    expect(await readFile(join(dir, 'resources', 'pods.json'), 'utf8')).toBe(
      `[\n${JSON.stringify(pod('kept'))},\n${JSON.stringify(pod('after'))}\n]\n`,
    );
  });

  describe('validation names the file and the field', () => {
    const copy = async (name: string) => {
      const dir = join(fx.tmp, name);
      await saveSnapshot(snapshot, dir, { force: true });
      return dir;
    };

    it('a format version this ferry does not read', async () => {
      const dir = await copy('v3');
      const m = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
      await writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...m, formatVersion: 3 }));
      const e = await rejected(readSavedSnapshot(dir), 2);
      expect(e.message).toContain('unsupported snapshot format version 3');
      expect(e.message).toContain('this ferry reads format versions 1 to 2');
      expect(e.location).toEqual({ file: join(dir, 'manifest.json'), field: 'formatVersion' });
      expect(e.remediation).toContain('ferry snapshot');
    });

    it('format 1: the lists and reads its warnings say were refused or unserved read as not observed', async () => {
      const dir = await copy('v1');
      const m = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
      const { unobserved: _u, partial: _p, ...v1 } = m;
      const warnings = [
        'v1 nodes: forbidden for this user (HTTP 403); left out of the snapshot — use an admin kubeconfig',
        'v1 secrets in kube-system: forbidden for this user (HTTP 403); left out of the snapshot — use an admin kubeconfig',
        'batch/v1 cronjobs: not served by this API server (HTTP 404); left out of the snapshot',
        'ConfigMap kube-system/kubeadm-config: forbidden for this user (HTTP 403); left out of the snapshot',
        'ConfigMap kube-system/kubeadm-config not found: no kubeadm ClusterConfiguration in the snapshot (is this a kubeadm cluster?)',
        'served certificate of 10.0.0.1:6443 (endpoint): ECONNREFUSED',
      ];
      await writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...v1, formatVersion: 1, warnings }));
      const back = await readSavedSnapshot(dir);
      expect(back.manifest.formatVersion).toBe(2);
      expect(back.manifest.unobserved?.map((n) => [n.input, n.reason, n.verb, n.group, n.resource])).toEqual([
        ['nodes', 'forbidden', 'list', '', 'nodes'],
        ['bootstrapTokens', 'forbidden', 'list', '', 'secrets'],
        ['cronjobs', 'not-served', 'list', 'batch', 'cronjobs'],
        ['configmap kube-system/kubeadm-config', 'forbidden', 'get', '', 'configmaps'],
      ]);
      expect(back.manifest.warnings).toEqual(warnings);
    });

    it('an unobserved record that names no input a snapshot has', async () => {
      const dir = await copy('bad-unobserved');
      const m = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
      const unobserved = [
        { input: 'secrets', reason: 'forbidden', verb: 'list', group: '', resource: 'secrets', message: 'x' },
      ];
      await writeFile(join(dir, 'manifest.json'), JSON.stringify({ ...m, unobserved }));
      const e = await rejected(readSavedSnapshot(dir), 2);
      expect(e.location).toEqual({ file: join(dir, 'manifest.json'), field: 'unobserved[0].input' });
      expect(e.message).toContain('bootstrapTokens');
    });

    it('a missing resources file reads as an empty list', async () => {
      const dir = await copy('noresource');
      await rm(join(dir, 'resources', 'nodes.json'));
      const back = await readSavedSnapshot(dir);
      expect(back.resources.nodes).toEqual([]);
      expect(back.resources.pods).toEqual(snapshot.resources.pods);
    });

    it('a manifest naming a part whose file is missing', async () => {
      const dir = await copy('nopart');
      await rm(join(dir, 'etcd.json'));
      const e = await rejected(readSavedSnapshot(dir), 2);
      expect(e.message).toContain('lists part "etcd" but etcd.json is missing');
    });

    it('a damaged field deep inside a file', async () => {
      const dir = await copy('damaged');
      const etcd = JSON.parse(await readFile(join(dir, 'etcd.json'), 'utf8'));
      etcd.members[1].id = Number('17115582512862521359');
      await writeFile(join(dir, 'etcd.json'), JSON.stringify(etcd));
      const e = await rejected(readSavedSnapshot(dir), 2);
      expect(e.location).toEqual({ file: join(dir, 'etcd.json'), field: 'members[1].id' });
    });

    it('a resource item that is not a Kubernetes object', async () => {
      const dir = await copy('item');
      await writeFile(
        join(dir, 'resources', 'services.json'),
        '[\n{"apiVersion":"v1","kind":"Service","metadata":{}}\n]\n',
      );
      const e = await rejected(readSavedSnapshot(dir), 2);
      expect(e.location).toEqual({
        file: join(dir, 'resources', 'services.json'),
        field: '[0].metadata.name',
      });
    });

    it('malformed JSON and a missing manifest', async () => {
      const dir = await copy('badjson');
      await writeFile(join(dir, 'kubeadm.json'), '{\n  "nodeConfigurations": [\n}');
      const e = await rejected(readSavedSnapshot(dir), 2);
      expect(e.location).toMatchObject({ file: join(dir, 'kubeadm.json'), line: 3, column: 1 });
      await rm(join(dir, 'manifest.json'));
      const e2 = await rejected(readSavedSnapshot(dir), 2);
      expect(e2.message).toContain('not a saved snapshot');
    });

    it('a snapshot file that smuggles in a token secret', async () => {
      const dir = await copy('secret');
      const file = join(dir, 'resources', 'bootstrapTokens.json');
      const tokens = JSON.parse(await readFile(file, 'utf8'));
      tokens[0].secret = '0123456789abcdef';
      await writeFile(file, JSON.stringify(tokens));
      const e = await rejected(readSavedSnapshot(dir), 2);
      expect(e.location?.field).toBe('[0].secret');
      expect(e.message).not.toContain('0123456789abcdef');
    });
  });
});
