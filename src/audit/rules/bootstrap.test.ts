import { describe, expect, it } from 'vitest';
import { makeContext, makeSnapshot, token } from '../testing.js';
import { TALOS_BOOTSTRAP_GROUP, tokenGroups, tokenTtl } from './bootstrap.js';

const ctx = (tokens: ReturnType<typeof token>[]) =>
  makeContext(makeSnapshot({ resources: { bootstrapTokens: tokens } }));

describe('bootstrap.token-ttl', () => {
  it('fires when every token expires, quoting each token', () => {
    const result = tokenTtl.check(ctx([token('abcdef', { expiration: '2026-09-01T00:00:00Z' })]));
    expect(Array.isArray(result)).toBe(true);
    const [f] = result as Exclude<typeof result, { kind: string }>;
    expect(f!.evidence[0]).toMatchObject({
      kind: 'object',
      object: { kind: 'Secret', namespace: 'kube-system', name: 'bootstrap-token-abcdef' },
      field: 'data.expiration',
      observed: 'expires 2026-09-01T00:00:00Z',
    });
    expect(f!.remediation).toContain('--ttl 0');
  });

  it('fires when there is no token at all, saying how to add them to a snapshot', () => {
    const [f] = tokenTtl.check(ctx([])) as { message: string }[];
    expect(f!.message).toMatch(/no bootstrap-token Secret/);
  });

  it('fires when the only non-expiring token cannot authenticate', () => {
    expect(tokenTtl.check(ctx([token('abcdef', { usages: ['signing'] })]))).toHaveLength(1);
  });

  it('does not fire when a non-expiring authentication token exists', () => {
    expect(
      tokenTtl.check(ctx([token('abcdef', { expiration: '2026-09-01T00:00:00Z' }), token('zyxwvu')])),
    ).toEqual([]);
  });
});

describe('bootstrap.token-groups', () => {
  it('fires for a usable token bound only to kubeadm groups', () => {
    const result = tokenGroups.check(ctx([token('zyxwvu')])) as {
      evidence: { field?: string; observed?: string }[];
    }[];
    expect(result).toHaveLength(1);
    expect(result[0]!.evidence[0]).toMatchObject({
      field: 'data.auth-extra-groups',
      observed: 'system:bootstrappers:kubeadm:default-node-token',
    });
  });

  it('does not fire when the token carries the Talos group', () => {
    const t = token('zyxwvu', {
      authExtraGroups: ['system:bootstrappers:kubeadm:default-node-token', TALOS_BOOTSTRAP_GROUP],
    });
    expect(tokenGroups.check(ctx([t]))).toEqual([]);
  });

  it('is not applicable without a usable token (token-ttl reports that)', () => {
    expect(tokenGroups.check(ctx([token('abcdef', { expiration: '2026-09-01T00:00:00Z' })]))).toMatchObject({
      kind: 'not-applicable',
    });
  });
});
