import { describe, expect, it } from 'vitest';
import { memoryKit } from '../audit/testing.js';
import { targetMismatch } from './match.js';

const kit = (target: Partial<ReturnType<typeof memoryKit>['summary']['target']>) => {
  const k = memoryKit({});
  return { ...k.summary, target: { ...k.summary.target, ...target } };
};
const now = {
  talosVersion: 'v1.13.9',
  kubernetesVersion: 'v1.32.4',
  kubeprism: 'on',
  provisioner: 'manual',
  infra: 'generic',
} as const;

describe('targetMismatch', () => {
  it('names every target setting the kit was generated for differently', () => {
    expect(
      targetMismatch(kit({ talosVersion: 'v1.14.0-rc.1', kubeprism: 'off', infra: 'proxmox' }), now),
    ).toEqual(['Talos v1.14.0-rc.1 (now v1.13.9)', 'KubePrism off (now on)', 'infra proxmox (now generic)']);
  });

  it('is empty for the same target, and for settings the kit does not record', () => {
    expect(targetMismatch(kit({ ...now }), now)).toEqual([]);
    expect(targetMismatch(kit({}), now)).toEqual([]);
  });
});
