/**
 * The CustomResourceDefinitions the lab's Cluster API serves: exactly the upstream CRDs of the
 * repository's copy (schemas/capi), installed as a user installs them, so that a kind ferry
 * creates but does not ship is missing in the lab as it would be on a real server.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { KubeRequester } from '../../adapters/kube/request.js';
import { capiSchemasDir } from '../../generate/schema/specs.js';
import { isKubeApiError } from '../../ports/kube.js';

type Json = Record<string, unknown>;

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** The CRDs of schemas/capi, file name order. */
export function capiCrds(): Json[] {
  const dir = capiSchemasDir();
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => parse(readFileSync(join(dir, f), 'utf8')) as Json);
}

/** Creates every CRD the lab's Cluster API serves; ones already there are left as they are. */
export async function installLabCapiCrds(api: KubeRequester): Promise<void> {
  for (const body of capiCrds()) {
    try {
      await api.request('POST', CRD_PATH, { body });
    } catch (err) {
      if (!isKubeApiError(err, 409)) throw err;
    }
  }
}
