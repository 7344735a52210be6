/** Checking a hand-written YAML document field by field, each problem an input error at its line. */
import { inputError } from '../errors.js';
import { formatPath, type Problem, Walk } from '../util/walk.js';
import { type ParsedDoc, parseYamlDocuments } from './yaml.js';

/**
 * The walk of a configuration document (mgmt.yaml, fleet.yaml): the first problem throws the input error naming the file, the line of the
 * nearest node that exists and the field, with the fix. Values are shown only for numbers, flags
 * and choices: a string in the wrong place may be a secret.
 */
export function walkYamlDoc(doc: ParsedDoc, file: string): Walk {
  const report = (p: Problem): never => {
    let at: { line: number; column: number } | undefined;
    for (let n = p.path.length; n >= 0 && !at; n--) at = doc.locate(p.path.slice(0, n));
    const { message, fix } = worded(p);
    throw inputError(
      message,
      { file, line: at?.line ?? doc.line, field: formatPath(p.path) || '(document)' },
      fix,
    );
  };
  return Walk.root(doc.value, report, { nullIsAbsent: true });
}

function worded(p: Problem): { message: string; fix: string } {
  const field = formatPath(p.path);
  switch (p.kind) {
    case 'missing': {
      const fix = p.hint
        ? `set ${field} (${p.hint})`
        : p.want === 'object'
          ? `add ${field}`
          : `set ${field}${p.expected ? ` to ${p.expected}` : ''}`;
      return { message: `${field || 'the document'} is missing`, fix };
    }
    case 'wrong':
      switch (p.want) {
        case 'object':
          return {
            message: `${field || 'the document'} must be a mapping`,
            fix: p.hint ?? 'write it as key: value lines',
          };
        case 'string':
          return { message: `${field} must be ${p.expected}`, fix: p.hint ?? 'quote the value' };
        case 'pattern':
          return {
            message: `${field}: ${JSON.stringify(p.found)} is not valid`,
            fix: p.hint ?? `write ${p.expected}`,
          };
        case 'array':
          return { message: `${field} must be ${p.expected}`, fix: p.hint ?? `list them under ${field}` };
        case 'number':
        case 'int':
        case 'one-of':
          return {
            message: `${field} must be ${p.expected}; got ${JSON.stringify(p.found ?? null)}`,
            fix: p.hint ?? `set ${field} to ${p.expected}`,
          };
        case 'bool':
          return {
            message: `${field} must be true or false; got ${JSON.stringify(p.found)}`,
            fix: p.hint ?? 'write true or false',
          };
      }
      break;
    case 'unknown-field':
      return {
        message: `unknown field "${p.path[p.path.length - 1]}"`,
        fix: `remove it, or use one of: ${p.allowed.join(', ')}`,
      };
    case 'invalid':
      return { message: p.message, fix: p.fix ?? `correct ${field}` };
  }
}

/**
 * A ferry configuration file (mgmt.yaml, fleet.yaml): exactly one document of this apiVersion and
 * kind whose top-level keys are `allowed`; its walk, for the fields after those.
 */
export function walkConfigDocument(
  text: string,
  file: string,
  want: { apiVersion: string; kind: string; example: string; allowed: readonly string[] },
): Walk {
  const docs = parseYamlDocuments(text, { file });
  const doc = docs[0];
  if (docs.length !== 1 || !doc)
    throw inputError(
      `${file} must hold exactly one YAML document; it holds ${docs.length}`,
      { file },
      `write one ${want.kind} document (see ${want.example})`,
    );
  const w = walkYamlDoc(doc, file);
  w.object({ allowed: ['apiVersion', 'kind', ...want.allowed] });
  if (w.at('apiVersion').value !== want.apiVersion)
    w.at('apiVersion').invalid(
      `apiVersion must be ${want.apiVersion}`,
      `write apiVersion: ${want.apiVersion}`,
    );
  if (w.at('kind').value !== want.kind)
    w.at('kind').invalid(`kind must be ${want.kind}`, `write kind: ${want.kind}`);
  return w;
}
