/** Building SourceRefs the same way everywhere, so provenance reads uniformly. */
import { join } from 'node:path';
import { type FerryError, inputError, type Location } from '../errors.js';
import {
  describeSource,
  type KubeObject,
  type Snapshot,
  type SourceRef,
  type StaticPod,
} from '../snapshot/model.js';

/** The same source, narrowed to a field inside it (objects and files only; others are returned as is). */
export function atField(ref: SourceRef, field: string): SourceRef {
  if (ref.kind === 'object' || ref.kind === 'file') {
    return { ...ref, field: ref.field ? `${ref.field}.${field}` : field };
  }
  if (ref.kind === 'etcd' || ref.kind === 'api') return { ...ref, field };
  return ref;
}

export function objectRef(obj: KubeObject, field?: string): SourceRef {
  const ref: SourceRef = { kind: 'object', objectKind: obj.kind, name: obj.metadata.name };
  if (obj.metadata.namespace) ref.namespace = obj.metadata.namespace;
  if (field) ref.field = field;
  return ref;
}

export function flagRef(pod: StaticPod, flag: string): SourceRef {
  const ref: SourceRef = { kind: 'flag', component: pod.component, flag, from: pod.source };
  if (pod.node) ref.node = pod.node;
  return ref;
}

/** Evidence that a flag is *absent* from a component's command line. */
export function flagAbsentRef(pod: StaticPod, flag: string, meaning: string): SourceRef {
  const who = pod.node ? `${pod.component}@${pod.node}` : pod.component;
  return { kind: 'derived', from: [pod.source], note: `${who} has no --${flag}: ${meaning}` };
}

/** Where a source is, as an error location: file and line, or the object, and the field. */
export function locationOf(ref: SourceRef): Location {
  switch (ref.kind) {
    case 'file': {
      const loc: Location = { file: ref.path };
      if (ref.line !== undefined) loc.line = ref.line;
      if (ref.field !== undefined) loc.field = ref.field;
      return loc;
    }
    case 'object': {
      const loc: Location = {
        object: `${ref.objectKind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`,
      };
      if (ref.field !== undefined) loc.field = ref.field;
      return loc;
    }
    case 'flag':
      return { ...locationOf(ref.from), field: `--${ref.flag}` };
    default:
      return { object: describeSource(ref) };
  }
}

/**
 * A value read from the cluster that is not of its kind (a problem from snapshot/values.ts): bad
 * input naming its source, so it never reaches the kit.
 */
export function badValueError(
  ref: SourceRef,
  text: string,
  problem: string,
  place?: { file: string; line?: number },
): FerryError {
  return inputError(
    `${JSON.stringify(text)} is ${problem}`,
    {
      ...locationOf(ref),
      ...(place ? { file: place.file, ...(place.line ? { line: place.line } : {}) } : {}),
    },
    'correct the value in the cluster (or in the copied file) and take the snapshot again; ferry never carries a value it cannot read into the kit',
  );
}

export function derivedRef(note: string, from: SourceRef[]): SourceRef {
  return { kind: 'derived', from, note };
}

/**
 * Where the objects of one kind were listed: the evidence for "there is no such object" and for
 * facts summarised over many objects.
 */
export function listingRef(snapshot: Snapshot, objectKind: string): SourceRef {
  const src = snapshot.manifest.source;
  if (src.kind === 'files')
    return { kind: 'file', path: join(src.path, 'resources'), field: `${objectKind} objects` };
  return { kind: 'object', objectKind: `${objectKind}List`, name: `(all, from ${src.server})` };
}
