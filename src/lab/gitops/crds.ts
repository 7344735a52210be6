/**
 * The Argo CD and Flux CRDs the lab can serve: the upstream files of schemas/gitops (README there
 * names each source), installed as a user installs them, so that the lab answers for
 * Applications, Kustomizations and HelmReleases exactly as a cluster running those controllers
 * does, and 404 for them until they are installed (a cluster without the controllers).
 */
import type { KubeRequester } from '../../adapters/kube/request.js';
import { schemaPath } from '../../generate/schema/specs.js';
import { crdsIn, installCrds } from '../apiserver/install-crds.js';

/** The CRDs of schemas/gitops, file name order. */
export function gitopsCrds(): Record<string, unknown>[] {
  return crdsIn(schemaPath('gitops'));
}

/** Creates the Argo CD and Flux CRDs; ones already there are left as they are. */
export async function installLabGitopsCrds(api: KubeRequester): Promise<void> {
  await installCrds(api, gitopsCrds());
}
