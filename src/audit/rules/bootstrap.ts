/**
 * Bootstrap tokens (blockers.md "Bootstrap tokens"). Talos kubelets join with a bootstrap token
 * from the secrets bundle; it must exist as a kube-system Secret before the first Talos node boots
 * and must never expire (≤v1.13 Talos KCM runs tokencleaner; the apiserver rejects expired tokens).
 */
import type { BootstrapToken } from '../../snapshot/model.js';
import { evidenceFromSource } from '../findings.js';
import { notApplicable, type Rule, type RuleFinding } from '../rule.js';
import { KIT } from './kit-paths.js';

/** Group Talos's bootstrap RBAC binds (talos.md §5, manifest 01-csr-node-bootstrap). */
export const TALOS_BOOTSTRAP_GROUP = 'system:bootstrappers:nodes';
/** kubeadm's default token group (blockers.md: UNCONFIRMED, kubeadm default). */
export const KUBEADM_BOOTSTRAP_GROUP = 'system:bootstrappers:kubeadm:default-node-token';

const CREATE_TOKEN = `kubeadm token create --ttl 0 --groups ${KUBEADM_BOOTSTRAP_GROUP},${TALOS_BOOTSTRAP_GROUP}`;

/** Tokens a Talos kubelet could bootstrap with for the whole migration. */
export function usableTokens(tokens: readonly BootstrapToken[]): BootstrapToken[] {
  return tokens.filter((t) => t.expiration === undefined && t.usages.includes('authentication'));
}

export const tokenTtl: Rule = {
  id: 'bootstrap.token-ttl',
  family: 'bootstrap',
  severity: 'blocker',
  title: 'No non-expiring bootstrap token for Talos nodes',
  inputs: ['api'],
  reads: ['bootstrapTokens'],
  description:
    'Talos kubelets bootstrap with the token from the secrets bundle; it must exist as a kube-system/bootstrap-token-<id> Secret without expiration before the first Talos node boots (≤v1.13 Talos runs tokencleaner, and expired tokens are rejected).',
  docs: 'docs/rules.md#bootstrap.token-ttl',
  artifacts: [KIT.secrets],
  check(ctx) {
    const tokens = ctx.snapshot.resources.bootstrapTokens;
    if (usableTokens(tokens).length > 0) return [];
    const evidence = tokens.map((t) =>
      evidenceFromSource(t.source.kind === 'object' ? { ...t.source, field: 'data.expiration' } : t.source, {
        ...(t.expiration !== undefined ? { observed: `expires ${t.expiration}` } : {}),
        note: `usages: ${t.usages.join(', ') || 'none'}`,
      }),
    );
    const message =
      tokens.length === 0
        ? 'The snapshot holds no bootstrap-token Secret (type bootstrap.kubernetes.io/token) in kube-system. If the resources dump left Secrets out, add `kubectl -n kube-system get secrets --field-selector type=bootstrap.kubernetes.io/token -o yaml` to resources/ (the loader keeps only id, expiry, usages and groups).'
        : `All ${tokens.length} bootstrap token(s) expire or cannot authenticate; a Talos node joining after the expiry cannot register.`;
    const finding: RuleFinding = {
      message,
      evidence: evidence.length
        ? evidence
        : [
            {
              kind: 'object',
              object: {
                apiVersion: 'v1',
                kind: 'Secret',
                namespace: 'kube-system',
                name: 'bootstrap-token-*',
              },
              field: 'type',
              expected: 'bootstrap.kubernetes.io/token, no expiration, usage-bootstrap-authentication',
              note: 'none found',
            },
          ],
      remediation: `Create the token Talos will use without expiry on a kubeadm control plane (\`${CREATE_TOKEN}\`) and pass it to \`ferry generate --bootstrap-token\` (or create the Secret without an \`expiration\` key).`,
      // One finding per cluster, whatever tokens exist: the problem is the missing usable token.
      subject: { kind: 'BootstrapToken', namespace: 'kube-system', name: 'talos-join' },
      field: 'expiration',
      // secrets.yaml carries the token given to ferry generate --bootstrap-token.
      artifacts: [KIT.secrets],
    };
    return [finding];
  },
};

export const tokenGroups: Rule = {
  id: 'bootstrap.token-groups',
  family: 'bootstrap',
  severity: 'risk',
  title: 'Bootstrap token groups are bound only by kubeadm RBAC',
  inputs: ['api'],
  reads: ['bootstrapTokens'],
  description:
    'kubeadm tokens authenticate as kubeadm groups bound by kubeadm RBAC; Talos binds system:bootstrappers:nodes. Removing the kubeadm bindings during or after the migration breaks Talos nodes that join with a kubeadm token.',
  docs: 'docs/rules.md#bootstrap.token-groups',
  check(ctx) {
    const usable = usableTokens(ctx.snapshot.resources.bootstrapTokens);
    if (usable.length === 0)
      return notApplicable('no non-expiring bootstrap token to check (see bootstrap.token-ttl)');
    const out: RuleFinding[] = [];
    for (const t of usable) {
      if (t.authExtraGroups.includes(TALOS_BOOTSTRAP_GROUP)) continue;
      const groups = t.authExtraGroups.length ? t.authExtraGroups.join(', ') : '(none)';
      const src = t.source.kind === 'object' ? { ...t.source, field: 'data.auth-extra-groups' } : t.source;
      out.push({
        message: `Bootstrap token ${t.id} authenticates as ${groups}, not ${TALOS_BOOTSTRAP_GROUP}: Talos nodes joining with it depend on kubeadm's bootstrap RBAC until the migration ends.`,
        evidence: [
          evidenceFromSource(src, { observed: groups, expected: `includes ${TALOS_BOOTSTRAP_GROUP}` }),
        ],
        remediation: `Keep kubeadm's bootstrap ClusterRoleBindings (kubeadm:kubelet-bootstrap, kubeadm:node-autoapprove-bootstrap) until every node runs Talos, or use a token that also carries ${TALOS_BOOTSTRAP_GROUP} (\`${CREATE_TOKEN}\`).`,
        field: 'data.auth-extra-groups',
      });
    }
    return out;
  },
};

export const BOOTSTRAP_RULES: Rule[] = [tokenTtl, tokenGroups];
