/** The names a capi kit gives its objects, read from capi/cluster.yaml; a file without them is bad input. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { labKitObjects } from '../capi/testing-kit.js';
import { FerryError } from '../errors.js';
import { readCapiNames } from './capi-names.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-capi-names-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function kitWith(name: string, objects: unknown[]): Promise<string> {
  await mkdir(join(dir, name, 'capi'), { recursive: true });
  await writeFile(join(dir, name, 'capi/cluster.yaml'), objects.map((o) => stringify(o)).join('---\n'));
  return join(dir, name);
}

describe('readCapiNames', () => {
  it("names the namespace, Cluster, TalosControlPlane and each MachineDeployment's kubeadm workers", async () => {
    const objs = labKitObjects('alpha').filter((o) => o.kind !== 'Secret');
    const n = await readCapiNames(await kitWith('good', objs), 'good');
    expect(n).toMatchObject({ namespace: 'alpha', cluster: 'lab', controlPlane: 'lab-control-plane' });
    expect(n.machineDeployments).toEqual([{ name: expect.any(String), replaces: ['worker-1'] }]);
  });

  it('a file without a TalosControlPlane is bad input naming the file', async () => {
    const objs = labKitObjects('beta').filter((o) => o.kind !== 'Secret' && o.kind !== 'TalosControlPlane');
    const err = await readCapiNames(await kitWith('bad', objs), 'bad').then(
      () => undefined,
      (e: unknown) => e as FerryError,
    );
    expect(err).toBeInstanceOf(FerryError);
    expect(err?.kind).toBe('input');
    expect(err?.message).toContain('has no TalosControlPlane');
  });
});
