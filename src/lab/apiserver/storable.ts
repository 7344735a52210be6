import { clone, type KObj } from './object.js';

/** An object as it is written to the store: resourceVersion and selfLink are never stored. */
export function storableForWrite(o: KObj): KObj {
  const c = clone(o);
  delete c.metadata.resourceVersion;
  delete c.metadata.selfLink;
  return c;
}
