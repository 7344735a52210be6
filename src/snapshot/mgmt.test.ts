/**
 * The `mgmt` part: read from a files directory's mgmt/, saved as mgmt.json and read back equal,
 * with every Secret value gone before anything is stored, and bad objects named by file and line.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejected } from '../testing-errors.js';
import { loadSnapshot } from './load.js';
import { readSavedSnapshot, saveSnapshot } from './store.js';

const FIXTURE = join(import.meta.dirname, 'fixtures/mgmt-hazards/mgmt');
let tmp: string;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ferry-mgmt-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function filesDir(name: string, extra: Record<string, string> = {}): Promise<string> {
  const dir = join(tmp, name);
  await mkdir(join(dir, 'resources'), { recursive: true });
  await writeFile(
    join(dir, 'resources', 'nodes.yaml'),
    'apiVersion: v1\nkind: Node\nmetadata: { name: cp-1, labels: { node-role.kubernetes.io/control-plane: "" } }\n',
  );
  await cp(FIXTURE, join(dir, 'mgmt'), { recursive: true });
  for (const [f, text] of Object.entries(extra)) await writeFile(join(dir, 'mgmt', f), text);
  return dir;
}

describe('snapshot part mgmt', () => {
  it('is read from mgmt/, saved as mgmt.json and read back equal, without any Secret value', async () => {
    const secret = 'c3VwZXItc2VjcmV0LXRva2Vu';
    const dir = await filesDir('ok', {
      'extra.yaml': `apiVersion: v1\nkind: Secret\nmetadata:\n  name: lab-talos\n  namespace: lab\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: '{"data":{"bundle":"${secret}"}}'\ndata:\n  bundle: ${secret}\nstringData:\n  extra: plain-secret\n`,
    });
    const s = await loadSnapshot(dir);
    expect(s.manifest.parts).toContain('mgmt');
    expect(s.mgmt!.crds).toEqual([
      {
        name: 'clusters.cluster.x-k8s.io',
        group: 'cluster.x-k8s.io',
        kind: 'Cluster',
        versions: [
          { name: 'v1beta1', served: false, storage: false },
          { name: 'v1beta2', served: true, storage: true },
        ],
      },
    ]);
    const talos = s.mgmt!.objects.find((o) => o.metadata.name === 'lab-talos')!;
    expect(talos['data']).toEqual({ bundle: '', extra: '' });
    expect(talos.metadata.annotations).toEqual({});
    expect(s.mgmt!.objects.map((o) => o.kind)).toContain('TalosControlPlane');
    // Deployments become the controllers they are; other Deployments, images and environments are dropped.
    expect(s.mgmt!.objects.some((o) => o.kind === 'Deployment')).toBe(false);
    expect(s.mgmt!.controllers).toEqual({
      kind: 'observed',
      deployments: [
        ['capi-system', 'capi-controller-manager', 'cluster-api', 1, 'on', 'none'],
        ['cabpt-system', 'cabpt-controller-manager', 'bootstrap-talos', 2, 'on', 'hostname'],
        ['cacppt-system', 'cacppt-controller-manager', 'control-plane-talos', 2, 'off', 'hostname'],
        ['capmox-system', 'capmox-controller-manager', 'infrastructure-proxmox', 2, 'on', 'none'],
        [
          'capi-operator-system',
          'capi-operator-cluster-api-operator',
          'cluster-api-operator',
          1,
          'on',
          'none',
        ],
      ].map(([namespace, name, component, replicas, leaderElection, spread]) => ({
        namespace,
        name,
        component,
        replicas,
        leaderElection,
        spread,
      })),
    });
    const out = join(tmp, 'saved');
    await saveSnapshot(s, out);
    const text = await readFile(join(out, 'mgmt.json'), 'utf8');
    expect(text).not.toContain(secret);
    expect(text).not.toContain('plain-secret');
    expect(text).not.toContain('fixture-env-value-not-kept');
    expect(text).not.toContain('cluster-api-controller:v1.16.0');
    const back = await readSavedSnapshot(out);
    expect(back.mgmt).toEqual(s.mgmt);
    expect(back.manifest.parts).toContain('mgmt');
  });

  it('a mgmt.json whose controllers are malformed is refused; one without them reads as not read', async () => {
    const s = await loadSnapshot(await filesDir('controllers'));
    const out = join(tmp, 'saved-controllers');
    await saveSnapshot(s, out);
    const saved = JSON.parse(await readFile(join(out, 'mgmt.json'), 'utf8'));
    await writeFile(join(out, 'mgmt.json'), JSON.stringify({ ...saved, controllers: { kind: 'guessed' } }));
    expect((await rejected(readSavedSnapshot(out))).message).toMatch(/not a management-cluster snapshot/);
    delete saved.controllers;
    await writeFile(join(out, 'mgmt.json'), JSON.stringify(saved));
    expect((await readSavedSnapshot(out)).mgmt!.controllers).toBeUndefined();
  });

  it('an object without a kind is an input error naming file and line', async () => {
    const dir = await filesDir('bad', {
      'zz-bad.yaml': 'apiVersion: v1\nkind: Secret\nmetadata: { name: a }\n---\nmetadata: { name: b }\n',
    });
    const err = await rejected(loadSnapshot(dir));
    expect(err).toMatchObject({
      kind: 'input',
      location: { file: join(dir, 'mgmt', 'zz-bad.yaml'), line: 5 },
    });
  });
});
