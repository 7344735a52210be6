import { describe, expect, it } from 'vitest';
import {
  apiserverDeniedArgs,
  assumedFactsNote,
  DEFAULT_TALOS_VERSION,
  findTalosRelease,
  KUBEPRISM,
  lookupTalosRelease,
  SUPPORTED_TALOS_MINORS,
  TALOS_RELEASES,
} from '../../src/knowledge/talos.js';
import { compareVersionText, minorOf } from '../../src/util/semver.js';

describe('Talos knowledge tables', () => {
  it('cover every supported minor; the default is the newest stable release', () => {
    expect(new Set(TALOS_RELEASES.map((r) => r.minor))).toEqual(new Set(SUPPORTED_TALOS_MINORS));
    const stable = TALOS_RELEASES.filter((r) => r.stable);
    const newest = [...stable].sort((a, b) => compareVersionText(a.version, b.version)).at(-1);
    expect(DEFAULT_TALOS_VERSION).toBe(newest?.version);
    expect(findTalosRelease(DEFAULT_TALOS_VERSION)?.stable).toBe(true);
  });

  it('versions only move forward from release to release', () => {
    for (let i = 1; i < TALOS_RELEASES.length; i++) {
      const a = TALOS_RELEASES[i - 1]!;
      const b = TALOS_RELEASES[i]!;
      expect(compareVersionText(a.version, b.version)).toBeLessThan(0);
      // A late patch of an older line may ship a newer etcd patch than the next line's .0 (v1.12.11 vs
      // v1.13.0), so etcd only moves forward within a line, and by minor across lines.
      if (a.minor === b.minor)
        expect(compareVersionText(a.etcdVersion, b.etcdVersion)).toBeLessThanOrEqual(0);
      else
        expect(compareVersionText(minorOf(a.etcdVersion)!, minorOf(b.etcdVersion)!)).toBeLessThanOrEqual(0);
      expect(compareVersionText(a.kubernetesDefault, b.kubernetesDefault)).toBeLessThan(0);
      expect(compareVersionText(a.kubernetesMin, b.kubernetesMin)).toBeLessThanOrEqual(0);
    }
  });

  it('each default Kubernetes version lies in its own window; six minors are supported', () => {
    for (const r of TALOS_RELEASES) {
      const [maj, min] = r.kubernetesMaxMinor.split('.').map(Number);
      const lowMinor = Number(r.kubernetesMin.split('.')[1]);
      expect(min! - lowMinor + 1).toBe(6);
      expect(r.kubernetesDefault.startsWith(`${maj}.${min}.`)).toBe(true);
    }
  });

  it('config format and extraArgs lists switch where talos.md says', () => {
    expect(findTalosRelease('1.12')).toMatchObject({ configFormat: 'v1alpha1', extraArgsLists: false });
    expect(findTalosRelease('1.13')).toMatchObject({ configFormat: 'v1alpha1', extraArgsLists: true });
    expect(findTalosRelease('1.14')).toMatchObject({
      configFormat: 'multidoc',
      extraArgsLists: true,
      stable: false,
    });
    expect(apiserverDeniedArgs(findTalosRelease('1.14')!)).toContain('tls-min-version');
    expect(apiserverDeniedArgs(findTalosRelease('1.13')!)).not.toContain('tls-min-version');
    expect(KUBEPRISM.port).toBe(7445);
  });
});

describe('lookupTalosRelease', () => {
  it('tabled releases keep their own facts', () => {
    for (const r of TALOS_RELEASES) {
      expect(lookupTalosRelease(r.version)).toEqual({ kind: 'release', release: r });
      expect(r.assumedFrom).toBeNull();
      expect(assumedFactsNote(r)).toBeUndefined();
    }
    // talos.md §8 row "v1.10.0 / v1.10.9": the two patches differ in etcd and default Kubernetes.
    expect(findTalosRelease('v1.10.0')).toMatchObject({ etcdVersion: '3.5.21', kubernetesDefault: '1.33.0' });
    expect(findTalosRelease('v1.10.9')).toMatchObject({ etcdVersion: '3.5.26', kubernetesDefault: '1.33.6' });
  });

  it('any other patch of a known line takes the per-patch facts of the nearest tabled patch below', () => {
    expect(findTalosRelease('v1.10.6')).toMatchObject({
      version: 'v1.10.6',
      minor: '1.10',
      stable: true,
      assumedFrom: 'v1.10.0',
      etcdVersion: '3.5.21',
      kubernetesDefault: '1.33.0',
      // The line's facts are exact.
      kubernetesMin: '1.28.0',
      kubernetesMaxMinor: '1.33',
      etcdImage: 'gcr.io/etcd-development/etcd',
      configFormat: 'v1alpha1',
    });
    // Past the newest tabled patch: that patch is the floor.
    expect(findTalosRelease('1.10.12')).toMatchObject({
      version: 'v1.10.12',
      assumedFrom: 'v1.10.9',
      etcdVersion: '3.5.26',
    });
    expect(findTalosRelease('v1.13.4')).toMatchObject({ assumedFrom: 'v1.13.0', etcdVersion: '3.6.9' });
    // The final release of a line tabled only as a candidate.
    expect(findTalosRelease('v1.14.0')).toMatchObject({
      stable: true,
      assumedFrom: 'v1.14.0-rc.1',
      configFormat: 'multidoc',
    });
  });

  it('says which facts it assumed', () => {
    expect(assumedFactsNote(findTalosRelease('v1.10.6')!)).toBe(
      'Talos v1.10.6 is not tabled; assumed the facts of v1.10.0 (etcd 3.5.21, default Kubernetes 1.33.0; the v1.10 line supports Kubernetes 1.28.0 – 1.33.x)',
    );
  });

  it('a line means its newest tabled release, stable preferred', () => {
    expect(findTalosRelease('v1.12')?.version).toBe('v1.12.11');
    expect(findTalosRelease('1.14')?.version).toBe('v1.14.0-rc.1');
    expect(findTalosRelease('1.13')?.assumedFrom).toBeNull();
  });

  it('refuses unknown lines, untabled pre-releases and malformed text', () => {
    const reason = (t: string) => {
      const r = lookupTalosRelease(t);
      return r.kind === 'refused' ? r.reason : r.release.version;
    };
    for (const t of ['v1.9.6', 'v1.15.0', 'v2.0', '1.7']) expect(reason(t), t).toBe('unknown-minor');
    for (const t of ['v1.10.6-beta.0', 'v1.14.0-rc.2', 'v1.13.9-alpha.1'])
      expect(reason(t), t).toBe('untabled-prerelease');
    for (const t of ['1.10.x', 'v1', 'latest', '', 'v1.10.6+build.1', 'v01.10.1', 'v1.10.6.1', 'V1.10.6'])
      expect(reason(t), t).toBe('malformed');
  });
});
