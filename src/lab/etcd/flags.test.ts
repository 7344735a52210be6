import { describe, expect, it } from 'vitest';
import { memberArgs, memberIp } from './flags.js';

describe('memberIp', () => {
  it('puts members of a cluster on 127.0.<subnet>.<n>', () => {
    expect(memberIp(10, 1)).toBe('127.0.10.1');
    expect(memberIp(42, 254)).toBe('127.0.42.254');
  });
  it('rejects addresses outside loopback host numbers', () => {
    expect(() => memberIp(10, 0)).toThrow(RangeError);
    expect(() => memberIp(10, 255)).toThrow(RangeError);
    expect(() => memberIp(256, 1)).toThrow(RangeError);
  });
});

describe('memberArgs', () => {
  const args = memberArgs({
    name: 'cp-1',
    ip: '127.0.10.1',
    dataDir: '/d/data',
    tls: {
      caFile: '/p/ca.crt',
      certFile: '/s.crt',
      keyFile: '/s.key',
      peerCertFile: '/p.crt',
      peerKeyFile: '/p.key',
    },
    initialCluster: [
      { name: 'cp-1', peerUrl: 'https://127.0.10.1:2380' },
      { name: 'cp-2', peerUrl: 'https://127.0.10.2:2380' },
    ],
    state: 'existing',
    token: 'tok',
  });

  it('serves clients and peers over TLS with client-certificate auth, like kubeadm', () => {
    expect(args).toEqual(
      expect.arrayContaining([
        '--client-cert-auth=true',
        '--peer-client-cert-auth=true',
        '--trusted-ca-file=/p/ca.crt',
        '--peer-trusted-ca-file=/p/ca.crt',
        '--cert-file=/s.crt',
        '--key-file=/s.key',
        '--peer-cert-file=/p.crt',
        '--peer-key-file=/p.key',
        '--listen-client-urls=https://127.0.10.1:2379',
        '--listen-peer-urls=https://127.0.10.1:2380',
      ]),
    );
  });

  it('joins with the whole initial cluster and the requested state', () => {
    expect(args).toContain('--initial-cluster=cp-1=https://127.0.10.1:2380,cp-2=https://127.0.10.2:2380');
    expect(args).toContain('--initial-cluster-state=existing');
    expect(args).toContain('--initial-cluster-token=tok');
  });

  it('never listens on a shared address (127.0.0.1) that would collide between members', () => {
    expect(args.join(' ')).not.toContain('127.0.0.1');
  });
});
