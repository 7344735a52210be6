import { describe, expect, it } from 'vitest';
import { specDifferences } from './spec-diff.js';

describe('specDifferences (a TalosConfig spec against the TalosControlPlane spec it was copied from)', () => {
  it('equal specs, and absent fields against their zero values, do not differ', () => {
    const tcp = { generateType: 'controlplane', talosVersion: 'v1.12', strategicPatches: ['a', 'b'] };
    expect(specDifferences(structuredClone(tcp), tcp)).toEqual([]);
    expect(
      specDifferences(
        { generateType: 'controlplane', hostname: {}, configPatches: [], data: '' },
        {
          generateType: 'controlplane',
        },
      ),
    ).toEqual([]);
  });

  it('names each differing field with both sides, down to list elements and nested fields', () => {
    expect(
      specDifferences(
        { generateType: 'controlplane', talosVersion: 'v1.11', strategicPatches: ['a', 'x'] },
        {
          generateType: 'controlplane',
          talosVersion: 'v1.12',
          strategicPatches: ['a', 'b'],
          hostname: { source: 'InfrastructureName' },
        },
      ),
    ).toEqual([
      { path: 'talosVersion', config: '"v1.11"', controlPlane: '"v1.12"' },
      { path: 'strategicPatches[1]', config: '"x"', controlPlane: '"b"' },
      { path: 'hostname.source', controlPlane: '"InfrastructureName"' },
    ]);
  });

  it('a list longer on one side differs at the extra element', () => {
    expect(specDifferences({ strategicPatches: ['a'] }, { strategicPatches: ['a', 'b'] })).toEqual([
      { path: 'strategicPatches[1]', controlPlane: '"b"' },
    ]);
  });
});
