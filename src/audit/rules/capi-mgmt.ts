/**
 * What every capi.* rule file shares: the docs anchor, and "no management cluster in the
 * snapshot" as a skip that says how to provide it.
 */
import type { MgmtSnapshot } from '../../snapshot/model.js';
import { type AuditContext, type RuleResult, skip } from '../rule.js';

export const DOCS = (id: string) => `docs/rules.md#${id}`;

export function withMgmt(ctx: AuditContext, check: (m: MgmtSnapshot) => RuleResult): RuleResult {
  const m = ctx.snapshot.mgmt;
  if (!m)
    return skip(
      ['the management cluster'],
      'take the snapshot with --mgmt-kubeconfig, or add mgmt/ (docs/snapshot-layout.md)',
    );
  return check(m);
}
