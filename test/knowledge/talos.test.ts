import { describe, expect, it } from 'vitest';
import { compareVersionText, minorOf } from '../../src/facts/semver.js';
import {
  apiserverDeniedArgs,
  DEFAULT_TALOS_VERSION,
  findTalosRelease,
  KUBEPRISM,
  SUPPORTED_TALOS_MINORS,
  TALOS_RELEASES,
} from '../../src/knowledge/talos.js';

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
