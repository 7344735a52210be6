import { describe, expect, it } from 'vitest';
import { formatPath, type Problem, Walk } from './walk.js';
import { arrayOf, byKind, fields, int, name, nullable, oneOf, opt, refine, str } from './walk-checks.js';

/** A collecting walk and what it collected, as `field: kind expected`. */
function collecting(value: unknown, opts: { nullIsAbsent?: boolean } = {}) {
  const problems: Problem[] = [];
  const w = Walk.root(
    value,
    (p) => {
      problems.push(p);
      return undefined;
    },
    opts,
  );
  const said = () => problems.map(line);
  return { w, problems, said };
}

function line(p: Problem): string {
  const at = formatPath(p.path);
  switch (p.kind) {
    case 'missing':
      return `${at}: missing${p.expected ? ` ${p.expected}` : ''}`;
    case 'wrong':
      return `${at}: wrong ${p.expected}, found ${JSON.stringify(p.found)}`;
    case 'unknown-field':
      return `${at}: unknown`;
    case 'invalid':
      return `${at}: ${p.message}`;
  }
}

class Stop extends Error {
  constructor(readonly problem: Problem) {
    super(problem.kind);
  }
}

/** A walk that throws at the first problem, as the loaders' do. */
function throwing(value: unknown, opts: { nullIsAbsent?: boolean } = {}): Walk {
  return Walk.root(
    value,
    (p) => {
      throw new Stop(p);
    },
    opts,
  );
}

function stopped(fn: () => unknown): Problem {
  try {
    fn();
  } catch (e) {
    if (e instanceof Stop) return e.problem;
    throw e;
  }
  throw new Error('expected the walk to stop');
}

describe('formatPath', () => {
  it('joins names with dots and puts indices in brackets', () => {
    expect(formatPath([])).toBe('');
    expect(formatPath(['a', 'b', 2, 'c'])).toBe('a.b[2].c');
    expect(formatPath([0, 'metadata', 'name'])).toBe('[0].metadata.name');
  });
});

describe('Walk', () => {
  it('a throwing walk returns typed values and stops at the first problem, with its path and the value', () => {
    const w = throwing({ spec: { replicas: 3, names: ['a', 7] } });
    expect(w.at('spec', 'replicas').int({ min: 0 })).toBe(3);
    expect(w.at('spec').at('names').items()[0]?.string()).toBe('a');
    expect(stopped(() => w.at('spec', 'names', 1).string())).toEqual({
      kind: 'wrong',
      path: ['spec', 'names', 1],
      want: 'string',
      expected: 'a string',
      found: 7,
    });
    expect(stopped(() => w.at('spec', 'nope').bool())).toMatchObject({
      kind: 'missing',
      path: ['spec', 'nope'],
      expected: 'true or false',
    });
    expect(w.at('nothing', 'under', 'it').absent).toBe(true);
  });

  it('a collecting walk goes on: every problem is reported and failed checks return undefined', () => {
    const { w, said } = collecting({ a: 'x', b: -1, c: [1, 'two'] });
    expect(w.at('a').int({ min: 0 })).toBeUndefined();
    expect(w.at('b').int({ min: 0, max: 5 })).toBeUndefined();
    expect(
      w
        .at('c')
        .items()
        .map((x) => x.string()),
    ).toEqual([undefined, 'two']);
    expect(said()).toEqual([
      'a: wrong a whole number of at least 0, found "x"',
      'b: wrong a whole number from 0 to 5, found -1',
      'c[0]: wrong a string, found 1',
    ]);
  });

  it('null is a value in JSON and nothing in YAML', () => {
    expect(collecting({ a: null }).w.at('a').absent).toBe(false);
    expect(collecting({ a: null }, { nullIsAbsent: true }).w.at('a').absent).toBe(true);
    expect(throwing({ a: null }, { nullIsAbsent: true }).at('a').given()?.int({ min: 0 }) ?? 6443).toBe(6443);
    expect(stopped(() => throwing({ a: null }).at('a').given()?.int({ min: 0 }))).toMatchObject({
      kind: 'wrong',
      found: null,
    });
  });

  it('reads own keys only', () => {
    const w = throwing({});
    expect(w.at('constructor').absent).toBe(true);
    expect(w.at('toString').absent).toBe(true);
  });

  it('a mapping that takes only some keys names the one that does not belong', () => {
    const { w, said } = collecting({ name: 'a', nmae: 'b', extra: 1 });
    expect(w.object({ allowed: ['name'] })).toEqual({ name: 'a', nmae: 'b', extra: 1 });
    expect(said()).toEqual(['nmae: unknown', 'extra: unknown']);
    expect(stopped(() => throwing([]).object())).toMatchObject({ want: 'object', expected: 'an object' });
  });

  it('strings: empty, blank and patterns', () => {
    const { w, said } = collecting({ e: '', b: '  ', id: '12a', ok: '12' });
    expect(w.at('e').string()).toBe('');
    w.at('e').string({ nonEmpty: true });
    expect(w.at('b').string({ nonEmpty: true })).toBe('  ');
    w.at('b').string({ nonBlank: true });
    w.at('id').string({ pattern: /^\d+$/, expected: 'a decimal uint64 string' });
    w.at('ok').string({ pattern: /^[a-z]+$/ });
    expect(w.at('ok').string({ pattern: /^\d+$/ })).toBe('12');
    expect(said()).toEqual([
      'e: wrong a non-empty string, found ""',
      'b: wrong a non-empty string, found "  "',
      'id: wrong a decimal uint64 string, found "12a"',
      'ok: wrong a string matching /^[a-z]+$/, found "12"',
    ]);
  });

  it('numbers: finite, at least, above; booleans; choices', () => {
    const { w, said } = collecting({ inf: null, zero: 0, half: 0.5, yes: 'yes', k: 'c' });
    w.at('inf').number();
    expect(w.at('zero').number({ min: 0 })).toBe(0);
    w.at('zero').number({ above: 0, expected: 'a number of seconds greater than 0' });
    w.at('half').int({ min: 0 });
    w.at('yes').bool();
    expect(w.at('k').oneOf(['a', 'b', 'c'])).toBe('c');
    w.at('k').oneOf(['a', 'b']);
    w.at('k').oneOf(['a']);
    expect(said()).toEqual([
      'inf: wrong a number, found null',
      'zero: wrong a number of seconds greater than 0, found 0',
      'half: wrong a whole number of at least 0, found 0.5',
      'yes: wrong true or false, found "yes"',
      'k: wrong one of a, b, found "c"',
      'k: wrong "a", found "c"',
    ]);
    expect(throwing(1.5).number()).toBe(1.5);
    expect(stopped(() => throwing(Number.POSITIVE_INFINITY).number())).toMatchObject({ kind: 'wrong' });
    expect(stopped(() => throwing(Number.NaN).number())).toMatchObject({ kind: 'wrong' });
  });

  it('lists of at least some items; the entries of a mapping', () => {
    const { w, said } = collecting({ none: [], m: { a: 1, b: 2 } });
    expect(w.at('none').items({ min: 1 })).toEqual([]);
    expect(w.at('m').items()).toEqual([]);
    expect(
      w
        .at('m')
        .entries()
        .map(([k, x]) => [k, x.field, x.value]),
    ).toEqual([
      ['a', 'm.a', 1],
      ['b', 'm.b', 2],
    ]);
    expect(said()).toEqual([
      'none: wrong a list of at least 1 item(s), found []',
      'm: wrong an array, found {"a":1,"b":2}',
    ]);
  });

  it('names the subject a problem belongs to, and counts the problems under a place', () => {
    const { w, problems } = collecting({ steps: [{ id: 's1', n: 'x' }] });
    const step = w.at('steps', 0).about('s1');
    step.at('n').int({ min: 0 });
    w.at('steps', 0, 'n').int({ min: 0 });
    expect(problems.map((p) => p.subject)).toEqual(['s1', undefined]);
    const { walk, problems: counted } = w.at('steps').counted();
    walk.at(0, 'id').string();
    expect(counted()).toBe(0);
    walk.at(0, 'id').int({ min: 0 });
    expect(counted()).toBe(1);
    expect(problems).toHaveLength(3);
  });

  it('rules of the caller, with their fix', () => {
    expect(stopped(() => throwing({ a: 1 }).at('a').invalid('must be odd', 'use 3'))).toEqual({
      kind: 'invalid',
      path: ['a'],
      message: 'must be odd',
      fix: 'use 3',
    });
  });
});

describe('declarative checks', () => {
  interface Thing {
    kind: 'thing';
    name: string;
    size: number | null;
    note?: string;
    parts: { name: string }[];
  }
  const thing = fields<Thing>({
    kind: oneOf(['thing']),
    name,
    size: nullable(int(1)),
    note: opt(str),
    parts: arrayOf(fields<{ name: string }>({ name })),
  });

  it('check a whole document at once: every field, every item, each problem at its path', () => {
    const good = collecting({ kind: 'thing', name: 'a', size: null, parts: [{ name: 'p' }] });
    thing(good.w);
    expect(good.said()).toEqual([]);
    const bad = collecting({ kind: 'thing', size: 0, note: 3, parts: [{ name: '' }, {}], more: true });
    thing(bad.w);
    expect(bad.said()).toEqual([
      'name: missing',
      'size: wrong a whole number of at least 1, found 0',
      'note: wrong a string, found 3',
      'parts[0].name: wrong a non-empty string, found ""',
      'parts[1].name: missing',
    ]);
  });

  it('byKind picks the variant by its kind, or says which kinds there are', () => {
    const c = byKind({ a: fields<{ kind: 'a'; x: number }>({ kind: oneOf(['a']), x: int(0) }), b: str });
    const one = collecting({ kind: 'a', x: 'no' });
    c(one.w);
    expect(one.said()).toEqual(['x: wrong a whole number of at least 0, found "no"']);
    const other = collecting({ kind: 'c' });
    c(other.w);
    expect(other.said()).toEqual(['kind: wrong one of a, b, found "c"']);
    const none = collecting({});
    c(none.w);
    expect(none.said()).toEqual(['kind: missing one of a, b']);
  });

  it('refine runs its second check only when the first found nothing', () => {
    const range = refine(fields<{ min: number; max: number }>({ min: int(0), max: int(0) }), (w) => {
      const r = w.value as { min: number; max: number };
      if (r.min > r.max) w.invalid(`min ${r.min} is above max ${r.max}`);
    });
    const shape = collecting({ min: 'x', max: 1 });
    range(shape.w);
    expect(shape.said()).toEqual(['min: wrong a whole number of at least 0, found "x"']);
    const rule = collecting({ min: 3, max: 1 });
    range(rule.w);
    expect(rule.said()).toEqual([': min 3 is above max 1']);
  });

  it('serve a throwing walk too: the first problem stops it', () => {
    expect(stopped(() => thing(throwing({ kind: 'thing', name: 'a', size: 2, parts: [3] })))).toMatchObject({
      path: ['parts', 0],
      expected: 'an object',
    });
  });
});
