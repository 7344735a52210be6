import { describe, expect, it } from 'vitest';
import { thrown } from '../testing-errors.js';
import { formatPath } from '../util/walk.js';
import { parseDocumentsByExtension, parseJsonText, parseYamlDocuments } from './yaml.js';

describe('parseYamlDocuments', () => {
  it('splits documents, skips empty ones and reports where each starts', () => {
    const docs = parseYamlDocuments('a: 1\n---\n# only a comment\n---\n\nb:\n  c: [1, 2]\n', {
      file: 'f.yaml',
    });
    expect(docs.map((d) => d.value)).toEqual([{ a: 1 }, { b: { c: [1, 2] } }]);
    expect(docs[1]?.line).toBe(6);
    expect(docs[1]?.locate(['b', 'c', 1])).toEqual({ line: 7, column: 10 });
    expect(docs[1]?.locate(['nope'])).toBeUndefined();
  });

  it('reads YAML as Kubernetes does: octal modes, merge keys, timestamps stay strings', () => {
    const [d] = parseYamlDocuments(
      'mode: 0644\nbase: &b {x: 1}\nm:\n  <<: *b\n  z: 2\nt: 2024-01-02T03:04:05Z\n',
      {},
    );
    expect(d?.value).toEqual({ mode: 420, base: { x: 1 }, m: { x: 1, z: 2 }, t: '2024-01-02T03:04:05Z' });
  });

  it('names file, line and column of a syntax error', () => {
    const e = thrown(() => parseYamlDocuments('ok: 1\n---\na: [1, 2\nb: 3\n', { file: 'x.yaml' }));
    expect(e.exitCode).toBe(2);
    expect(e.message).toMatch(/^malformed YAML/);
    expect(e.location).toMatchObject({ file: 'x.yaml', line: 4, column: 1 });
    expect(e.remediation).toBeTruthy();
  });

  it('rejects duplicate keys with their position, and names an object when given', () => {
    const e = thrown(() => parseYamlDocuments('a: 1\nb: 2\na: 3\n', { object: 'ConfigMap kube-system/x' }));
    expect(e.location).toMatchObject({ object: 'ConfigMap kube-system/x', line: 3, column: 1 });
  });
});

describe('JSON', () => {
  it('names line and column of a JSON syntax error', () => {
    const e = thrown(() => parseJsonText('{\n  "a": 1,\n  "b": }\n', { file: 'r.json' }));
    expect(e.location).toMatchObject({ file: 'r.json', line: 3, column: 8 });
  });

  it('chooses the parser by extension', () => {
    expect(parseDocumentsByExtension('{"a": 1}', 'x.JSON', {})[0]?.value).toEqual({ a: 1 });
    expect(parseDocumentsByExtension('a: 1\n---\nb: 2', 'x.yml', {}).length).toBe(2);
  });
});

it('formatPath renders field paths', () => {
  expect(formatPath(['spec', 'containers', 0, 'command'])).toBe('spec.containers[0].command');
  expect(formatPath([])).toBe('');
});

describe('findJsonError', () => {
  it('accepts valid JSON and locates the first error in invalid JSON', async () => {
    const { findJsonError } = await import('./yaml.js');
    expect(findJsonError('{"a": [1, -2.5e3, true, null, "x\\u00e9"]}')).toBeUndefined();
    expect(findJsonError('{"a": 1')).toEqual({
      offset: 7,
      message: 'unexpected end of input inside an object',
    });
    expect(findJsonError('{"a": "line\nbreak"}')?.offset).toBe(11);
    expect(findJsonError('[1, 2] x')?.message).toBe('unexpected text after the JSON value');
    expect(findJsonError("{'a': 1}")?.message).toBe('expected a property name in double quotes');
  });
});
