/**
 * Installing upstream CRD files into a lab API server as a user does (`kubectl create -f`): each
 * file of a schemas/ folder POSTed once; one already there is left as it is.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { KubeRequester } from '../../adapters/kube/request.js';
import { isKubeApiError } from '../../ports/kube.js';

type Json = Record<string, unknown>;

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** The CRDs of a folder's *.yaml files, file name order. */
export function crdsIn(dir: string): Json[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => parse(readFileSync(join(dir, f), 'utf8')) as Json);
}

export async function installCrds(api: KubeRequester, crds: readonly Json[]): Promise<void> {
  for (const body of crds) {
    try {
      await api.request('POST', CRD_PATH, { body });
    } catch (err) {
      if (!isKubeApiError(err, 409)) throw err;
    }
  }
}
