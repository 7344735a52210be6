import { describe, expect, it } from 'vitest';
import type { NotObserved, SnapshotInput } from '../snapshot/model.js';
import { ALL_RULES } from './rules/index.js';
import { makeSnapshot } from './testing.js';
import { unobservedForAudit } from './unobserved-gate.js';

const refused = (input: SnapshotInput, resource: string): NotObserved => ({
  input,
  reason: 'forbidden',
  verb: 'list',
  group: '',
  resource,
  message: `${resource} is forbidden`,
});

describe('what snapshot refuses to keep without --allow-partial', () => {
  it('the unobserved inputs some rule reads, and the rules they would skip', () => {
    const manifest = makeSnapshot().manifest;
    manifest.unobserved = [refused('nodes', 'nodes'), refused('bootstrapTokens', 'secrets')];
    const r = unobservedForAudit(manifest, ALL_RULES);
    expect(r.inputs).toEqual(['nodes', 'bootstrapTokens']);
    expect(r.reads).toEqual(manifest.unobserved);
    expect(r.rules).toEqual(
      expect.arrayContaining(['bootstrap.token-ttl', 'nodes.name-reuse', 'workload.node-pinned']),
    );
    expect(r.rules).not.toContain('pki.ca-key-missing');
  });

  it('nothing for an input no rule reads, or when everything was observed', () => {
    const manifest = makeSnapshot().manifest;
    manifest.unobserved = [refused('storageclasses', 'storageclasses')];
    expect(ALL_RULES.some((r) => r.reads.includes('storageclasses'))).toBe(false);
    expect(unobservedForAudit(manifest, ALL_RULES)).toEqual({ reads: [], inputs: [], rules: [] });
    manifest.unobserved = [];
    expect(unobservedForAudit(manifest, ALL_RULES).reads).toEqual([]);
  });
});
