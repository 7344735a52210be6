/**
 * Server-side printing (meta.k8s.io/v1 Table), what `kubectl get` asks for: NAME/READY/STATUS/AGE
 * for pods, NAME/STATUS/ROLES/AGE/VERSION for nodes, NAME/CREATED AT (the real default for custom
 * resources) for everything else. Pure.
 */
import { isPlainObject, type KObj, metaOf } from './object.js';
import type { ResourceDef } from './resources.js';

type Column = { name: string; type: string; format: string; description: string; priority: number };

const col = (name: string, type = 'string', format = '', priority = 0): Column => ({
  name,
  type,
  format,
  description: name,
  priority,
});
const NAME = col('Name', 'string', 'name');
const CREATED = col('Created At', 'date');
const AGE = col('Age');

/** k8s.io/apimachinery/pkg/util/duration.HumanDuration: what kubectl shows as AGE. */
export function humanDuration(ms: number): string {
  const sec = Math.max(0, Math.floor(ms / 1000));
  if (sec < 120) return `${sec}s`;
  const min = Math.floor(sec / 60);
  if (min < 10) return sec % 60 === 0 ? `${min}m` : `${min}m${sec % 60}s`;
  if (min < 180) return `${min}m`;
  const h = Math.floor(min / 60);
  if (h < 8) return min % 60 === 0 ? `${h}h` : `${h}h${min % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (h < 24 * 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (h < 24 * 365 * 2) return `${d}d`;
  const y = Math.floor(d / 365);
  if (h < 24 * 365 * 8) return d % 365 === 0 ? `${y}y` : `${y}y${d % 365}d`;
  return `${y}y`;
}

function age(o: KObj, now: Date): string {
  const t = Date.parse(metaOf(o).creationTimestamp ?? '');
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now.getTime() - t);
}

/** Whether the Accept header asks for a Table (kubectl get does). */
export function wantsTable(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((p) => /;\s*as=Table/.test(p) && /g=meta\.k8s\.io/.test(p));
}

function podCells(p: KObj, now: Date): unknown[] {
  const spec = isPlainObject(p.spec) ? p.spec : {};
  const status = isPlainObject(p.status) ? p.status : {};
  const containers = Array.isArray(spec.containers) ? spec.containers.length : 0;
  const statuses = Array.isArray(status.containerStatuses)
    ? (status.containerStatuses as Record<string, unknown>[])
    : [];
  const ready = statuses.filter((s) => s.ready === true).length;
  const restarts = statuses.reduce(
    (n, s) => n + (typeof s.restartCount === 'number' ? s.restartCount : 0),
    0,
  );
  const phase = metaOf(p).deletionTimestamp !== undefined ? 'Terminating' : (status.phase ?? 'Unknown');
  return [
    metaOf(p).name,
    `${ready}/${containers}`,
    phase,
    restarts,
    age(p, now),
    status.podIP ?? '<none>',
    spec.nodeName ?? '<none>',
  ];
}

function nodeCells(n: KObj, now: Date): unknown[] {
  const conds =
    isPlainObject(n.status) && Array.isArray(n.status.conditions)
      ? (n.status.conditions as Record<string, unknown>[])
      : [];
  const ready = conds.find((c) => c.type === 'Ready');
  let st = ready?.status === 'True' ? 'Ready' : ready ? 'NotReady' : 'Unknown';
  if (isPlainObject(n.spec) && n.spec.unschedulable === true) st += ',SchedulingDisabled';
  const roles = Object.keys(metaOf(n).labels ?? {})
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length));
  const version =
    isPlainObject(n.status) && isPlainObject(n.status.nodeInfo)
      ? n.status.nodeInfo.kubeletVersion
      : undefined;
  return [
    metaOf(n).name,
    st,
    roles.length > 0 ? roles.sort().join(',') : '<none>',
    age(n, now),
    version ?? '',
  ];
}

function layout(d: ResourceDef): { columns: Column[]; cells: (o: KObj, now: Date) => unknown[] } {
  if (!d.custom && d.group === '' && d.plural === 'pods') {
    return {
      columns: [
        NAME,
        col('Ready'),
        col('Status'),
        col('Restarts', 'integer'),
        AGE,
        col('IP', 'string', '', 1),
        col('Node', 'string', '', 1),
      ],
      cells: podCells,
    };
  }
  if (!d.custom && d.group === '' && d.plural === 'nodes') {
    return { columns: [NAME, col('Status'), col('Roles'), AGE, col('Version')], cells: nodeCells };
  }
  return { columns: [NAME, CREATED], cells: (o) => [metaOf(o).name, metaOf(o).creationTimestamp] };
}

export function toTable(
  d: ResourceDef,
  objects: KObj[],
  listMeta: { resourceVersion?: string; continue?: string },
  includeObject: string | null,
  now: Date,
): Record<string, unknown> {
  const { columns, cells } = layout(d);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: columns,
    rows: objects.map((o) => ({
      cells: cells(o, now),
      ...(includeObject === 'None'
        ? {}
        : {
            object:
              includeObject === 'Object'
                ? o
                : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata },
          }),
    })),
  };
}
