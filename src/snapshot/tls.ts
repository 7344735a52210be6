/**
 * Reads the certificate a TLS server presents. Trust is deliberately not verified: the point is
 * to *see* what an apiserver serves (its SANs decide whether Talos nodes can reach it by
 * 127.0.0.1 or the VIP), including certificates that would fail verification.
 */
import { isIP } from 'node:net';
import * as tls from 'node:tls';

export interface PeerCertificateOptions {
  /** Whole handshake deadline. Default 5 s. */
  timeoutMs?: number;
  /** SNI name; defaults to the host when it is a DNS name (SNI cannot carry an IP). */
  servername?: string;
}

export type FetchPeerCertificate = (
  host: string,
  port: number,
  opts?: PeerCertificateOptions,
) => Promise<Uint8Array>;

/** DER of the leaf certificate `host:port` presents. */
export const fetchPeerCertificate: FetchPeerCertificate = (host, port, opts = {}) => {
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const servername = opts.servername ?? (isIP(host) === 0 ? host : undefined);
  const address = `${host}:${port}`;
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err: Error | undefined, der?: Uint8Array) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      socket.destroy();
      if (err) reject(err);
      else resolve(der!);
    };
    const deadline = setTimeout(
      () => finish(new Error(`TLS handshake with ${address}: no answer within ${timeoutMs / 1000} s`)),
      timeoutMs,
    );
    const socket = tls.connect({
      host,
      port,
      rejectUnauthorized: false,
      ...(servername !== undefined && { servername }),
      // Some apiservers ask for a client certificate; none is offered and the server cert is
      // already in hand by the time it would matter.
    });
    socket.once('secureConnect', () => {
      const cert = socket.getPeerCertificate(false);
      if (!cert?.raw)
        return finish(new Error(`TLS handshake with ${address}: the server presented no certificate`));
      finish(undefined, new Uint8Array(cert.raw));
    });
    socket.once('error', (err: NodeJS.ErrnoException) =>
      finish(new Error(`TLS handshake with ${address} failed: ${err.code ?? err.message}`, { cause: err })),
    );
  });
};

/** Splits "host:port", "[v6]:port" or "https://host:port/..." ; `defaultPort` when none is given. */
export function splitHostPort(s: string, defaultPort: number): { host: string; port: number } {
  let rest = s.trim();
  if (/^[a-z]+:\/\//i.test(rest)) {
    const u = new URL(rest);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    const port = u.port
      ? Number(u.port)
      : u.protocol === 'http:'
        ? 80
        : u.protocol === 'https:'
          ? 443
          : defaultPort;
    return { host, port };
  }
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest);
  if (v6) return { host: v6[1]!, port: v6[2] ? Number(v6[2]) : defaultPort };
  if (isIP(rest) === 6) return { host: rest, port: defaultPort };
  const idx = rest.lastIndexOf(':');
  if (idx > 0 && /^\d+$/.test(rest.slice(idx + 1))) {
    const port = Number(rest.slice(idx + 1));
    rest = rest.slice(0, idx);
    return { host: rest, port };
  }
  return { host: rest, port: defaultPort };
}

export function joinHostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}
