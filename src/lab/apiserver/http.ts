/**
 * HTTP plumbing of the lab API server: URL paths to routes, request bodies, JSON and Status
 * answers, and the mapping of internal failures to the Status a kube-apiserver would send.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SelectorError } from '../../util/label-selector.js';
import { PatchError } from './patch.js';
import { ApiError, badRequest, expired, internalError, timeout, tooLarge, unprocessable } from './status.js';
import { CompactedError, StoreUnavailableError } from './store.js';

export type ResourceRoute = {
  type: 'resource';
  group: string;
  version: string;
  namespace: string | undefined;
  plural: string;
  name: string | undefined;
  sub: string | undefined;
  /** The legacy `/watch/` path form. */
  watchPath: boolean;
};

export type Route =
  | { type: 'health'; check: 'livez' | 'readyz' | 'healthz' }
  | { type: 'version' }
  | { type: 'apiVersions' }
  | { type: 'groupList' }
  | { type: 'group'; group: string }
  | { type: 'resourceList'; group: string; version: string }
  | ResourceRoute
  | { type: 'notFound' };

function resourceRoute(group: string, version: string, rest: string[]): Route {
  let watchPath = false;
  let r = rest;
  if (r[0] === 'watch') {
    watchPath = true;
    r = r.slice(1);
  }
  const base = { type: 'resource' as const, group, version, watchPath };
  if (r.length === 0) return { type: 'notFound' };
  if (
    r[0] === 'namespaces' &&
    group === '' &&
    (r.length <= 2 || (r.length === 3 && (r[2] === 'status' || r[2] === 'finalize')))
  ) {
    return { ...base, namespace: undefined, plural: 'namespaces', name: r[1], sub: r[2] };
  }
  if (r[0] === 'namespaces') {
    if (r.length < 3 || r.length > 5) return { type: 'notFound' };
    return { ...base, namespace: r[1], plural: r[2]!, name: r[3], sub: r[4] };
  }
  if (r.length > 3) return { type: 'notFound' };
  return { ...base, namespace: undefined, plural: r[0]!, name: r[1], sub: r[2] };
}

export function parseRoute(pathname: string): Route {
  let segs: string[];
  try {
    segs = pathname
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
  } catch {
    return { type: 'notFound' };
  }
  const [a, b, c, ...rest] = segs;
  if (a === 'healthz' || a === 'livez' || a === 'readyz') return { type: 'health', check: a };
  if (a === 'version' && segs.length === 1) return { type: 'version' };
  if (a === 'api') {
    if (b === undefined) return { type: 'apiVersions' };
    if (b !== 'v1') return { type: 'notFound' };
    if (c === undefined) return { type: 'resourceList', group: '', version: 'v1' };
    return resourceRoute('', 'v1', [c, ...rest]);
  }
  if (a === 'apis') {
    if (b === undefined) return { type: 'groupList' };
    if (c === undefined) return { type: 'group', group: b };
    if (rest.length === 0) return { type: 'resourceList', group: b, version: c };
    return resourceRoute(b, c, rest);
  }
  return { type: 'notFound' };
}

export const MAX_BODY_BYTES = 3 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw tooLarge(MAX_BODY_BYTES);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
}

export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

export function sendJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  sendJsonText(res, code, JSON.stringify(body), headers);
}

/** sendJson for a body already serialized. */
export function sendJsonText(
  res: ServerResponse,
  code: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
    ...headers,
  });
  res.end(text);
}

export function sendText(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
  });
  res.end(text);
}

export function sendStatus(res: ServerResponse, err: ApiError): void {
  const headers: Record<string, string> = {};
  if (err.retryAfterSeconds !== undefined) headers['Retry-After'] = String(err.retryAfterSeconds);
  sendJson(res, err.status.code, err.status, headers);
}

/** Any failure as the Status a real server would answer with. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof SelectorError) return badRequest(err.message);
  if (err instanceof PatchError)
    return err.kind === 'malformed' ? badRequest(err.message) : unprocessable(err.message);
  if (err instanceof CompactedError) return expired(`too old resource version: ${err.message}`);
  if (err instanceof StoreUnavailableError) {
    return err.timedOut
      ? timeout('request did not complete within requested timeout - context deadline exceeded', err)
      : internalError(err.message, err);
  }
  return internalError(err instanceof Error ? err.message : String(err), err);
}
