/** The management-cluster port of a capi step, or a usage stop saying how to give one. */
import { usageError } from '../../errors.js';
import type { ManagementPort } from '../../ports/run.js';
import type { StepContext } from './context.js';

export function requireMgmt(ctx: StepContext, stepId: string): ManagementPort {
  const m = ctx.deps.mgmt;
  if (!m)
    throw usageError(
      `${stepId} acts on the Cluster API management cluster, and the run has none`,
      'run ferry run --provisioner capi --mgmt-kubeconfig FILE (the management cluster admin kubeconfig)',
    );
  return m;
}
