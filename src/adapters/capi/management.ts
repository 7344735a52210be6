/**
 * The run's ManagementPort over a Cluster API management cluster: adoption of the kit's objects
 * (src/capi/adopt-apply.ts, every object CRD-validated before anything is sent) and the
 * TalosControlPlane's state and pause.
 */

import type { CrdValidator } from '../../generate/schema/crd.js';
import type { AdoptOutcome, ControlPlaneView, ManagementPort } from '../../ports/run.js';
import type { KubeObject } from '../../snapshot/model.js';
import type { KubeRequester } from '../kube/request.js';
import { adopt } from './adopt-apply.js';
import type { MgmtApi } from './mgmt-api.js';

export class ManagementCluster implements ManagementPort {
  readonly #req: KubeRequester;
  readonly #api: MgmtApi;
  readonly #kit: KubeObject[];
  readonly #crds: CrdValidator;

  constructor(o: { req: KubeRequester; api: MgmtApi; kit: KubeObject[]; crds: CrdValidator }) {
    this.#req = o.req;
    this.#api = o.api;
    this.#kit = o.kit;
    this.#crds = o.crds;
  }

  adopt(opts: { kubeadmMembersRemain: boolean }): Promise<AdoptOutcome> {
    return adopt(this.#req, this.#kit, { kubeadmMembersRemain: opts.kubeadmMembersRemain, crds: this.#crds });
  }

  controlPlane(): Promise<ControlPlaneView | undefined> {
    return this.#api.controlPlane();
  }

  pauseControlPlane(): Promise<void> {
    return this.#api.pauseControlPlane();
  }
}
