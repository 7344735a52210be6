/**
 * The metadata fields the API server owns: it sets them on every write and refuses or ignores them
 * on a create. A copy of an object that is to be created again (a restore, the lab's snapshot
 * import) drops them.
 */
export const SERVER_METADATA_FIELDS = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'generation',
  'managedFields',
  'selfLink',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
] as const;
