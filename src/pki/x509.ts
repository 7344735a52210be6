/**
 * The one entry point to @peculiar/x509 in ferry: import it from here, never directly, so that
 * reflect-metadata (needed by its tsyringe dependency) is loaded before the library loads and Node's WebCrypto is its provider.
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export { x509 };

/** Go's crypto/x509 rule: PrintableString when the value allows it, else UTF8String. */
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

/**
 * A distinguished name from attribute values taken literally (no escape or quote processing,
 * which the library's string and plain-JSON forms apply). RDNs in DER order, one per entry.
 */
export function literalName(rdns: [type: string, values: string[]][]): x509.Name {
  return new x509.Name(
    rdns.map(([type, values]) => ({
      [type]: values.map((v) => (PRINTABLE.test(v) ? { printableString: v } : { utf8String: v })),
    })),
  );
}

function escapeRdnValue(v: string): string {
  let out = v.replace(/[,+"\\<>;=]/g, (c) => `\\${c}`);
  if (out.startsWith(' ') || out.startsWith('#')) out = `\\${out}`;
  if (out.length > 1 && out.endsWith(' ')) out = `${out.slice(0, -1)}\\ `;
  return out;
}

/** RFC 4514 rendering, as Go's pkix.Name.String(): last RDN first, "," between, "+" inside one. */
export function formatName(name: x509.Name): string {
  return name
    .toJSON()
    .map((rdn) =>
      Object.entries(rdn)
        .flatMap(([type, values]) => values.map((v) => `${type}=${escapeRdnValue(v)}`))
        .join('+'),
    )
    .reverse()
    .join(',');
}
