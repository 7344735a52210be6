import { describe, expect, it } from 'vitest';
import { flagValues, lastFlag, parseCommandLine } from './flags.js';

describe('parseCommandLine', () => {
  it('reads --a=b, --a b, bare booleans and repeated flags in order', () => {
    const r = parseCommandLine([
      'kube-apiserver',
      '--advertise-address=10.0.0.1',
      '--service-account-issuer',
      'https://a.example',
      '--anonymous-auth',
      '--service-account-issuer=https://b.example',
      '--v',
      '2',
      '--empty=',
      '--x=a=b',
    ]);
    expect(r.binary).toBe('kube-apiserver');
    expect(r.flags).toEqual([
      { name: 'advertise-address', value: '10.0.0.1' },
      { name: 'service-account-issuer', value: 'https://a.example' },
      { name: 'anonymous-auth', value: 'true' },
      { name: 'service-account-issuer', value: 'https://b.example' },
      { name: 'v', value: '2' },
      { name: 'empty', value: '' },
      { name: 'x', value: 'a=b' },
    ]);
    expect(r.positionals).toEqual([]);
  });

  it('treats "--a -b" as a boolean followed by another flag, and single-dash flags like Go', () => {
    const r = parseCommandLine(['etcd', '--enable-v2', '--name=cp-1', '-v=3', '-log-level', 'debug']);
    expect(r.flags).toEqual([
      { name: 'enable-v2', value: 'true' },
      { name: 'name', value: 'cp-1' },
      { name: 'v', value: '3' },
      { name: 'log-level', value: 'debug' },
    ]);
  });

  it('keeps positionals before the flags and everything after --', () => {
    const r = parseCommandLine(['tool', 'serve', '--port=1', '--', '--not-a-flag', 'x']);
    expect(r.positionals).toEqual(['serve', '--not-a-flag', 'x']);
    expect(r.flags).toEqual([{ name: 'port', value: '1' }]);
  });

  it('a trailing flag without value is a boolean', () => {
    expect(parseCommandLine(['x', '--profiling']).flags).toEqual([{ name: 'profiling', value: 'true' }]);
    expect(parseCommandLine([]).binary).toBe('');
  });
});

describe('flagValues / lastFlag', () => {
  const flags = parseCommandLine(['x', '--a=1', '--b=2', '--a=3']).flags;
  it('returns every value in order, and the last one as the effective value', () => {
    expect(flagValues(flags, 'a')).toEqual(['1', '3']);
    expect(lastFlag(flags, 'a')).toBe('3');
    expect(lastFlag(flags, 'b')).toBe('2');
    expect(lastFlag(flags, 'c')).toBeUndefined();
    expect(flagValues(flags, 'c')).toEqual([]);
  });
});
