import { expect, it } from 'vitest';
import { labKitObjects } from '../../capi/testing-kit.js';
import { CrdValidator } from '../../generate/schema/crd.js';
import { capiCrds } from './crds.js';

it('serves the upstream ProxmoxMachine CRD (CAPMOX), which takes the template’s machine spec, and only that', () => {
  expect(capiCrds().map((c) => (c['spec'] as { names: { kind: string } }).names.kind)).toContain(
    'ProxmoxMachine',
  );
  const v = CrdValidator.fromSchemas();
  const tpl = labKitObjects().find((o) => o.kind === 'ProxmoxMachineTemplate')!;
  const machine = {
    apiVersion: tpl.apiVersion,
    kind: 'ProxmoxMachine',
    metadata: { name: 'lab-control-plane-abcde', namespace: 'lab' },
    spec: structuredClone(tpl.spec.template.spec),
  };
  expect(v.validate(machine)).toEqual([]);
  expect(v.validate({ ...machine, spec: { ...machine.spec, numCPUs: 4 } })).not.toEqual([]);
});
