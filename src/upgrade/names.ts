/**
 * Names of the objects an upgrade creates. Machine templates are immutable (a changed template
 * rolls nothing; a new one referenced does), so each new one gets a name derived from its old
 * name and its new spec: the same inputs always give the same name, and a re-planned upgrade
 * finds the template it already wrote.
 */
import { createHash } from 'node:crypto';

/** The label the Machine controller puts on a MachineDeployment's Machines (capi.md §4.3). */
export const DEPLOYMENT_NAME_LABEL_TEXT = 'cluster.x-k8s.io/deployment-name';

/** JSON with object keys sorted: a spec's hash must not depend on the key order it was read in. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

const SUFFIX = /-[0-9a-f]{8}$/;
const MAX_NAME = 63;

/** `<old name without an earlier hash suffix>-<8 hex of the new spec>`, within a DNS label. */
export function derivedName(oldName: string, spec: unknown): string {
  const hash = createHash('sha256').update(canonicalJson(spec)).digest('hex').slice(0, 8);
  const base = oldName
    .replace(SUFFIX, '')
    .slice(0, MAX_NAME - 9)
    .replace(/[-.]+$/, '');
  return `${base}-${hash}`;
}
