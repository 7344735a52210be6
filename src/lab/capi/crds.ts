/**
 * The CustomResourceDefinitions the lab's Cluster API serves: exactly the upstream CRDs of the
 * repository's copy (schemas/capi), installed as a user installs them, so that a kind ferry
 * creates but does not ship is missing in the lab as it would be on a real server.
 */
import type { KubeRequester } from '../../adapters/kube/request.js';
import { capiSchemasDir } from '../../generate/schema/specs.js';
import { crdsIn, installCrds } from '../apiserver/install-crds.js';

/** The CRDs of schemas/capi, file name order. */
export function capiCrds(): Record<string, unknown>[] {
  return crdsIn(capiSchemasDir());
}

/** Creates every CRD the lab's Cluster API serves; ones already there are left as they are. */
export async function installLabCapiCrds(api: KubeRequester): Promise<void> {
  await installCrds(api, capiCrds());
}
