import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { readKitContents } from './read.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-kit-read-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function kitWith(files: { path: string; secret?: boolean; text?: string }[]): Promise<void> {
  await writeFile(
    join(dir, 'provenance.json'),
    JSON.stringify({
      kind: 'FerryKitProvenance',
      version: 1,
      files: files.map((f) => ({ path: f.path, purpose: 'x', step: 1, secret: f.secret === true })),
    }),
  );
  for (const f of files) {
    if (f.text === undefined) continue;
    await mkdir(join(dir, f.path, '..'), { recursive: true });
    await writeFile(join(dir, f.path), f.text);
  }
}

async function failure(p: Promise<unknown>): Promise<FerryError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FerryError);
  expect((err as FerryError).kind).toBe('input');
  return err as FerryError;
}

describe('readKitContents', () => {
  it('reads the text of every listed file that is not secret, and never touches a secret one', async () => {
    // The secret file is listed but not even on disk: reading it would fail.
    await kitWith([
      { path: 'talos/controlplane-patch.yaml', text: 'cluster: {}\n' },
      { path: 'kubeadm/encryption/phase2.yaml', secret: true },
    ]);
    const kit = await readKitContents(dir, 'kit');
    expect([...kit.text.keys()]).toEqual(['talos/controlplane-patch.yaml']);
    expect(kit.text.get('talos/controlplane-patch.yaml')).toBe('cluster: {}\n');
    expect(kit.summary.files.map((f) => [f.path, f.secret])).toEqual([
      ['talos/controlplane-patch.yaml', false],
      ['kubeadm/encryption/phase2.yaml', true],
    ]);
    expect(kit.summary.path).toBe('kit');
  });

  it('refuses a listed file that is missing, naming it', async () => {
    await kitWith([{ path: 'cilium/agents.sh' }]);
    const err = await failure(readKitContents(dir, 'kit'));
    expect(err.message).toBe('the kit file kit/cilium/agents.sh does not exist');
    expect(err.location?.file).toBe('kit/cilium/agents.sh');
  });

  it('refuses a provenance.json that points outside the kit', async () => {
    await kitWith([{ path: '../../etc/hostname' }]);
    const err = await failure(readKitContents(dir, 'kit'));
    expect(err.message).toContain('a path outside the kit');
    expect(err.location).toMatchObject({ file: 'kit/provenance.json', field: 'files' });
  });

  it('refuses what is not a kit: no directory, no provenance.json, another kind', async () => {
    expect((await failure(readKitContents(join(dir, 'nope'), 'nope'))).message).toBe(
      '--kit nope does not exist',
    );
    expect((await failure(readKitContents(dir, 'kit'))).location?.file).toBe('kit/provenance.json');
    await writeFile(join(dir, 'provenance.json'), '{"kind":"SomethingElse"}');
    expect((await failure(readKitContents(dir, 'kit'))).message).toBe(
      'provenance.json is not a ferry kit provenance file',
    );
  });

  it('names the line of a JSON syntax error in a kit file', async () => {
    await writeFile(join(dir, 'provenance.json'), '{\n  "kind": "FerryKitProvenance",\n  "files": [\n');
    const err = await failure(readKitContents(dir, 'kit'));
    expect(err.location?.file).toBe('kit/provenance.json');
    expect(err.location?.line).toBe(4);
  });

  it('refuses provenance fields of the wrong type, naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ files: {} }, 'files'],
      [{ files: [{ path: 'a', step: 'one' }] }, 'files[0].step'],
      [{ files: [{ path: 'a', secret: 'yes' }] }, 'files[0].secret'],
      [{ files: [{ purpose: 'no path' }] }, 'files[0].path'],
      [{ files: [], target: { talosVersion: 1.13 } }, 'target.talosVersion'],
      [{ files: [], target: 'v1.13' }, 'target'],
      [{ files: [], snapshot: { source: ['x'] } }, 'snapshot.source'],
    ];
    for (const [doc, field] of cases) {
      await writeFile(join(dir, 'provenance.json'), JSON.stringify({ kind: 'FerryKitProvenance', ...doc }));
      const err = await failure(readKitContents(dir, 'kit'));
      expect(err.location, field).toMatchObject({ file: 'kit/provenance.json', field });
    }
  });

  it('refuses a kubeadm step whose nodes or after is not a list of names', async () => {
    const step = { id: 's', title: 't', scope: 'cluster', apply: 'a', verify: 'v', undo: 'u' };
    for (const [extra, field] of [
      [{ nodes: 'cp-1' }, 'steps[0].nodes'],
      [{ after: [1] }, 'steps[0].after'],
    ] as const) {
      await kitWith([
        {
          path: 'kubeadm/steps.json',
          text: JSON.stringify({ kind: 'FerryKubeadmPrep', steps: [{ ...step, ...extra }] }),
        },
      ]);
      const err = await failure(readKitContents(dir, 'kit'));
      expect(err.location).toMatchObject({ file: 'kit/kubeadm/steps.json', field });
    }
  });

  it('names the line of a YAML syntax error in the health-probe RBAC', async () => {
    await kitWith([
      { path: 'rbac/health-probe.yaml', text: 'kind: ServiceAccount\nmetadata:\n  name: "probe\n' },
    ]);
    const err = await failure(readKitContents(dir, 'kit'));
    expect(err.location?.file).toBe('kit/rbac/health-probe.yaml');
    expect(err.location?.line).toBeGreaterThan(0);
  });
});
