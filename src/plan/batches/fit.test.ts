import { describe, expect, it } from 'vitest';
import type { Taint } from '../../snapshot/model.js';
import { admits } from './fit.js';
import type { NodeTerm, Scheduling } from './model.js';

// The scheduler's predicates as the planner applies them: taints against tolerations, the node
// selector, and the required node affinity lists (terms ORed, requirements ANDed, lists ANDed).

const pod = (s: Partial<Scheduling> = {}): Scheduling => ({
  tolerations: [],
  nodeSelector: {},
  required: [],
  ...s,
});
const req = (key: string, operator: string, ...values: string[]): NodeTerm => ({ key, operator, values });
/** One required list of one term. */
const affinity = (...term: NodeTerm[]): Scheduling => pod({ required: [[term]] });

const noSchedule: Taint = { key: 'dedicated', value: 'db', effect: 'NoSchedule' };

describe('admits: taints and tolerations', () => {
  it('a NoSchedule or NoExecute taint keeps out a pod that does not tolerate it; PreferNoSchedule does not', () => {
    expect(admits(pod(), {}, [])).toBe(true);
    expect(admits(pod(), {}, [noSchedule])).toBe(false);
    expect(admits(pod(), {}, [{ ...noSchedule, effect: 'NoExecute' }])).toBe(false);
    expect(admits(pod(), {}, [{ ...noSchedule, effect: 'PreferNoSchedule' }])).toBe(true);
  });

  it('a toleration matches by key, value and effect; Equal compares values, a missing value is empty', () => {
    const t = (tol: Scheduling['tolerations'][number], taint: Taint = noSchedule) =>
      admits(pod({ tolerations: [tol] }), {}, [taint]);
    expect(t({ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' })).toBe(true);
    expect(t({ key: 'dedicated', value: 'db' })).toBe(true); // no operator is Equal; no effect is any
    expect(t({ key: 'dedicated', value: 'web' })).toBe(false);
    expect(t({ key: 'other', value: 'db' })).toBe(false);
    expect(t({ key: 'dedicated', value: 'db', effect: 'NoExecute' })).toBe(false);
    expect(t({ key: 'dedicated' }, { key: 'dedicated', effect: 'NoSchedule' })).toBe(true);
    expect(t({ key: 'dedicated', value: '' }, { key: 'dedicated', effect: 'NoSchedule' })).toBe(true);
    expect(t({ key: 'dedicated' })).toBe(false); // a taint with a value is not matched by none
  });

  it('Exists matches any value; with no key it tolerates every taint, limited by its effect', () => {
    const taints: Taint[] = [noSchedule, { key: 'gpu', value: 'a100', effect: 'NoExecute' }];
    expect(admits(pod({ tolerations: [{ key: 'dedicated', operator: 'Exists' }] }), {}, [noSchedule])).toBe(
      true,
    );
    expect(admits(pod({ tolerations: [{ key: 'dedicated', operator: 'Exists' }] }), {}, taints)).toBe(false);
    expect(admits(pod({ tolerations: [{ operator: 'Exists' }] }), {}, taints)).toBe(true);
    expect(admits(pod({ tolerations: [{ operator: 'Exists', effect: 'NoSchedule' }] }), {}, taints)).toBe(
      false,
    );
  });

  it('every taint needs its own toleration', () => {
    const taints: Taint[] = [noSchedule, { key: 'gpu', effect: 'NoSchedule' }];
    const one = pod({ tolerations: [{ key: 'dedicated', value: 'db' }] });
    const both = pod({
      tolerations: [
        { key: 'dedicated', value: 'db' },
        { key: 'gpu', operator: 'Exists' },
      ],
    });
    expect(admits(one, {}, taints)).toBe(false);
    expect(admits(both, {}, taints)).toBe(true);
  });
});

describe('admits: node selector and required affinity', () => {
  it('every nodeSelector label must be there with its value', () => {
    const s = pod({ nodeSelector: { zone: 'a', disk: 'ssd' } });
    expect(admits(s, { zone: 'a', disk: 'ssd', extra: 'x' }, [])).toBe(true);
    expect(admits(s, { zone: 'a' }, [])).toBe(false);
    expect(admits(s, { zone: 'b', disk: 'ssd' }, [])).toBe(false);
  });

  it('In, NotIn, Exists, DoesNotExist', () => {
    const labels = { zone: 'a' };
    expect(admits(affinity(req('zone', 'In', 'a', 'b')), labels, [])).toBe(true);
    expect(admits(affinity(req('zone', 'In', 'b')), labels, [])).toBe(false);
    expect(admits(affinity(req('rack', 'In', 'a')), labels, [])).toBe(false);
    expect(admits(affinity(req('zone', 'NotIn', 'b')), labels, [])).toBe(true);
    expect(admits(affinity(req('zone', 'NotIn', 'a')), labels, [])).toBe(false);
    expect(admits(affinity(req('rack', 'NotIn', 'a')), labels, [])).toBe(true);
    expect(admits(affinity(req('zone', 'Exists')), labels, [])).toBe(true);
    expect(admits(affinity(req('rack', 'Exists')), labels, [])).toBe(false);
    expect(admits(affinity(req('rack', 'DoesNotExist')), labels, [])).toBe(true);
    expect(admits(affinity(req('zone', 'DoesNotExist')), labels, [])).toBe(false);
  });

  it('an empty label value is a value: In "" holds, Exists holds', () => {
    expect(admits(affinity(req('edge', 'In', '')), { edge: '' }, [])).toBe(true);
    expect(admits(affinity(req('edge', 'Exists')), { edge: '' }, [])).toBe(true);
    expect(admits(affinity(req('edge', 'DoesNotExist')), { edge: '' }, [])).toBe(false);
  });

  it('Gt and Lt compare integers; a missing label or a value that is not an integer never holds', () => {
    const labels = { cores: '8', version: '1.5' };
    expect(admits(affinity(req('cores', 'Gt', '4')), labels, [])).toBe(true);
    expect(admits(affinity(req('cores', 'Gt', '8')), labels, [])).toBe(false);
    expect(admits(affinity(req('cores', 'Lt', '16')), labels, [])).toBe(true);
    expect(admits(affinity(req('cores', 'Lt', '8')), labels, [])).toBe(false);
    expect(admits(affinity(req('cores', 'Lt', '9')), labels, [])).toBe(true);
    expect(admits(affinity(req('cores', 'Gt', '7')), labels, [])).toBe(true);
    expect(admits(affinity(req('version', 'Gt', '1')), labels, [])).toBe(false);
    expect(admits(affinity(req('cores', 'Gt', 'four')), labels, [])).toBe(false);
    expect(admits(affinity(req('cores', 'Lt', 'x')), labels, [])).toBe(false);
    expect(admits(affinity(req('memory', 'Lt', '100')), labels, [])).toBe(false);
    // As the scheduler's ParseInt: digits and a sign, nothing JavaScript's Number would also take.
    for (const odd of ['', ' 8', '0x10', '1e3', '8.0'])
      expect(admits(affinity(req('cores', 'Gt', '-1')), { cores: odd }, [])).toBe(false);
    expect(admits(affinity(req('cores', 'Gt', '-1')), { cores: '+0' }, [])).toBe(true);
    expect(admits(affinity(req('cores', 'Lt', '1')), {}, [])).toBe(false);
  });

  it('an operator the scheduler does not know never holds', () => {
    expect(admits(affinity(req('zone', 'Matches', 'a')), { zone: 'a' }, [])).toBe(false);
  });

  it('a term ANDs its requirements, terms of a list are ORed, and every list must hold', () => {
    const zoneA = req('zone', 'In', 'a');
    const ssd = req('disk', 'In', 'ssd');
    const anded = pod({ required: [[[zoneA, ssd]]] });
    expect(admits(anded, { zone: 'a', disk: 'ssd' }, [])).toBe(true);
    expect(admits(anded, { zone: 'a' }, [])).toBe(false);
    const ored = pod({ required: [[[zoneA], [ssd]]] });
    expect(admits(ored, { disk: 'ssd' }, [])).toBe(true);
    expect(admits(ored, { zone: 'b' }, [])).toBe(false);
    // The pod's affinity and its volume's node affinity: both.
    const lists = pod({ required: [[[zoneA]], [[ssd]]] });
    expect(admits(lists, { zone: 'a', disk: 'ssd' }, [])).toBe(true);
    expect(admits(lists, { zone: 'a' }, [])).toBe(false);
    expect(admits(lists, { disk: 'ssd' }, [])).toBe(false);
  });

  it('labels are looked up as own keys only', () => {
    expect(admits(affinity(req('toString', 'Exists')), {}, [])).toBe(false);
    expect(admits(affinity(req('constructor', 'DoesNotExist')), {}, [])).toBe(true);
  });
});
