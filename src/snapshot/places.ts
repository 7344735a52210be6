/**
 * Where the loader read each object of a files directory (file and line), for errors found later,
 * when facts read a value embedded in an object (a kubeconfig inside a ConfigMap): the message can
 * name the file as well as the object. Keyed by the object itself, so nothing is added to the
 * snapshot's data; an object that was copied (or came from a cluster) has no place.
 */
import type { KubeObject } from './model.js';
import type { FieldPath } from './yaml.js';

export interface ObjectPlace {
  file: string;
  line?: number;
  /** The line of a field inside the object, when the file's format has positions (YAML). */
  lineOf?: (field: FieldPath) => number | undefined;
}

const places = new WeakMap<object, ObjectPlace>();

export function recordPlace(obj: KubeObject, place: ObjectPlace): void {
  places.set(obj, place);
}

export function placeOf(obj: KubeObject): ObjectPlace | undefined {
  return places.get(obj);
}
