/**
 * Dispatch of a resource request (`/api/v1/...`, `/apis/G/V/...`) to the registry by method,
 * subresource and query: the verbs get, list, watch, create, update, patch, delete and
 * deletecollection, plus status, scale, eviction and binding.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EvictionLog } from './eviction-log.js';
import {
  mediaType,
  parseJson,
  type ResourceRoute,
  readBody,
  sendJson,
  sendJsonText,
  toApiError,
} from './http.js';
import { type ListFault, listFaultError } from './list-fault.js';
import { type ListQuery, parseSelectors } from './list-query.js';
import { isPlainObject, type KObj } from './object.js';
import { applyPatch, PATCH_CONTENT_TYPES } from './patch.js';
import type { DeleteOptions, Registry, RequestUser } from './registry.js';
import type { ResourceDef } from './resources.js';
import { ApiError, badRequest, methodNotAllowed, unsupportedMediaType } from './status.js';
import { bind, type EvictionFault, evict, getScale, updateScale } from './subresources.js';
import { toTable, wantsTable } from './table.js';
import { startWatch } from './watch.js';

export type RestContext = {
  registry: Registry;
  user: RequestUser;
  instance: string;
  evictionLog: EvictionLog;
  evictionFault: EvictionFault | undefined;
  listFault: ListFault | undefined;
  /** Registers an open watch so that the server can end it; returns the unregister function. */
  trackWatch: (close: () => void) => () => void;
};

const NO_RESOURCE = (): ApiError =>
  new ApiError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server could not find the requested resource',
    reason: 'NotFound',
    details: {},
    code: 404,
  });

function intParam(url: URL, name: string): number | undefined {
  const v = url.searchParams.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw badRequest(`invalid ${name} "${v}": must be an integer`);
  return n;
}

function listQuery(url: URL): ListQuery {
  const p = url.searchParams;
  const q: ListQuery = {};
  for (const k of [
    'labelSelector',
    'fieldSelector',
    'continue',
    'resourceVersion',
    'resourceVersionMatch',
  ] as const) {
    const v = p.get(k);
    if (v !== null) q[k] = v;
  }
  const limit = intParam(url, 'limit');
  if (limit !== undefined) q.limit = limit;
  return q;
}

function dryRun(url: URL, body?: unknown): boolean {
  const values = [...url.searchParams.getAll('dryRun')];
  if (isPlainObject(body) && Array.isArray(body.dryRun)) values.push(...(body.dryRun as string[]));
  for (const v of values)
    if (v !== 'All') throw badRequest(`dryRun: Unsupported value: "${v}": supported values: "All"`);
  return values.length > 0;
}

const ACCEPTED_PATCHES = (d: ResourceDef) =>
  Object.keys(PATCH_CONTENT_TYPES).filter(
    (t) => !(d.custom && t === 'application/strategic-merge-patch+json'),
  );

export async function handleResource(
  ctx: RestContext,
  route: ResourceRoute,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const reg = ctx.registry;
  if (
    route.group === '' &&
    route.plural === 'bindings' &&
    route.namespace !== undefined &&
    route.name === undefined
  ) {
    // The legacy form of pods/binding: POST namespaces/NS/bindings with the pod's name in metadata.
    if (req.method !== 'POST') throw methodNotAllowed(req.method ?? 'GET', url.pathname);
    const obj = parseJson(await readBody(req));
    const podName = isPlainObject(obj) && isPlainObject(obj.metadata) ? obj.metadata.name : undefined;
    if (typeof podName !== 'string' || podName === '')
      throw badRequest('a Binding needs metadata.name (the pod)');
    return sendJson(res, 201, await bind(reg, route.namespace, podName, obj));
  }
  const d = await reg.resolve(route.group, route.version, route.plural);
  if (!d) throw NO_RESOURCE();
  if (route.namespace !== undefined && !d.namespaced) throw NO_RESOURCE();
  if (d.namespaced && route.namespace === undefined && route.name !== undefined) throw NO_RESOURCE();
  if (route.sub !== undefined && !(d.subresources as string[]).includes(route.sub)) throw NO_RESOURCE();
  const ns = route.namespace;
  const name = route.name;
  const sub = route.sub;
  const method = req.method ?? 'GET';
  const what = `${method} ${url.pathname}`;
  const watch =
    route.watchPath || url.searchParams.get('watch') === '1' || url.searchParams.get('watch') === 'true';

  if (method === 'GET') {
    const table = wantsTable(req.headers.accept) && sub === undefined && !watch;
    const include = url.searchParams.get('includeObject');
    if (name === undefined) {
      if (watch) return serveWatch(ctx, d, ns, url, res);
      const fault = ctx.listFault?.({
        plural: d.plural,
        namespace: ns,
        continued: url.searchParams.get('continue') !== null,
      });
      if (fault?.kind === 'reset') {
        req.socket.destroy();
        return;
      }
      if (fault) throw listFaultError(fault);
      if (!table) return sendJsonText(res, 200, await reg.listText(d, ns, listQuery(url)));
      const list = await reg.list(d, ns, listQuery(url));
      return sendJson(res, 200, toTable(d, list.items, list.metadata, include, reg.now()));
    }
    if (sub === 'scale') return sendJson(res, 200, await getScale(reg, d, ns, name));
    if (sub !== undefined && sub !== 'status') throw methodNotAllowed(method, what);
    const obj = await reg.get(d, ns, name);
    if (table)
      return sendJson(
        res,
        200,
        toTable(d, [obj], { resourceVersion: obj.metadata.resourceVersion ?? '' }, include, reg.now()),
      );
    return sendJson(res, 200, obj);
  }

  const body =
    method === 'DELETE' || method === 'POST' || method === 'PUT' || method === 'PATCH'
      ? await readBody(req)
      : Buffer.alloc(0);

  if (method === 'POST') {
    const obj = parseJson(body);
    if (name === undefined) {
      if (ns === undefined && d.namespaced) throw NO_RESOURCE();
      return sendJson(res, 201, await reg.create(d, ns, obj, { dryRun: dryRun(url) }));
    }
    if (sub === 'eviction') {
      const status = await evict(reg, ns!, name, obj, {
        user: ctx.user,
        instance: ctx.instance,
        log: ctx.evictionLog,
        fault: ctx.evictionFault,
      });
      return sendJson(res, 201, status);
    }
    if (sub === 'binding') return sendJson(res, 201, await bind(reg, ns!, name, obj));
    throw methodNotAllowed(method, what);
  }

  if (method === 'PUT') {
    if (name === undefined) throw methodNotAllowed(method, what);
    const obj = parseJson(body);
    const opts = { dryRun: dryRun(url) };
    if (sub === 'scale') return sendJson(res, 200, await updateScale(reg, d, ns, name, obj, opts));
    if (sub !== undefined && sub !== 'status') throw methodNotAllowed(method, what);
    return sendJson(res, 200, await reg.update(d, ns, name, obj, sub === 'status' ? 'status' : 'main', opts));
  }

  if (method === 'PATCH') {
    if (name === undefined || (sub !== undefined && sub !== 'status' && sub !== 'scale'))
      throw methodNotAllowed(method, what);
    const ct = mediaType(req);
    const type = ACCEPTED_PATCHES(d).includes(ct) ? PATCH_CONTENT_TYPES[ct] : undefined;
    if (!type) throw unsupportedMediaType(ct, ACCEPTED_PATCHES(d));
    const patch = parseJson(body);
    const opts = { dryRun: dryRun(url) };
    if (sub === 'scale') {
      const cur = await getScale(reg, d, ns, name);
      const patched = applyPatch(type, cur, patch) as KObj;
      if (
        isPlainObject(patched.metadata) &&
        patched.metadata.resourceVersion === cur.metadata.resourceVersion
      ) {
        delete patched.metadata.resourceVersion;
      }
      return sendJson(res, 200, await updateScale(reg, d, ns, name, patched, opts));
    }
    const obj = await reg.mutate(
      d,
      ns,
      name,
      sub === 'status' ? 'status' : 'main',
      (cur) => {
        const out = applyPatch(type, cur, patch) as KObj;
        // Only a resourceVersion the patch itself sets is a precondition; otherwise a patch is
        // retried on conflict against the newest object.
        if (
          isPlainObject(out) &&
          isPlainObject(out.metadata) &&
          out.metadata.resourceVersion === cur.metadata.resourceVersion
        ) {
          delete out.metadata.resourceVersion;
        }
        return out;
      },
      opts,
    );
    return sendJson(res, 200, obj);
  }

  if (method === 'DELETE') {
    const raw = parseJson(body);
    const bodyOpts = isPlainObject(raw) ? raw : {};
    const grace =
      intParam(url, 'gracePeriodSeconds') ??
      (typeof bodyOpts.gracePeriodSeconds === 'number' ? bodyOpts.gracePeriodSeconds : undefined);
    const pre = isPlainObject(bodyOpts.preconditions)
      ? (bodyOpts.preconditions as DeleteOptions['preconditions'])
      : undefined;
    const o: DeleteOptions = {
      ...(grace !== undefined && { gracePeriodSeconds: grace }),
      ...(pre && { preconditions: pre }),
      dryRun: dryRun(url, bodyOpts),
    };
    if (sub !== undefined) throw methodNotAllowed(method, what);
    if (name === undefined) return sendJson(res, 200, await reg.deleteCollection(d, ns, listQuery(url), o));
    const r = await reg.delete(d, ns, name, o);
    return sendJson(res, r.gone ? 200 : 202, r.body);
  }

  throw methodNotAllowed(method, what);
}

async function serveWatch(
  ctx: RestContext,
  d: ResourceDef,
  ns: string | undefined,
  url: URL,
  res: ServerResponse,
): Promise<void> {
  const q = listQuery(url);
  parseSelectors(d, q); // a bad selector is a 400, not an event
  const timeoutSeconds = intParam(url, 'timeoutSeconds');
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  let done = false;
  let handle: { cancel(): Promise<void> } | undefined;
  let timer: NodeJS.Timeout | undefined;
  const finish = (err?: Error) => {
    if (done) return;
    done = true;
    if (timer) clearTimeout(timer);
    untrack();
    if (err && !res.destroyed)
      res.write(`${JSON.stringify({ type: 'ERROR', object: toApiError(err).status })}\n`);
    res.end();
    void handle?.cancel();
  };
  const untrack = ctx.trackWatch(() => finish());
  if (timeoutSeconds !== undefined && timeoutSeconds > 0)
    timer = setTimeout(() => finish(), timeoutSeconds * 1000);
  res.on('close', () => finish());
  try {
    handle = await startWatch(
      ctx.registry,
      d,
      ns,
      q,
      (e) => {
        if (!done) res.write(`${JSON.stringify(e)}\n`);
      },
      finish,
    );
    if (done) await handle.cancel();
  } catch (err) {
    finish(err as Error);
  }
}
