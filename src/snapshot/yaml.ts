import { isNode, LineCounter, parseAllDocuments, type Tags, type YAMLError } from 'yaml';
import { inputError, type Location } from '../errors.js';
import type { Path } from '../util/walk.js';

/** Where a text came from, for error messages: a file, an object (ConfigMap key), or both. */
export interface TextOrigin {
  file?: string;
  object?: string;
}

/** A field path into a parsed document (the walker's path: names and list indexes). */
export type FieldPath = Path;

/** One parsed YAML (or JSON) document with enough position data to point at a field. */
export interface ParsedDoc {
  value: unknown;
  /** 1-based line where the document's content starts. */
  line: number;
  /** Line and column (1-based) of the node at `path`, when the text was YAML and the node exists. */
  locate(path: FieldPath): { line: number; column: number } | undefined;
}

// Kubernetes reads YAML through go-yaml v2 (YAML 1.1: octal 0644, merge keys) but leaves
// timestamps as strings; match that so a hand-written manifest means what it means to kubectl.
const YAML_OPTIONS = {
  version: '1.1',
  merge: true,
  prettyErrors: true,
  customTags: (tags: Tags): Tags =>
    tags.filter((t) => typeof t === 'string' || t.tag !== 'tag:yaml.org,2002:timestamp'),
} as const;

/**
 * Parses a multi-document YAML text. Empty documents (only comments, or `---` separators) are
 * skipped. A syntax error throws an input error naming file, line and column.
 */
export function parseYamlDocuments(text: string, origin: TextOrigin): ParsedDoc[] {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { ...YAML_OPTIONS, lineCounter });
  if (!Array.isArray(docs)) return [];
  const out: ParsedDoc[] = [];
  for (const doc of docs) {
    const err = doc.errors[0];
    if (err) throw yamlError(err, origin);
    if (doc.contents === null) continue;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 1000 });
    } catch (cause) {
      const start = doc.contents.range?.[0] ?? 0;
      const pos = lineCounter.linePos(start);
      throw inputError(
        `cannot read YAML document: ${(cause as Error).message}`,
        { ...origin, line: pos.line, column: pos.col },
        'fix the document (aliases, tags) so that it is plain data',
        cause,
      );
    }
    if (value === null || value === undefined) continue;
    const start = doc.contents.range?.[0] ?? 0;
    out.push({
      value,
      line: lineCounter.linePos(start).line,
      locate(path) {
        const node = doc.getIn(path, true);
        if (!isNode(node) || !node.range) return undefined;
        const p = lineCounter.linePos(node.range[0]);
        return { line: p.line, column: p.col };
      },
    });
  }
  return out;
}

function yamlError(err: YAMLError, origin: TextOrigin) {
  const pos = err.linePos?.[0];
  const loc: Location = { ...origin };
  if (pos) {
    loc.line = pos.line;
    loc.column = pos.col;
  }
  // The first line of a pretty YAML error is the message; the rest is a source excerpt.
  const message = (err.message.split('\n')[0] ?? err.message).replace(/ at line \d+, column \d+:?$/, '');
  return inputError(
    `malformed YAML: ${message}`,
    loc,
    'fix the YAML syntax at that position (indentation, quoting, a missing ":")',
    err,
  );
}

/** Parses a JSON text; a syntax error names file, line and column. */
export function parseJsonText(text: string, origin: TextOrigin): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw jsonError(text, cause as Error, origin);
  }
}

export function jsonError(
  text: string,
  cause: Error,
  origin: TextOrigin,
  remediation = 'fix the JSON syntax at that position, or produce the file again with the documented command',
) {
  // V8's messages carry no position for most errors (and quote the text): find it ourselves.
  const found = findJsonError(text) ?? { offset: text.length, message: 'invalid JSON' };
  const pos = lineColumn(text, found.offset);
  return inputError(
    `malformed JSON: ${found.message}`,
    { ...origin, line: pos.line, column: pos.column },
    remediation,
    cause,
  );
}

/** The offset and reason of the first JSON syntax error, or undefined for valid JSON. */
export function findJsonError(text: string): { offset: number; message: string } | undefined {
  const n = text.length;
  let i = 0;
  const fail = (message: string): never => {
    throw { offset: i, message };
  };
  const ws = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const expect = (ch: string, what: string) => {
    ws();
    if (text[i] !== ch) fail(i >= n ? `unexpected end of input, expected ${what}` : `expected ${what}`);
    i++;
  };
  const string = () => {
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return;
      }
      if (c === 92) {
        const e = text[i + 1] ?? '';
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('bad \\u escape in a string');
          i += 6;
        } else if ('"\\/bfnrt'.includes(e) && e !== '') {
          i += 2;
        } else {
          fail('bad escape in a string');
        }
      } else if (c < 0x20) {
        fail('control character (e.g. a raw newline) inside a string');
      } else {
        i++;
      }
    }
    fail('unterminated string');
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"')
          fail(
            i >= n ? 'unexpected end of input inside an object' : 'expected a property name in double quotes',
          );
        string();
        expect(':', "':' after a property name");
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail(
          i >= n ? 'unexpected end of input inside an object' : "expected ',' or '}' after a property value",
        );
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail(i >= n ? 'unexpected end of input inside a list' : "expected ',' or ']' after a list element");
      }
    }
    if (c === '"') {
      string();
      return;
    }
    const num = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    num.lastIndex = i;
    if (num.exec(text)) {
      i = num.lastIndex;
      return;
    }
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return;
      }
    }
    fail(
      i >= n
        ? 'unexpected end of input, expected a value'
        : `unexpected ${JSON.stringify(c)}, expected a value`,
    );
  };
  try {
    value();
    ws();
    if (i < n) fail('unexpected text after the JSON value');
    return undefined;
  } catch (e) {
    if (typeof e === 'object' && e !== null && 'offset' in e) return e as { offset: number; message: string };
    // Nesting deep enough to exhaust the stack: no position to give.
    return { offset: 0, message: 'JSON nested too deeply' };
  }
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: end - lineStart + 1 };
}

/**
 * Parses a file's text by its extension: `.json` as one JSON document, anything else as
 * multi-document YAML. JSON documents carry no field positions.
 */
export function parseDocumentsByExtension(text: string, name: string, origin: TextOrigin): ParsedDoc[] {
  if (name.toLowerCase().endsWith('.json')) {
    const value = parseJsonText(text, origin);
    return [{ value, line: 1, locate: () => undefined }];
  }
  return parseYamlDocuments(text, origin);
}
