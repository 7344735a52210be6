/** The loose shape of a Kubernetes object as the generator builds it, and owner references between them. */

export type Obj = Record<string, unknown>;

export interface K8s {
  apiVersion: string;
  kind: string;
  metadata: Obj & { name: string; namespace?: string; uid?: string };
  [key: string]: unknown;
}

export interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
  blockOwnerDeletion: boolean;
}

/** The reference a controller puts on what it creates. */
export function ownerRef(owner: K8s): OwnerRef {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}
