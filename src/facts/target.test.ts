import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { findTalosRelease } from '../knowledge/talos.js';
import { kubernetesInTalosWindow, resolveTarget, targetInputFromFlags } from './target.js';

describe('target', () => {
  it('defaults are explicit and say where they came from', () => {
    const t = resolveTarget({}, 'v1.32.4');
    expect(t).toMatchObject({
      talosVersion: 'v1.13.9',
      kubernetesVersion: 'v1.32.4',
      kubeprism: 'on',
      provisioner: 'manual',
      infra: 'generic',
    });
    expect(t.talos.etcdVersion).toBe('3.6.12');
    expect(t.choices.map((c) => [c.field, c.origin])).toEqual([
      ['talosVersion', 'default'],
      ['kubernetesVersion', 'cluster'],
      ['kubeprism', 'default'],
      ['provisioner', 'default'],
      ['infra', 'default'],
    ]);
    expect(t.choices.every((c) => c.note.length > 0)).toBe(true);
  });

  it('flags override defaults; a minor resolves to the newest release ferry knows of that line', () => {
    const t = resolveTarget(
      targetInputFromFlags({
        'talos-version': '1.12',
        'kubernetes-version': '1.33.1',
        kubeprism: 'off',
        provisioner: 'capi',
        infra: 'proxmox',
      }),
      'v1.32.4',
    );
    expect(t).toMatchObject({
      talosVersion: 'v1.12.11',
      kubernetesVersion: 'v1.33.1',
      kubeprism: 'off',
      provisioner: 'capi',
      infra: 'proxmox',
    });
    expect(t.choices.find((c) => c.field === 'talosVersion')?.note).toMatch(/1.12 line/);
    expect(resolveTarget({ talosVersion: 'v1.14' }).talosVersion).toBe('v1.14.0-rc.1');
    expect(resolveTarget({ talosVersion: 'v1.10.0' }).talos.etcdVersion).toBe('3.5.21');
  });

  it('unknown versions and values are usage errors (exit 2) that list what is known', () => {
    const err = (() => {
      try {
        resolveTarget({ talosVersion: 'v1.9' });
      } catch (e) {
        return e;
      }
    })() as FerryError;
    expect(err).toBeInstanceOf(FerryError);
    expect(err.exitCode).toBe(2);
    expect(err.remediation).toMatch(/v1.10, v1.11, v1.12, v1.13, v1.14/);
    expect(() => resolveTarget({ talosVersion: 'v1.9.3' })).toThrow(/v1.9 line, which ferry does not know/);
    expect(() => resolveTarget({ talosVersion: '1.13.x' })).toThrow(/is not a Talos version/);
    expect(() => resolveTarget({ talosVersion: 'v1.13.4-beta.0' })).toThrow(
      /pre-release ferry has no facts of/,
    );
    expect(() => resolveTarget({ kubernetesVersion: 'latest' })).toThrow(/not a version/);
    expect(() => targetInputFromFlags({ kubeprism: 'maybe' })).toThrow(/--kubeprism must be one of on, off/);
    expect(() => targetInputFromFlags({ provisioner: 'terraform' })).toThrow(/manual, exec, capi/);
  });

  it('an untabled patch of a known line is accepted and says which facts it assumed', () => {
    const t = resolveTarget({ talosVersion: 'v1.10.6' });
    expect(t.talosVersion).toBe('v1.10.6');
    expect(t.talos).toMatchObject({ assumedFrom: 'v1.10.0', etcdVersion: '3.5.21' });
    expect(t.choices[0]).toMatchObject({ field: 'talosVersion', value: 'v1.10.6', origin: 'flag' });
    expect(t.choices[0]!.note).toMatch(
      /^Talos v1.10.6 is not tabled; assumed the facts of v1.10.0 \(etcd 3.5.21, /,
    );
    // A tabled patch, with or without its "v", is taken as given.
    expect(resolveTarget({ talosVersion: '1.10.9' }).choices[0]!.note).toBe('as given');
  });

  it('unknown cluster version leaves the Kubernetes target undefined and says how to set it', () => {
    const t = resolveTarget({});
    expect(t.kubernetesVersion).toBeUndefined();
    expect(t.choices[1]?.note).toMatch(/--kubernetes-version/);
  });

  it('Kubernetes windows per Talos release', () => {
    const t113 = findTalosRelease('v1.13')!;
    expect(kubernetesInTalosWindow(t113, 'v1.31.0')).toBe(true);
    expect(kubernetesInTalosWindow(t113, 'v1.36.9')).toBe(true);
    expect(kubernetesInTalosWindow(t113, 'v1.30.14')).toBe(false);
    expect(kubernetesInTalosWindow(t113, 'v1.37.0')).toBe(false);
    expect(kubernetesInTalosWindow(findTalosRelease('1.14')!, 'v1.32.4')).toBe(true);
  });
});
