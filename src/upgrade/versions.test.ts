import { describe, expect, it } from 'vitest';
import { newestKnownPatch } from '../knowledge/kubernetes.js';
import { findTalosRelease } from '../knowledge/talos.js';
import { kubeletSkew, kubernetesPath, talosPath, talosWindow } from './versions.js';

const stops = (p: ReturnType<typeof kubernetesPath> | ReturnType<typeof talosPath>) =>
  p.kind === 'ok' ? p.stops.map((s) => ('version' in s ? s.version : s.release.version)) : p.blocker.kind;

describe('Kubernetes: one minor at a time', () => {
  it('allows a patch and a next-minor jump as one stage', () => {
    expect(stops(kubernetesPath('v1.32.4', 'v1.32.9'))).toEqual(['v1.32.9']);
    expect(stops(kubernetesPath('v1.32.4', 'v1.33.2'))).toEqual(['v1.33.2']);
  });

  it('a skip plans every intermediate minor at the newest patch ferry knows, the target last', () => {
    const p = kubernetesPath('v1.32.4', 'v1.36.1');
    expect(stops(p)).toEqual([
      newestKnownPatch('1.33'),
      newestKnownPatch('1.34'),
      newestKnownPatch('1.35'),
      'v1.36.1',
    ]);
    expect(stops(p)).toEqual(['v1.33.6', 'v1.34.1', 'v1.35.4', 'v1.36.1']);
    if (p.kind !== 'ok') throw new Error('refused');
    expect(p.stops[0]!.source).toContain('newest 1.33 patch ferry knows');
    expect(p.stops.at(-1)!.source).toBe('the target (--kubernetes)');
  });

  it('an intermediate minor ferry has no patch of goes to .0, and says so', () => {
    const p = kubernetesPath('v1.29.3', 'v1.31.0');
    if (p.kind !== 'ok') throw new Error('refused');
    expect(p.stops.map((s) => s.version)).toEqual(['v1.30.0', 'v1.31.0']);
    expect(p.stops[0]!.source).toContain('ferry knows no 1.30 patch');
  });

  it('nothing to do at the same version', () => {
    expect(stops(kubernetesPath('v1.32.4', 'v1.32.4'))).toEqual([]);
  });

  it('refuses a downgrade, by patch or by minor', () => {
    expect(stops(kubernetesPath('v1.32.4', 'v1.32.3'))).toBe('downgrade');
    expect(stops(kubernetesPath('v1.32.4', 'v1.31.9'))).toBe('downgrade');
  });

  it('refuses malformed and pre-release targets and a major jump', () => {
    for (const t of ['1.33', 'v1.33.x', 'v1.33.0-rc.1', 'latest', ''])
      expect(stops(kubernetesPath('v1.32.4', t)), t).toBe('version-unknown');
    expect(stops(kubernetesPath('v1.32.4', 'v2.0.0'))).toBe('version-unknown');
    expect(stops(kubernetesPath('garbage', 'v1.33.0'))).toBe('version-unknown');
  });
});

describe('kubelet skew (three minors behind since 1.28, two before, never ahead)', () => {
  it('allows up to three minors behind an apiserver of 1.28 or newer', () => {
    expect(kubeletSkew('p', 'v1.30.0', 'v1.33.1')).toBeUndefined();
    expect(kubeletSkew('p', 'v1.29.0', 'v1.33.1')).toMatchObject({ kind: 'kubelet-skew', maxBehind: 3 });
  });
  it('two before 1.28', () => {
    expect(kubeletSkew('p', 'v1.25.0', 'v1.27.1')).toBeUndefined();
    expect(kubeletSkew('p', 'v1.24.0', 'v1.27.1')).toMatchObject({ maxBehind: 2 });
  });
  it('a kubelet newer than the apiserver is refused', () => {
    expect(kubeletSkew('p', 'v1.34.0', 'v1.33.1')).toMatchObject({ kind: 'kubelet-skew' });
  });
});

describe("the Talos line's Kubernetes window", () => {
  const t113 = findTalosRelease('v1.13.9')!;
  it('holds inside, refuses below and above', () => {
    expect(talosWindow(t113, 'v1.31.0')).toBeUndefined();
    expect(talosWindow(t113, 'v1.36.3')).toBeUndefined();
    expect(talosWindow(t113, 'v1.30.9')).toMatchObject({ kind: 'kubernetes-outside-talos-window' });
    expect(talosWindow(t113, 'v1.37.0')).toMatchObject({ window: { min: '1.31.0', maxMinor: '1.36' } });
  });
});

describe('Talos: through the latest patch of every minor', () => {
  it('next minor from the latest patch: one stop', () => {
    expect(stops(talosPath('v1.12.11', 'v1.13.9'))).toEqual(['v1.13.9']);
  });
  it('from an older patch: its line latest first, then each minor, then the target', () => {
    expect(stops(talosPath('v1.10.2', 'v1.13.0'))).toEqual(['v1.10.9', 'v1.11.6', 'v1.12.11', 'v1.13.0']);
  });
  it('a patch upgrade within the line', () => {
    expect(stops(talosPath('v1.13.0', 'v1.13.9'))).toEqual(['v1.13.9']);
  });
  it('a line only (the TalosConfig) plans the target', () => {
    expect(stops(talosPath('v1.12', 'v1.13'))).toEqual(['v1.13.9']);
  });
  it('same release: nothing to do', () => {
    expect(stops(talosPath('v1.13.9', 'v1.13.9'))).toEqual([]);
  });
  it('refuses a downgrade', () => {
    expect(stops(talosPath('v1.13.9', 'v1.13.0'))).toBe('downgrade');
    expect(stops(talosPath('v1.13.0', 'v1.12.11'))).toBe('downgrade');
  });
  it('refuses a line ferry does not know, as target or as a stop on the way', () => {
    expect(stops(talosPath('v1.13.9', 'v1.16.0'))).toBe('talos-line-unknown');
    expect(stops(talosPath('v1.8.4', 'v1.11.6'))).toBe('talos-line-unknown');
  });
  it('refuses a malformed target', () => {
    expect(stops(talosPath('v1.13.9', 'v1.x'))).toBe('version-unknown');
    expect(stops(talosPath('nonsense', 'v1.13.9'))).toBe('version-unknown');
  });
  it('a current release below a stop\u2019s floor is refused (ferry tables no line that old)', () => {
    // v1.10 upgrades from 1.8.0 or newer; v1.7.x to v1.10 would pass through v1.8, v1.9 ferry does not table.
    expect(stops(talosPath('v1.7.7', 'v1.10.9'))).toBe('talos-line-unknown');
    expect(stops(talosPath('v1.9.6', 'v1.10.9'))).toEqual(['v1.10.9']);
  });
});
