/**
 * The REST semantics of a kube-apiserver over a Store, for any row of the resource table:
 * create (generateName, uid, timestamps, admission), get, list (selectors, limit/continue at a
 * fixed revision), update with resourceVersion preconditions, the status subresource, graceful
 * and finalizer-aware deletion, and PodDisruptionBudget status computed on read. Every failure is
 * an ApiError carrying the Status a real server would send.
 */
import { randomUUID } from 'node:crypto';
import {
  admitCreate,
  applyDefaults,
  carryAllocated,
  generateName,
  validateName,
  validateObject,
  validateUpdate,
} from './admission.js';
import {
  decodeContinue,
  EXPIRED_CONTINUE,
  encodeContinue,
  type ListQuery,
  matches,
  parseSelectors,
} from './list-query.js';
import { clone, deepEqual, isPlainObject, type KObj, metaOf, rfc3339 } from './object.js';
import { computePdbStatus } from './pdb.js';
import {
  apiVersionOf,
  BUILTIN_RESOURCES,
  builtinDef,
  CRD_GROUP,
  collectionPrefix,
  def,
  defsFromCrd,
  objectKey,
  type ResourceDef,
  resourcePrefix,
} from './resources.js';
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  expired,
  type GroupResource,
  internalError,
  invalid,
  notFound,
  type Status,
  success,
} from './status.js';
import { storableForWrite } from './storable.js';
import { CompactedError, type Store, type StoredObject } from './store.js';

export type RequestUser = { name: string; groups: string[] };

export type DeleteOptions = {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  dryRun?: boolean;
};

/** The answer to a DELETE, and whether the object is gone (200) or only marked (202). */
export type DeleteResult = { body: KObj | Status; gone: boolean };

/** Built-in list items carry neither apiVersion nor kind, as a real server sends them. */
function listItemForm(item: KObj): void {
  delete item.apiVersion;
  delete item.kind;
}

export type ListBody = {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: KObj[];
};

/**
 * Which part of an object a write may change: `main` (PUT/PATCH: status kept, validated),
 * `status` (only status), `internal` (the server itself: binding, scale, eviction; unvalidated).
 */
export type WriteTarget = 'main' | 'status' | 'internal';

const MAX_ATTEMPTS = 8;

export const gr = (d: ResourceDef): GroupResource => ({ group: d.group, resource: d.plural });

const NAMESPACES = def('', 'namespaces');
const PODS = def('', 'pods');
const PDBS = def('policy', 'poddisruptionbudgets');
const CRDS = def(CRD_GROUP, 'customresourcedefinitions');
const OWNER_KINDS = [def('apps', 'replicasets'), def('apps', 'deployments'), def('apps', 'statefulsets')];

/** Everything but metadata and status: what makes metadata.generation grow. */
function specPart(o: KObj): KObj {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
  return rest as KObj;
}

function withoutRv(o: KObj): KObj {
  const c = clone(o);
  delete c.metadata.resourceVersion;
  return c;
}

export class Registry {
  readonly store: Store;
  readonly #clock: () => Date;

  constructor(store: Store, opts: { clock?: () => Date } = {}) {
    this.store = store;
    this.#clock = opts.clock ?? (() => new Date());
  }

  now(): Date {
    return this.#clock();
  }

  // ---- resource resolution ---------------------------------------------------------------------

  /** The row serving group/version/plural: built in, or from an established CRD. */
  async resolve(group: string, version: string, plural: string): Promise<ResourceDef | undefined> {
    const b = builtinDef(group, version, plural);
    if (b) return b;
    if (BUILTIN_RESOURCES.some((r) => r.group === group)) return undefined;
    const crd = await this.store.get(objectKey(CRDS, undefined, `${plural}.${group}`));
    if (!crd) return undefined;
    return this.#crdRows(crd).find((d) => d.version === version);
  }

  /** Every served row, CRD-backed ones included (discovery). */
  async allDefs(): Promise<ResourceDef[]> {
    const crds = await this.store.list(resourcePrefix(CRDS));
    return [...BUILTIN_RESOURCES, ...crds.items.flatMap((c) => this.#crdRows(c))];
  }

  /**
   * A CRD's rows, kept per key and mod revision: the store is still read on every request (a
   * changed or deleted CRD is seen at once), but a stored version never changes, so it is parsed
   * once. Parsing Cluster API's CRDs (up to 240 KB of schema each) on every request was most of
   * a create's cost (bench/mgmt).
   */
  #crdRows(s: StoredObject): ResourceDef[] {
    const hit = this.#crdDefs.get(s.key);
    if (hit?.rev === s.modRevision) return hit.defs;
    const defs = defsFromCrd(s.value);
    this.#crdDefs.set(s.key, { rev: s.modRevision, defs });
    return defs;
  }

  readonly #crdDefs = new Map<string, { rev: number; defs: ResourceDef[] }>();

  // ---- presentation ----------------------------------------------------------------------------

  /** A stored object as the API shows it: apiVersion/kind of the requested row, resourceVersion. */
  raw(d: ResourceDef, s: StoredObject): KObj {
    const { apiVersion: _a, kind: _k, ...rest } = s.value;
    const obj = { apiVersion: apiVersionOf(d), kind: d.kind, ...rest } as KObj;
    obj.metadata = { ...obj.metadata, resourceVersion: String(s.modRevision) };
    return obj;
  }

  /** raw() plus what is computed on read (PodDisruptionBudget status). */
  async present(d: ResourceDef, items: StoredObject[]): Promise<KObj[]> {
    const objs = items.map((s) => this.raw(d, s));
    if (d !== PDBS || objs.length === 0) return objs;
    // Contexts are kept while the store's revision stands: a paged PDB list across 100
    // namespaces otherwise parses every pod and workload once per page.
    const rev = await this.store.revision();
    if (this.#pdbContexts.rev !== rev) this.#pdbContexts = { rev, byNs: new Map() };
    const byNs = this.#pdbContexts.byNs;
    for (const o of objs) {
      const ns = metaOf(o).namespace ?? '';
      let ctx = byNs.get(ns);
      if (!ctx) {
        ctx = await this.namespaceContext(ns);
        byNs.set(ns, ctx);
      }
      o.status = computePdbStatus(o, ctx.pods, ctx.workloads, this.now());
    }
    return objs;
  }

  /** Pods and pod-owning workloads of a namespace (the disruption controller's inputs). */
  async namespaceContext(ns: string): Promise<{ pods: KObj[]; workloads: KObj[] }> {
    const pods = (await this.store.list(collectionPrefix(PODS, ns))).items.map((s) => this.raw(PODS, s));
    const workloads: KObj[] = [];
    for (const w of OWNER_KINDS) {
      workloads.push(...(await this.store.list(collectionPrefix(w, ns))).items.map((s) => this.raw(w, s)));
    }
    return { pods, workloads };
  }

  async presentOne(d: ResourceDef, s: StoredObject): Promise<KObj> {
    return (await this.present(d, [s]))[0]!;
  }

  // ---- read ------------------------------------------------------------------------------------

  async getStored(d: ResourceDef, ns: string | undefined, name: string): Promise<StoredObject> {
    const s = await this.store.get(objectKey(d, ns, name));
    if (!s) throw notFound(gr(d), name);
    return s;
  }

  async get(d: ResourceDef, ns: string | undefined, name: string): Promise<KObj> {
    return this.presentOne(d, await this.getStored(d, ns, name));
  }

  async list(d: ResourceDef, ns: string | undefined, q: ListQuery): Promise<ListBody> {
    const { page, metadata } = await this.#listPage(d, ns, q);
    const items = await this.present(d, page);
    if (!d.custom) for (const i of items) listItemForm(i);
    return { apiVersion: apiVersionOf(d), kind: d.listKind, metadata, items };
  }

  /**
   * list() as the JSON text a GET sends. A stored version never changes, so each item's JSON is
   * kept per key and revision: a client paging through 30,000 pods costs the server a string
   * join, not a parse and a stringify per pod (bench/collect measured the lab as the bottleneck).
   * PodDisruptionBudgets are computed on read and never cached.
   */
  async listText(d: ResourceDef, ns: string | undefined, q: ListQuery): Promise<string> {
    if (d === PDBS) return JSON.stringify(await this.list(d, ns, q));
    const { page, metadata } = await this.#listPage(d, ns, q);
    const items = page.map((s) => {
      const hit = this.#itemJson.get(s.key);
      if (hit?.rev === s.modRevision) return hit.json;
      const item = this.raw(d, s);
      if (!d.custom) listItemForm(item);
      const json = JSON.stringify(item);
      this.#itemJson.set(s.key, { rev: s.modRevision, json });
      return json;
    });
    const head = JSON.stringify({ apiVersion: apiVersionOf(d), kind: d.listKind, metadata });
    return `${head.slice(0, -1)},"items":[${items.join(',')}]}`;
  }

  readonly #itemJson = new Map<string, { rev: number; json: string }>();
  /** namespaceContext() results, valid at one store revision (computePdbStatus only reads them). */
  #pdbContexts: { rev: number; byNs: Map<string, { pods: KObj[]; workloads: KObj[] }> } = {
    rev: -1,
    byNs: new Map(),
  };

  async #listPage(
    d: ResourceDef,
    ns: string | undefined,
    q: ListQuery,
  ): Promise<{ page: StoredObject[]; metadata: ListBody['metadata'] }> {
    const sel = parseSelectors(d, q);
    const prefix = collectionPrefix(d, ns);
    let revision: number | undefined;
    let startAfter: string | undefined;
    if (q.continue) {
      const t = decodeContinue(q.continue, prefix);
      revision = t.rv > 0 ? t.rv : undefined;
      startAfter = t.start;
    } else if (q.resourceVersion && q.resourceVersionMatch === 'Exact') {
      revision = Number(q.resourceVersion);
      if (!Number.isInteger(revision) || revision <= 0)
        throw badRequest(`invalid resourceVersion "${q.resourceVersion}"`);
    }
    const limit = q.limit !== undefined && q.limit > 0 ? q.limit : undefined;
    const noSelectors = sel.labels.length === 0 && sel.fields.length === 0;
    let res: Awaited<ReturnType<Store['list']>>;
    try {
      res = await this.store.list(prefix, {
        ...(revision !== undefined && { revision }),
        ...(startAfter !== undefined && { startAfter }),
        // Without selectors a page needs one item past the limit (is there more?), not the rest:
        // reading all of a 30,000-pod prefix per page made a paged list quadratic.
        ...(limit !== undefined && noSelectors && { limit: limit + 1 }),
      });
    } catch (err) {
      if (err instanceof CompactedError) {
        if (q.continue) throw expired(EXPIRED_CONTINUE, encodeContinue({ rv: 0, start: startAfter! }));
        throw expired(`too old resource version: ${revision} (${err.compactRevision ?? 0})`);
      }
      throw err;
    }
    const matching = noSelectors ? res.items : res.items.filter((s) => matches(sel, s.value));
    const page = limit !== undefined ? matching.slice(0, limit) : matching;
    const more = limit !== undefined && (matching.length > limit || (res.remaining ?? 0) > 0);
    return {
      page,
      metadata: {
        resourceVersion: String(res.revision),
        ...(more && { continue: encodeContinue({ rv: res.revision, start: page[page.length - 1]!.key }) }),
        ...(more &&
          noSelectors && { remainingItemCount: matching.length - page.length + (res.remaining ?? 0) }),
      },
    };
  }

  // ---- create ----------------------------------------------------------------------------------

  async create(
    d: ResourceDef,
    ns: string | undefined,
    body: unknown,
    opts: { dryRun?: boolean } = {},
  ): Promise<KObj> {
    if (!isPlainObject(body)) throw badRequest('the request body must be a JSON object');
    const obj = clone(body) as KObj;
    if (obj.kind !== undefined && obj.kind !== d.kind) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${d.kind}): kind ${String(obj.kind)}`,
      );
    }
    if (obj.apiVersion !== undefined && obj.apiVersion !== apiVersionOf(d)) {
      throw badRequest(
        `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${apiVersionOf(d)})`,
      );
    }
    obj.metadata = isPlainObject(obj.metadata) ? obj.metadata : {};
    const m = obj.metadata;
    if (d.namespaced) {
      if (m.namespace !== undefined && m.namespace !== '' && m.namespace !== ns) {
        throw badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      }
      m.namespace = ns;
    } else delete m.namespace;
    if (m.resourceVersion !== undefined && m.resourceVersion !== '') {
      throw internalError('resourceVersion should not be set on objects to be created');
    }
    if (!m.name) {
      if (!m.generateName) {
        throw invalid(d.kind, d.group, '', [
          { field: 'metadata.name', type: 'Required', detail: 'name or generateName is required' },
        ]);
      }
      m.name = generateName(m.generateName);
    }
    const nameErrs = validateName(d, m.name);
    if (nameErrs.length > 0) throw invalid(d.kind, d.group, m.name, nameErrs);
    if (d.namespaced && !(await this.store.get(objectKey(NAMESPACES, undefined, ns!)))) {
      throw notFound(gr(NAMESPACES), ns!);
    }
    const now = rfc3339(this.now());
    m.uid = randomUUID();
    m.creationTimestamp = now;
    delete m.resourceVersion;
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    delete m.selfLink;
    delete m.managedFields;
    if (d.tracksGeneration) m.generation = 1;
    else delete m.generation;
    obj.apiVersion = apiVersionOf(d);
    obj.kind = d.kind;
    admitCreate(d, obj, now);
    const errs = validateObject(d, obj);
    if (errs.length > 0) throw invalid(d.kind, d.group, m.name, errs);
    if (opts.dryRun) return obj;
    const res = await this.store.create(objectKey(d, ns, m.name), storableForWrite(obj));
    if (!res.ok) throw alreadyExists(gr(d), m.name);
    return this.presentOne(d, {
      key: objectKey(d, ns, m.name),
      value: obj,
      modRevision: res.revision,
      createRevision: res.revision,
    });
  }

  // ---- update ----------------------------------------------------------------------------------

  /**
   * Read-modify-write with the store's compare-and-swap. `mutate` gets the stored object (with its
   * resourceVersion) and returns the candidate; a resourceVersion in the candidate is a
   * precondition (409 when stale), without one the write is retried on conflict like a patch.
   */
  async mutate(
    d: ResourceDef,
    ns: string | undefined,
    name: string,
    target: WriteTarget,
    mutate: (cur: KObj) => KObj | Promise<KObj>,
    opts: { dryRun?: boolean } = {},
  ): Promise<KObj> {
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const s = await this.getStored(d, ns, name);
      const cur = this.raw(d, s);
      const candidate = await mutate(clone(cur));
      if (!isPlainObject(candidate) || !isPlainObject(candidate.metadata)) {
        throw badRequest('the object must have metadata');
      }
      const wantRv = candidate.metadata.resourceVersion;
      if (wantRv !== undefined && wantRv !== '' && wantRv !== String(s.modRevision))
        throw conflict(gr(d), name);
      const next = this.#merge(d, cur, candidate, target);
      if (deepEqual(withoutRv(next), withoutRv(cur))) return this.presentOne(d, s);
      if (target === 'main') {
        const errs = validateUpdate(d, cur, next);
        if (errs.length > 0) throw invalid(d.kind, d.group, name, errs);
      }
      if (opts.dryRun) return next;
      const key = objectKey(d, ns, name);
      const finishing =
        next.metadata.deletionTimestamp !== undefined &&
        (next.metadata.finalizers ?? []).length === 0 &&
        (next.metadata.deletionGracePeriodSeconds ?? 0) === 0;
      const res = finishing
        ? await this.store.delete(key, s.modRevision)
        : await this.store.update(key, storableForWrite(next), s.modRevision);
      if (res.ok) {
        if (finishing) await this.#cascade(d, next);
        return this.presentOne(d, {
          key,
          value: next,
          modRevision: res.revision,
          createRevision: s.createRevision,
        });
      }
      if (res.reason === 'notFound') throw notFound(gr(d), name);
      if (wantRv !== undefined && wantRv !== '') throw conflict(gr(d), name);
    }
    throw conflict(gr(d), name);
  }

  /** What the strategy keeps from the stored object whatever the request says. */
  #merge(d: ResourceDef, cur: KObj, cand: KObj, target: WriteTarget): KObj {
    if (target === 'status') {
      const next = clone(cur);
      if (cand.status === undefined) delete next.status;
      else next.status = cand.status;
      return next;
    }
    const next = clone(cand);
    next.apiVersion = cur.apiVersion;
    next.kind = cur.kind;
    const m = next.metadata;
    const c = cur.metadata;
    for (const f of [
      'uid',
      'creationTimestamp',
      'deletionTimestamp',
      'deletionGracePeriodSeconds',
      'generation',
    ] as const) {
      if (c[f] === undefined) delete m[f];
      else (m as Record<string, unknown>)[f] = c[f];
    }
    m.name = c.name;
    if (d.namespaced) m.namespace = c.namespace;
    m.resourceVersion = c.resourceVersion;
    delete m.selfLink;
    delete m.managedFields;
    if (target === 'main' && d.subresources.includes('status')) {
      if (cur.status === undefined) delete next.status;
      else next.status = clone(cur.status);
    }
    carryAllocated(d, cur, next);
    applyDefaults(d, next);
    if (d.tracksGeneration && !deepEqual(specPart(next), specPart(cur)))
      m.generation = (c.generation ?? 1) + 1;
    return next;
  }

  /** PUT: the body replaces the object (or its status); name and namespace must match the URL. */
  async update(
    d: ResourceDef,
    ns: string | undefined,
    name: string,
    body: unknown,
    target: 'main' | 'status',
    opts: { dryRun?: boolean } = {},
  ): Promise<KObj> {
    if (!isPlainObject(body) || !isPlainObject(body.metadata))
      throw badRequest('the request body must be an object with metadata');
    const m = body.metadata as Record<string, unknown>;
    if (m.name !== undefined && m.name !== name) {
      throw badRequest(
        `the name of the object (${String(m.name)}) does not match the name on the URL (${name})`,
      );
    }
    if (d.namespaced && m.namespace !== undefined && m.namespace !== '' && m.namespace !== ns) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    if (body.kind !== undefined && body.kind !== d.kind) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${d.kind}): kind ${String(body.kind)}`,
      );
    }
    return this.mutate(d, ns, name, target, () => clone(body) as KObj, opts);
  }

  // ---- delete ----------------------------------------------------------------------------------

  async delete(
    d: ResourceDef,
    ns: string | undefined,
    name: string,
    o: DeleteOptions,
  ): Promise<DeleteResult> {
    const key = objectKey(d, ns, name);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const s = await this.getStored(d, ns, name);
      const cur = this.raw(d, s);
      const m = cur.metadata;
      if (o.preconditions?.uid !== undefined && o.preconditions.uid !== m.uid) {
        throw conflict(
          gr(d),
          name,
          `Precondition failed: UID in precondition: ${o.preconditions.uid}, UID in object meta: ${m.uid}`,
        );
      }
      if (
        o.preconditions?.resourceVersion !== undefined &&
        o.preconditions.resourceVersion !== m.resourceVersion
      ) {
        throw conflict(
          gr(d),
          name,
          `Precondition failed: ResourceVersion in precondition: ${o.preconditions.resourceVersion}, ResourceVersion in object meta: ${m.resourceVersion}`,
        );
      }
      const grace = this.#grace(d, cur, o.gracePeriodSeconds);
      const finalizers = m.finalizers ?? [];
      let next: KObj | undefined;
      if (grace > 0 || finalizers.length > 0) {
        // Graceful (pods) or held by finalizers: the object stays, marked for deletion.
        const already = m.deletionTimestamp !== undefined;
        const curGrace = m.deletionGracePeriodSeconds ?? 0;
        if (already && curGrace <= grace) return this.#deleteAnswer(d, cur, false);
        next = clone(cur);
        const at = new Date(this.now().getTime() + grace * 1000);
        next.metadata.deletionTimestamp = already && grace >= curGrace ? m.deletionTimestamp : rfc3339(at);
        next.metadata.deletionGracePeriodSeconds = grace;
        if (grace === 0 && finalizers.length === 0) next = undefined;
      }
      if (o.dryRun) return this.#deleteAnswer(d, next ?? cur, next === undefined);
      const res = next
        ? await this.store.update(key, storableForWrite(next), s.modRevision)
        : await this.store.delete(key, s.modRevision);
      if (res.ok) {
        if (!next) await this.#cascade(d, cur);
        const shown = next ?? cur;
        shown.metadata.resourceVersion = String(res.revision);
        return this.#deleteAnswer(d, shown, next === undefined);
      }
      if (res.reason === 'notFound') throw notFound(gr(d), name);
    }
    throw conflict(gr(d), name);
  }

  /** Grace period a delete gets: only pods are deleted gracefully (registry/core/pod/strategy.go). */
  #grace(d: ResourceDef, obj: KObj, requested: number | undefined): number {
    if (d !== PODS) return 0;
    const spec = isPlainObject(obj.spec) ? obj.spec : {};
    const phase = isPlainObject(obj.status) ? obj.status.phase : undefined;
    // Never scheduled or already finished: no kubelet has to stop anything.
    if (!spec.nodeName || phase === 'Succeeded' || phase === 'Failed') return 0;
    const g =
      requested ??
      (typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30);
    return g < 0 ? 1 : g;
  }

  #deleteAnswer(d: ResourceDef, obj: KObj, gone: boolean): DeleteResult {
    if (d.returnDeletedObject || !gone) return { body: obj, gone };
    const details = {
      name: metaOf(obj).name,
      ...(d.group !== '' && { group: d.group }),
      kind: d.plural,
      uid: metaOf(obj).uid,
    };
    return { body: success(details), gone };
  }

  /** Namespace deletion removes its objects, CRD deletion its custom resources (no Terminating phase). */
  async #cascade(d: ResourceDef, obj: KObj): Promise<void> {
    const name = metaOf(obj).name!;
    if (d === NAMESPACES) {
      const prefixes = new Set(
        (await this.allDefs()).filter((r) => r.namespaced).map((r) => collectionPrefix(r, name)),
      );
      for (const p of prefixes) await this.#purge(p);
    } else if (d === CRDS) {
      const rows = defsFromCrd(obj);
      if (rows[0]) await this.#purge(resourcePrefix(rows[0]));
    }
  }

  async #purge(prefix: string): Promise<void> {
    const { items } = await this.store.list(prefix);
    for (const s of items) await this.store.delete(s.key, s.modRevision);
  }

  async deleteCollection(
    d: ResourceDef,
    ns: string | undefined,
    q: ListQuery,
    o: DeleteOptions,
  ): Promise<ListBody> {
    const sel = parseSelectors(d, q);
    const { items, revision } = await this.store.list(collectionPrefix(d, ns));
    const deleted: KObj[] = [];
    for (const s of items.filter((x) => matches(sel, x.value))) {
      try {
        const r = await this.delete(d, metaOf(s.value).namespace, metaOf(s.value).name!, o);
        if (r.body.kind !== 'Status') deleted.push(r.body as KObj);
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      }
    }
    return {
      apiVersion: apiVersionOf(d),
      kind: d.listKind,
      metadata: { resourceVersion: String(revision) },
      items: deleted,
    };
  }

  // ---- bootstrap -------------------------------------------------------------------------------

  /** Creates the namespaces every cluster has (another instance may have done it already). */
  async ensureNamespaces(names: string[]): Promise<void> {
    for (const name of names) {
      try {
        await this.create(NAMESPACES, undefined, { metadata: { name } });
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 409)) throw err;
      }
    }
  }
}
