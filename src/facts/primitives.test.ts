import { describe, expect, it } from 'vitest';
import type { SourceRef } from '../snapshot/model.js';
import { canonicalCidr, cidrContains, cidrList, joinHostPort, nthIp, parseHostPort } from '../util/ip.js';
import {
  compareMinor,
  compareVersionText,
  etcdVersionFromTag,
  imageTag,
  minorOf,
  normalizeKubernetesVersion,
  parseVersion,
} from '../util/semver.js';
import { decide, sameValue } from './decide.js';

const src = (path: string): SourceRef => ({ kind: 'file', path });

describe('decide', () => {
  it('no candidates: missing; agreement: all sources; disagreement: conflict listing all', () => {
    expect(decide({ key: 'k', title: 't', candidates: [], reason: 'r', missing: 'give x' })).toEqual({
      key: 'k',
      title: 't',
      value: undefined,
      provenance: [],
      missing: 'give x',
    });
    const agree = decide({
      key: 'k',
      title: 't',
      candidates: [
        { value: [1], source: src('a') },
        { value: [1], source: src('b') },
      ],
      reason: 'r',
      missing: '',
    });
    expect(agree.value).toEqual([1]);
    expect(agree.provenance).toEqual([src('a'), src('b')]);
    expect(agree.conflict).toBeUndefined();
    const cands = [
      { value: 'x', source: src('a') },
      { value: 'y', source: src('b') },
      { value: 'x', source: src('c') },
    ];
    const c = decide({ key: 'k', title: 't', candidates: cands, reason: 'because', missing: '' });
    expect(c.value).toBe('x');
    expect(c.provenance).toEqual([src('a'), src('c')]);
    expect(c.conflict).toEqual({ candidates: cands, believed: 'x', reason: 'because' });
    const picked = decide({
      key: 'k',
      title: 't',
      candidates: cands,
      reason: 'r',
      missing: '',
      believe: (cs) => cs[1]!,
    });
    expect(picked.value).toBe('y');
    expect(picked.provenance).toEqual([src('b')]);
  });

  it('sameValue is structural and ignores undefined keys', () => {
    expect(sameValue({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameValue([1, { x: 'y' }], [1, { x: 'y' }])).toBe(true);
    expect(sameValue([1, 2], [2, 1])).toBe(false);
    expect(sameValue({ a: null }, { a: undefined })).toBe(false);
  });
});

describe('ip', () => {
  it('canonicalizes CIDRs and computes the n-th address', () => {
    expect(canonicalCidr(' 10.96.0.0/12 ')).toBe('10.96.0.0/12');
    expect(canonicalCidr('FD00:0:0:0::/64')).toBe('fd00::/64');
    expect(cidrList('10.244.0.0/16,fd00:10:244::/56')).toEqual(['10.244.0.0/16', 'fd00:10:244::/56']);
    expect(nthIp('10.96.0.0/12', 10)).toBe('10.96.0.10');
    expect(nthIp('10.96.5.7/12', 1)).toBe('10.96.0.1');
    expect(nthIp('fd00:10:96::/112', 10)).toBe('fd00:10:96::a');
    expect(nthIp('10.0.0.0/30', 4)).toBeUndefined();
    expect(nthIp('nonsense', 1)).toBeUndefined();
    expect(cidrContains('10.244.0.0/16', '10.244.3.9')).toBe(true);
    expect(cidrContains('10.244.0.0/16', '10.245.0.1')).toBe(false);
  });

  it('parses endpoints in all the shapes kubeadm and kubeconfigs use', () => {
    expect(parseHostPort('k8s.example:6443')).toEqual({ host: 'k8s.example', port: 6443 });
    expect(parseHostPort('https://10.0.0.1:443/')).toEqual({ host: '10.0.0.1', port: 443 });
    expect(parseHostPort('[fd00::1]:6443')).toEqual({ host: 'fd00::1', port: 6443 });
    expect(parseHostPort('fd00::1')).toEqual({ host: 'fd00::1' });
    expect(parseHostPort('lb.example')).toEqual({ host: 'lb.example' });
  });

  it('joins host and port back, bracketing IPv6 only', () => {
    expect(joinHostPort('fd00::1', 6443)).toBe('[fd00::1]:6443');
    expect(joinHostPort('10.0.0.1', 443)).toBe('10.0.0.1:443');
    expect(parseHostPort(joinHostPort('fd00::1', 6443))).toEqual({ host: 'fd00::1', port: 6443 });
  });
});

describe('semver', () => {
  it('orders Kubernetes, etcd and Talos versions', () => {
    expect(compareVersionText('v1.32.4', '1.32.10')).toBeLessThan(0);
    expect(compareVersionText('1.37.0-rc.0', '1.37.0')).toBeLessThan(0);
    expect(compareVersionText('3.5.16', '3.5.16')).toBe(0);
    expect(etcdVersionFromTag('3.5.16-0')).toBe('3.5.16');
    expect(etcdVersionFromTag('v3.6.4')).toBe('3.6.4');
    expect(etcdVersionFromTag('latest')).toBeUndefined();
    expect(imageTag('registry:5000/kube-apiserver:v1.32.4@sha256:abc')).toBe('v1.32.4');
    expect(imageTag('registry:5000/kube-apiserver')).toBeUndefined();
    expect(normalizeKubernetesVersion('1.32.4')).toBe('v1.32.4');
    expect(minorOf('v1.32.4')).toBe('1.32');
    const v = (t: string) => parseVersion(t)!;
    expect(compareMinor(v('3.5.16'), v('3.6'))).toBeLessThan(0);
    expect(compareMinor(v('1.36.9'), v('1.36'))).toBe(0);
    expect(compareMinor(v('2.0.0'), v('1.37'))).toBeGreaterThan(0);
  });
});
