/** Building SourceRefs the same way everywhere, so provenance reads uniformly. */
import { join } from 'node:path';
import type { KubeObject, Snapshot, SourceRef, StaticPod } from '../snapshot/model.js';

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
