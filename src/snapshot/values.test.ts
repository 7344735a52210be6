import { describe, expect, it } from 'vitest';
import {
  base64Problem,
  cidrListProblem,
  cidrProblem,
  decodeBase64,
  dnsNameProblem,
  durationProblem,
  encryptionKeyProblem,
  endpointProblem,
  hostProblem,
  ipProblem,
  issuerProblem,
  portProblem,
  urlProblem,
  valueProblem,
  versionProblem,
} from './values.js';

describe('base64', () => {
  it('decodes strict, padded standard base64 only', () => {
    expect(decodeBase64('aGVsbG8=')?.toString()).toBe('hello');
    expect(decodeBase64(' aGVsbG8= ')?.toString()).toBe('hello');
    expect(decodeBase64('')?.length).toBe(0);
    for (const bad of ['aGVsbG8', 'aGVs bG8=', 'aGVsbG8-', 'a===', '%%%%', 'aGVsbG8=aGVs'])
      expect(decodeBase64(bad), bad).toBeUndefined();
    expect(base64Problem('not base64!')).toBe('not valid base64');
    expect(base64Problem('AAAA')).toBeUndefined();
  });
});

describe('encryption key lengths', () => {
  it('aescbc and aesgcm take 16, 24 or 32 bytes, secretbox 32', () => {
    for (const n of [16, 24, 32]) expect(encryptionKeyProblem('aescbc', Buffer.alloc(n))).toBeUndefined();
    expect(encryptionKeyProblem('aescbc', Buffer.alloc(5))).toBe(
      'the aescbc key is 5 byte(s) long; aescbc takes keys of 16, 24 or 32 bytes',
    );
    expect(encryptionKeyProblem('aesgcm', Buffer.alloc(31))).toMatch(/16, 24 or 32 bytes$/);
    expect(encryptionKeyProblem('secretbox', Buffer.alloc(32))).toBeUndefined();
    expect(encryptionKeyProblem('secretbox', Buffer.alloc(16))).toBe(
      'the secretbox key is 16 byte(s) long; secretbox takes keys of 32 bytes',
    );
    // kms and identity hold no key.
    expect(encryptionKeyProblem('kms', Buffer.alloc(1))).toBeUndefined();
  });
});

describe('addresses', () => {
  it('IP addresses', () => {
    for (const ok of ['10.20.0.11', '::1', 'fd00::1', '::ffff:10.0.0.1'])
      expect(ipProblem(ok), ok).toBeUndefined();
    for (const bad of ['10.20.0.1111', '10.0.0', '::::', 'cp-1', '', '1.2.3.4/32'])
      expect(ipProblem(bad), bad).toBe('not an IP address');
  });

  it('CIDRs, with what is wrong', () => {
    expect(cidrProblem('10.96.0.0/12')).toBeUndefined();
    expect(cidrProblem('fd00:10:96::/112')).toBeUndefined();
    expect(cidrProblem('garbage')).toBe('not a CIDR (ADDRESS/PREFIX, e.g. 10.96.0.0/12)');
    expect(cidrProblem('10.96.0.0/33')).toBe('not a CIDR: the prefix length must be 0-32');
    expect(cidrProblem('10.96.0/12')).toBe('not a CIDR: "10.96.0" is not an IP address');
  });

  it('CIDR lists: dual-stack at most one per family', () => {
    expect(cidrListProblem('10.244.0.0/16')).toBeUndefined();
    expect(cidrListProblem('10.244.0.0/16,fd00:244::/56')).toBeUndefined();
    expect(cidrListProblem('')).toBe('not a CIDR: it is empty');
    expect(cidrListProblem('garbage')).toBe('not a CIDR (ADDRESS/PREFIX, e.g. 10.96.0.0/12)');
    expect(cidrListProblem('10.244.0.0/16,garbage')).toBe(
      'not a CIDR list: "garbage" is not a CIDR (ADDRESS/PREFIX, e.g. 10.96.0.0/12)',
    );
    expect(cidrListProblem('10.0.0.0/16,10.1.0.0/16')).toBe(
      'not a CIDR list: two IPv4 CIDRs (at most one per IP family)',
    );
  });

  it('DNS names and hosts (certificate SANs take a wildcard)', () => {
    for (const ok of ['k8s-api.lab.example', 'localhost', 'kubernetes.default.svc.cluster.local.'])
      expect(dnsNameProblem(ok), ok).toBeUndefined();
    for (const bad of ['under_score.example', '-lead.example', 'a..b', '', 'x'.repeat(64)])
      expect(dnsNameProblem(bad), bad).toBe('not a DNS name');
    expect(dnsNameProblem('*.lab.example')).toBe('not a DNS name');
    expect(dnsNameProblem('*.lab.example', { wildcard: true })).toBeUndefined();
    expect(hostProblem('10.20.0.10')).toBeUndefined();
    expect(hostProblem('10.20.0.300')).toBe('not an IP address');
    expect(hostProblem('api server')).toBe('neither an IP address nor a DNS name');
  });

  it('ports', () => {
    expect(portProblem(6443)).toBeUndefined();
    expect(portProblem('2379')).toBeUndefined();
    for (const bad of [0, 65536, '6443x', '', -1, 1.5])
      expect(portProblem(bad), String(bad)).toBe('not a port (1-65535)');
  });
});

describe('endpoints and URLs', () => {
  it('accepts what kubeadm and kubeconfigs write', () => {
    for (const ok of [
      'k8s-api.lab.example:6443',
      'k8s-api.lab.example',
      '10.20.0.10:6443',
      '[fd00::10]:6443',
      'fd00::10',
      'https://k8s-api.lab.example:6443',
      'https://[fd00::10]:6443/',
    ])
      expect(endpointProblem(ok), ok).toBeUndefined();
  });

  it('refuses what no API server can be reached at', () => {
    expect(endpointProblem('https://[::::]:6443')).toBe('not an endpoint: [::::] is not an IPv6 address');
    expect(endpointProblem('k8s-api.lab.example:99999')).toBe(
      'not an endpoint: the port "99999" is not 1-65535',
    );
    expect(endpointProblem('10.20.0.300:6443')).toBe(
      'not an endpoint: the host "10.20.0.300" is not an IP address',
    );
    expect(endpointProblem('tcp://10.0.0.1:6443')).toMatch(/only https:\/\//);
    expect(endpointProblem('https://')).toBe('not an endpoint: no host');
    expect(endpointProblem('a:b:c')).toBe(
      'not an endpoint: "a:b:c" is neither HOST:PORT nor an IPv6 address ([IPv6]:PORT with a port)',
    );
  });

  it('URLs', () => {
    expect(urlProblem('https://127.0.0.1:2379')).toBeUndefined();
    expect(urlProblem('https://kubernetes.default.svc.cluster.local')).toBeUndefined();
    expect(urlProblem('10.0.0.1:2379')).toMatch(/^not an http\(s\) URL|^not a URL/);
    expect(urlProblem('https://[::::]:2379')).toBe('not a URL');
    expect(urlProblem('unix://localhost:2379')).toBeUndefined();
    expect(urlProblem('ftp://10.0.0.1/x')).toBe('not an http(s) URL (scheme ftp:)');
  });
});

describe('valueProblem: one entry point per kind', () => {
  it('dispatches each kind to its validator', () => {
    expect(valueProblem('ips', '10.0.0.1,fd00::1')).toBeUndefined();
    expect(valueProblem('ips', '10.0.0.1,nope')).toBe(
      'not a list of IP addresses: "nope" is not an IP address',
    );
    expect(valueProblem('urls', 'https://127.0.0.1:2379,https://10.0.0.2:2379')).toBeUndefined();
    expect(valueProblem('urls', 'https://127.0.0.1:2379,127.0.0.1')).toMatch(
      /^not a list of URLs: "127.0.0.1" is not/,
    );
    expect(valueProblem('san', '*.lab.example')).toBeUndefined();
    expect(valueProblem('host', '*.lab.example')).toBe('neither an IP address nor a DNS name');
    expect(valueProblem('mask-size', '24')).toBeUndefined();
    expect(valueProblem('mask-size', '129')).toBe('not a whole number from 0 to 128');
    expect(valueProblem('duration', '5m')).toBeUndefined();
    expect(valueProblem('endpoint', 'https://[::::]:6443')).toBeDefined();
    expect(valueProblem('cidrs', '10.96.0.0/12')).toBeUndefined();
    expect(valueProblem('dns-name', 'cluster.local')).toBeUndefined();
    expect(valueProblem('port', '6443')).toBeUndefined();
    expect(valueProblem('ip', '10.0.0.1')).toBeUndefined();
    expect(valueProblem('url', 'https://sso.lab.example/realms/platform')).toBeUndefined();
  });
});

describe('service-account issuers', () => {
  it('any identifier, but one with a colon is an https URL', () => {
    expect(issuerProblem('https://kubernetes.default.svc.cluster.local')).toBeUndefined();
    expect(issuerProblem('kubernetes.default.svc')).toBeUndefined();
    expect(issuerProblem('https://[::::]')).toBe('not an issuer: it has a ":" but is not a URL');
    expect(issuerProblem('http://issuer.example')).toBe('not an issuer: a URL issuer must be https://');
    expect(issuerProblem(' ')).toBe('not an issuer: it is empty');
  });
});

describe('durations (Go time.ParseDuration)', () => {
  it('accepts Go durations and refuses the rest', () => {
    for (const ok of ['60s', '1h30m', '300ms', '0', '1.5h', '0s', '10us', '-5m'])
      expect(durationProblem(ok), ok).toBeUndefined();
    for (const bad of ['sixty', '60', '5 m', '1d', '', 's'])
      expect(durationProblem(bad), bad).toBe('not a duration (a number with a unit: 90s, 5m, 1h30m, 300ms)');
  });
});

describe('versions', () => {
  it('accepts releases, pre-releases and kubeadm release labels; refuses the rest', () => {
    for (const ok of ['v1.30.4', '1.30.4', '3.5.21', 'v1.31.0-rc.1', 'stable', 'stable-1.30', 'latest-1'])
      expect(versionProblem(ok), ok).toBeUndefined();
    for (const bad of ['v1.banana', 'three.five', '', 'v1', 'stable-x'])
      expect(versionProblem(bad), bad).toMatch(/is not a version/);
  });
});
