/**
 * IPv4/IPv6 addresses and CIDRs as bigints: enough to canonicalize CIDR lists for comparison and
 * to compute "the n-th address of a service CIDR" (the `kubernetes` Service IP is the first, kube-dns
 * conventionally the tenth).
 */

export type IpFamily = 4 | 6;

export interface Ip {
  family: IpFamily;
  value: bigint;
}

export interface Cidr {
  family: IpFamily;
  /** The address as written (not masked): kube components accept unaligned CIDRs and mask them. */
  address: bigint;
  prefix: number;
}

export function parseIp(text: string): Ip | undefined {
  const t = text.trim();
  if (t.includes(':')) {
    const v = parseIpv6(t);
    return v === undefined ? undefined : { family: 6, value: v };
  }
  const v = parseIpv4(t);
  return v === undefined ? undefined : { family: 4, value: v };
}

function parseIpv4(t: string): bigint | undefined {
  const parts = t.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

function parseIpv6(t: string): bigint | undefined {
  let text = t;
  // An embedded IPv4 tail (::ffff:10.0.0.1) becomes two hextets.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIpv4(tail);
    if (v4 === undefined) return undefined;
    text = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  let v = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    v = (v << 16n) | BigInt(Number.parseInt(g, 16));
  }
  return v;
}

export function formatIp(ip: Ip): string {
  if (ip.family === 4) {
    const v = ip.value;
    return [24n, 16n, 8n, 0n].map((s) => ((v >> s) & 0xffn).toString()).join('.');
  }
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((ip.value >> BigInt(i * 16)) & 0xffffn));
  // RFC 5952: compress the longest run (length ≥ 2) of zero groups, the first one on ties.
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

export function parseCidr(text: string): Cidr | undefined {
  const [addr, prefixText, extra] = text.trim().split('/');
  if (addr === undefined || prefixText === undefined || extra !== undefined) return undefined;
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const ip = parseIp(addr);
  if (!ip) return undefined;
  const prefix = Number(prefixText);
  if (prefix > (ip.family === 4 ? 32 : 128)) return undefined;
  return { family: ip.family, address: ip.value, prefix };
}

export function formatCidr(c: Cidr): string {
  return `${formatIp({ family: c.family, value: c.address })}/${c.prefix}`;
}

/** Canonical text of a CIDR (lower-case, compressed IPv6); the input trimmed when it does not parse. */
export function canonicalCidr(text: string): string {
  const c = parseCidr(text);
  return c ? formatCidr(c) : text.trim();
}

/** Splits a comma-separated CIDR list (dual-stack) and canonicalizes each entry. */
export function cidrList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map(canonicalCidr);
}

/** Canonical text of an IP address; the input trimmed when it does not parse. */
export function canonicalIp(text: string): string {
  const ip = parseIp(text);
  return ip ? formatIp(ip) : text.trim();
}

/**
 * The n-th address of a CIDR counted from its network address (n = 1: the `kubernetes` Service IP,
 * n = 10: kube-dns by convention). Undefined when the CIDR does not parse or is too small.
 */
export function nthIp(cidrText: string, n: number): string | undefined {
  const c = parseCidr(cidrText);
  if (!c) return undefined;
  const bits = BigInt((c.family === 4 ? 32 : 128) - c.prefix);
  const size = 1n << bits;
  if (BigInt(n) >= size) return undefined;
  const network = (c.address >> bits) << bits;
  return formatIp({ family: c.family, value: network + BigInt(n) });
}

/** True when `ipText` lies inside `cidrText` (same family). */
export function cidrContains(cidrText: string, ipText: string): boolean {
  const c = parseCidr(cidrText);
  const ip = parseIp(ipText);
  if (!c || !ip || c.family !== ip.family) return false;
  const bits = BigInt((c.family === 4 ? 32 : 128) - c.prefix);
  return c.address >> bits === ip.value >> bits;
}

/** "host:port", an IPv6 host bracketed ("[fd00::1]:6443"): the inverse of parseHostPort. */
export function joinHostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** host and optional port from "host:port", "[v6]:port", a bare IPv6 address or an https URL. */
export function parseHostPort(text: string): { host: string; port?: number } | undefined {
  const t = text
    .trim()
    .replace(/^https?:\/\//, '')
    .replace(/\/.*$/, '');
  if (t === '') return undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(t);
  if (bracketed) return withPort(bracketed[1]!, bracketed[2]);
  // A bare IPv6 address has several colons and no port.
  if ((t.match(/:/g) ?? []).length > 1) return { host: t };
  const [host, port] = t.split(':');
  return withPort(host!, port);
}

function withPort(host: string, port: string | undefined): { host: string; port?: number } {
  if (port === undefined) return { host };
  return { host, port: Number(port) };
}
