/**
 * Validators for the kinds of values ferry takes from a cluster: one per kind, each a pure function
 * that says what is wrong with a text (undefined: nothing). The readers call them where they parse
 * a value and turn a problem into an input error naming the value's source (snapshot/encryption.ts,
 * object-shapes.ts, facts/strict.ts), so a bad value stops ferry instead of reaching the kit.
 * The address arithmetic lives in util/ip.ts (a leaf module: it imports nothing).
 */
import { parseCidr, parseIp } from '../util/ip.js';
import { parseVersion } from '../util/semver.js';

/** What is wrong with a value, in words that follow "…: " in a message; undefined when it is fine. */
export type Problem = string | undefined;

const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Strict standard base64 (RFC 4648 §4, padded), as Kubernetes Secrets and EncryptionConfiguration
 * secrets hold it; Node's own decoder skips whatever is not base64 instead of refusing it.
 */
export function decodeBase64(text: string): Buffer | undefined {
  const t = text.trim();
  if (!STD_BASE64.test(t)) return undefined;
  return Buffer.from(t, 'base64');
}

export function base64Problem(text: string): Problem {
  return decodeBase64(text) === undefined ? 'not valid base64' : undefined;
}

/** Key sizes kube-apiserver accepts per provider (AES-128/192/256 for aescbc and aesgcm; XSalsa20 for secretbox). */
const KEY_BYTES: Record<string, readonly number[]> = {
  aescbc: [16, 24, 32],
  aesgcm: [16, 24, 32],
  secretbox: [32],
};

/** An encryption key's decoded length against its provider; the key itself is never quoted. */
export function encryptionKeyProblem(provider: string, key: Buffer): Problem {
  const sizes = KEY_BYTES[provider];
  if (!sizes || sizes.includes(key.length)) return undefined;
  const want = sizes.length === 1 ? `${sizes[0]}` : `${sizes.slice(0, -1).join(', ')} or ${sizes.at(-1)}`;
  return `the ${provider} key is ${key.length} byte(s) long; ${provider} takes keys of ${want} bytes`;
}

export function ipProblem(text: string): Problem {
  return parseIp(text) ? undefined : 'not an IP address';
}

export function cidrProblem(text: string): Problem {
  const t = text.trim();
  if (parseCidr(t)) return undefined;
  if (t === '') return 'not a CIDR: it is empty';
  const [addr, prefix] = t.split('/');
  if (prefix === undefined) return 'not a CIDR (ADDRESS/PREFIX, e.g. 10.96.0.0/12)';
  const ip = addr === undefined ? undefined : parseIp(addr);
  if (!ip) return `not a CIDR: ${JSON.stringify(addr)} is not an IP address`;
  return `not a CIDR: the prefix length must be 0-${ip.family === 4 ? 32 : 128}`;
}

/** A comma-separated list of CIDRs (dual-stack: at most one per IP family, as kube components take it). */
export function cidrListProblem(text: string): Problem {
  const items = text.split(',').map((s) => s.trim());
  if (items.length === 1) return cidrProblem(items[0] ?? '');
  const families = new Set<number>();
  for (const item of items) {
    const p = cidrProblem(item);
    if (p) return `not a CIDR list: ${JSON.stringify(item)} is ${p}`;
    const family = parseCidr(item)?.family ?? 4;
    if (families.has(family)) return `not a CIDR list: two IPv${family} CIDRs (at most one per IP family)`;
    families.add(family);
  }
  return undefined;
}

/** Several values of one kind separated by commas, as list flags (pflag StringSlice) take them. */
export function listProblem(text: string, item: (t: string) => Problem, what: string): Problem {
  for (const part of text.split(',')) {
    const p = item(part.trim());
    if (p) return `not a list of ${what}: ${JSON.stringify(part.trim())} is ${p}`;
  }
  return undefined;
}

const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/** A DNS name (RFC 1123 subdomain); `wildcard` admits a leading "*." (certificate SANs). */
export function dnsNameProblem(text: string, opts: { wildcard?: boolean } = {}): Problem {
  let t = text.trim().replace(/\.$/, '');
  if (opts.wildcard && t.startsWith('*.')) t = t.slice(2);
  if (t === '' || t.length > 253) return 'not a DNS name';
  return t.split('.').every((l) => DNS_LABEL.test(l)) ? undefined : 'not a DNS name';
}

/** A host as endpoints and SANs name it: an IP address or a DNS name. */
export function hostProblem(text: string, opts: { wildcard?: boolean } = {}): Problem {
  const t = text.trim();
  if (t.includes(':') || /^[\d.]+$/.test(t)) return parseIp(t) ? undefined : 'not an IP address';
  return dnsNameProblem(t, opts) === undefined ? undefined : 'neither an IP address nor a DNS name';
}

/** A whole number in [min, max] (mask sizes, counts). */
export function integerProblem(text: string | number, min: number, max: number): Problem {
  const n = typeof text === 'number' ? text : /^-?\d+$/.test(text.trim()) ? Number(text) : Number.NaN;
  return Number.isInteger(n) && n >= min && n <= max ? undefined : `not a whole number from ${min} to ${max}`;
}

export function portProblem(port: number | string): Problem {
  const n = typeof port === 'number' ? port : /^\d+$/.test(port.trim()) ? Number(port) : Number.NaN;
  return Number.isInteger(n) && n >= 1 && n <= 65535 ? undefined : 'not a port (1-65535)';
}

/**
 * An endpoint as kubeadm's controlPlaneEndpoint and kubeconfig servers write it: HOST[:PORT],
 * [IPv6]:PORT, a bare IPv6 address, or an http(s):// URL of one (a path after it is ignored).
 */
export function endpointProblem(text: string): Problem {
  const t = text.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(t) && !/^https?:\/\//i.test(t))
    return 'not an endpoint: only https:// (or a bare HOST[:PORT]) names an API server';
  const hostPort = t.replace(/^https?:\/\//i, '').replace(/\/.*$/, '');
  if (hostPort === '') return 'not an endpoint: no host';
  let host: string;
  let port: string | undefined;
  const bracketed = /^\[([^\]]*)\](?::(.*))?$/.exec(hostPort);
  if (bracketed) {
    host = bracketed[1] ?? '';
    port = bracketed[2];
    if (!host.includes(':') || !parseIp(host)) return `not an endpoint: [${host}] is not an IPv6 address`;
  } else if ((hostPort.match(/:/g) ?? []).length > 1) {
    // A bare IPv6 address has several colons and no port.
    if (!parseIp(hostPort))
      return `not an endpoint: ${JSON.stringify(hostPort)} is neither HOST:PORT nor an IPv6 address ([IPv6]:PORT with a port)`;
    return undefined;
  } else {
    [host = '', port] = hostPort.split(':');
  }
  const h = hostProblem(host);
  if (h) return `not an endpoint: the host ${JSON.stringify(host)} is ${h}`;
  if (port !== undefined && portProblem(port))
    return `not an endpoint: the port ${JSON.stringify(port)} is not 1-65535`;
  return undefined;
}

/**
 * An absolute http(s) URL with a valid host (etcd and client URLs, issuer and JWKS URLs); etcd's
 * unix:// and unixs:// socket URLs are URLs too.
 */
export function urlProblem(text: string): Problem {
  let u: URL;
  try {
    u = new URL(text.trim());
  } catch {
    return 'not a URL';
  }
  if (u.protocol === 'unix:' || u.protocol === 'unixs:') return undefined;
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return `not an http(s) URL (scheme ${u.protocol})`;
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  const p = hostProblem(host);
  if (p) return `the host ${JSON.stringify(host)} is ${p}`;
  return undefined;
}

/**
 * A service-account issuer: kube-apiserver takes any identifier, but one with a ":" must be a URL
 * (and the OIDC discovery Talos serves needs https).
 */
export function issuerProblem(text: string): Problem {
  const t = text.trim();
  if (t === '') return 'not an issuer: it is empty';
  if (!t.includes(':')) return undefined;
  const p = urlProblem(t);
  if (p) return `not an issuer: it has a ":" but is ${p}`;
  return /^https:\/\//i.test(t) ? undefined : 'not an issuer: a URL issuer must be https://';
}

/** Go's time.ParseDuration: "90s", "1h30m", "300ms", "0". */
const GO_DURATION = /^[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;

export function durationProblem(text: string): Problem {
  const t = text.trim();
  if (t === '0' || GO_DURATION.test(t)) return undefined;
  return 'not a duration (a number with a unit: 90s, 5m, 1h30m, 300ms)';
}

/** The kinds of values the tables of value-kinds.ts give flags and configuration fields. */
export type ValueKind =
  | 'ip'
  | 'ips'
  | 'cidrs'
  | 'host'
  /** A certificate SAN: an IP address or a DNS name, a leading "*." allowed. */
  | 'san'
  | 'dns-name'
  | 'endpoint'
  | 'url'
  | 'urls'
  | 'port'
  | 'mask-size'
  | 'issuer'
  | 'duration'
  /** A Kubernetes or etcd version, v-prefixed or not (v1.30.4, 3.5.21). */
  | 'version';

/** What is wrong with `text` as a value of `kind`. */
export function valueProblem(kind: ValueKind, text: string): Problem {
  switch (kind) {
    case 'ip':
      return ipProblem(text);
    case 'ips':
      return listProblem(text, ipProblem, 'IP addresses');
    case 'cidrs':
      return cidrListProblem(text);
    case 'host':
      return hostProblem(text);
    case 'san':
      return hostProblem(text, { wildcard: true });
    case 'dns-name':
      return dnsNameProblem(text);
    case 'endpoint':
      return endpointProblem(text);
    case 'url':
      return urlProblem(text);
    case 'urls':
      return listProblem(text, urlProblem, 'URLs');
    case 'port':
      return portProblem(text);
    case 'mask-size':
      return integerProblem(text, 0, 128);
    case 'issuer':
      return issuerProblem(text);
    case 'duration':
      return durationProblem(text);
    case 'version':
      return versionProblem(text);
  }
}

/** kubeadm also takes release labels (stable, stable-1.30, latest-1.29) in its own config file. */
const RELEASE_LABEL = /^(?:stable|latest)(?:-\d+(?:\.\d+)?)?$/;

export function versionProblem(text: string): Problem {
  if (parseVersion(text) || RELEASE_LABEL.test(text)) return undefined;
  return `"${text}" is not a version (MAJOR.MINOR.PATCH, e.g. v1.30.4)`;
}
