import { expect, it } from 'vitest';
import { STEP_KINDS } from '../../plan/model.js';
import { HANDLERS, type Handlers } from './index.js';

it('has exactly one handler per step kind', () => {
  expect(Object.keys(HANDLERS).sort()).toEqual([...STEP_KINDS].sort());
  for (const kind of STEP_KINDS) {
    const h = HANDLERS[kind];
    expect(['observe', 'wait', 'act'], kind).toContain(h.mode);
    if (h.mode === 'act') expect(typeof h.act, kind).toBe('function');
  }
});

// A compile-time test, run by `tsc --noEmit` (scripts/test.sh): should the table's type stop
// demanding every kind, the directive below is unused and the typecheck fails.
it('a table without the handler of one kind does not compile', () => {
  const { drill, ...withoutDrill } = HANDLERS;
  // @ts-expect-error: 'drill' is missing; every step kind needs its handler
  const incomplete: Handlers = withoutDrill;
  expect(drill).toBeDefined();
  expect(Object.keys(incomplete)).not.toContain('drill');
});
