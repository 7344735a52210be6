import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { workerPools } from '../generate/capi/pools.js';
import { deriveTalosValues } from '../generate/talos/values.js';
import { loadSnapshot } from '../snapshot/load.js';
import { deriveFacts } from './derive.js';
import {
  capiHostnamePatterns,
  hostnameAllowed,
  mayEqualStableHostname,
  planControlPlaneHostnames,
  reservedNames,
} from './hostnames.js';
import { poolGroupNames } from './worker-groups.js';

const EXAMPLE = join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'examples', 'lab-cluster');

describe('Talos hostnames', () => {
  it('names each control plane talos-<first label>, suffixed past reserved and already planned names', () => {
    const reserved = new Set(['cp-1', 'talos-cp-2', 'talos-cp-2-2']);
    expect(
      planControlPlaneHostnames([{ name: 'cp-1.lab.example' }, { name: 'CP-2' }, { name: 'cp_1' }], reserved),
    ).toEqual([
      { hostname: 'talos-cp-1', replaces: 'cp-1.lab.example' },
      { hostname: 'talos-cp-2-3', replaces: 'CP-2' },
      { hostname: 'talos-cp-1-2', replaces: 'cp_1' },
    ]);
  });

  it('allows only DNS labels that nothing live holds', () => {
    expect(hostnameAllowed('talos-cp-1', new Set(['cp-1']))).toBe(true);
    expect(hostnameAllowed('CP-1', new Set(['cp-1']))).toBe(false);
    expect(hostnameAllowed('cp.1', new Set())).toBe(false);
  });

  it('knows which live names a generated worker or Cluster API name could equal', () => {
    expect(mayEqualStableHostname('Talos-abc-def')).toBe(true);
    expect(mayEqualStableHostname('worker-talos-1')).toBe(false);
    const [cp, worker] = capiHostnamePatterns('lab.x');
    expect(cp!.re.test('lab.x-control-plane-ab12c')).toBe(true);
    expect(cp!.re.test('labax-control-plane-ab12c')).toBe(false);
    expect(worker!.re.test('lab.x-worker-ab12c')).toBe(true);
    expect(worker!.re.test('lab.x-worker-ab12cd')).toBe(false);
    // Worker pools have their own templates: "<cluster>-worker-<group>-xxxxx".
    const pooled = capiHostnamePatterns('lab', ['pool-data-2']);
    expect(pooled.some((p) => p.re.test('lab-worker-pool-data-2-ab12c'))).toBe(true);
    expect(capiHostnamePatterns('lab').some((p) => p.re.test('lab-worker-pool-data-2-ab12c'))).toBe(false);
  });

  it('generate and the audit plan the same names for the example cluster', async () => {
    const facts = deriveFacts(await loadSnapshot(EXAMPLE, { strictPki: false }));
    const reserved = reservedNames(facts);
    expect(reserved.membersKnown).toBe(true);
    const planned = planControlPlaneHostnames(
      facts.nodes.controlPlane.value!,
      new Set(reserved.names.keys()),
    );
    const v = deriveTalosValues(facts);
    if (v.kind !== 'ok') throw new Error(`talos values: ${JSON.stringify(v.missing)}`);
    expect(
      v.values.controlPlane.replacements.map((r) => ({ hostname: r.hostname.value, replaces: r.replaces })),
    ).toEqual(planned);
    expect(planned.map((p) => p.hostname)).toEqual(['talos-cp-1', 'talos-cp-2', 'talos-cp-3']);
    // The worker pools the kit writes templates for are the groups the audit judges.
    const pools = workerPools(v.values, [], [])
      .map((p) => p.group)
      .filter((g) => g !== '');
    expect(poolGroupNames(facts.nodes.workers.value!)).toEqual(pools);
    expect(pools.length).toBeGreaterThan(0);
  });

  it('Cluster API templates named by a management cluster add their own patterns, once each', () => {
    const ps = capiHostnamePatterns(
      'lab',
      [],
      [
        { role: 'worker', name: 'lab-md-0' },
        { role: 'worker', name: 'lab-worker' },
      ],
    );
    expect(ps.map((p) => [p.role, p.prefix])).toEqual([
      ['control plane', 'lab-control-plane-'],
      ['worker', 'lab-worker-'],
      ['worker', 'lab-md-0-'],
    ]);
    expect(ps[2]!.re.test('lab-md-0-ab12c')).toBe(true);
  });
});
