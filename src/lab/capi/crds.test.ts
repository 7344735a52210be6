import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { stringify } from 'yaml';
import { labKitObjects } from '../../capi/testing-kit.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { capiCrds, proxmoxMachineCrd } from './crds.js';

it('the derived ProxmoxMachine CRD takes the template’s machine spec, and only that', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-pm-crd-'));
  try {
    const file = join(dir, 'pm.yaml');
    await writeFile(file, stringify(proxmoxMachineCrd()));
    const v = new CrdValidator([file]);
    const tpl = labKitObjects().find((o) => o.kind === 'ProxmoxMachineTemplate')!;
    const machine = {
      apiVersion: tpl.apiVersion,
      kind: 'ProxmoxMachine',
      metadata: { name: 'lab-control-plane-abcde', namespace: 'lab' },
      spec: structuredClone(tpl.spec.template.spec),
      status: { ready: true },
    };
    expect(v.validate(machine)).toEqual([]);
    expect(v.validate({ ...machine, spec: { ...machine.spec, numCPUs: 4 } })).toEqual([
      expect.objectContaining({ path: '/spec', message: expect.stringMatching(/numCPUs/) }),
    ]);
    expect(capiCrds().map((c) => (c['spec'] as { names: { kind: string } }).names.kind)).not.toContain(
      'ProxmoxMachine',
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
