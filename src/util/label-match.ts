/**
 * Label matchers in Alertmanager's syntax (`name="value"`, `=`, `!=`, `=~`, `!~`, quotes optional),
 * parsed and applied. A group (`severity=critical,namespace=~"prod-.*"`) matches when every matcher
 * does; regexes are anchored, as Alertmanager anchors them.
 */

/** One label test, as Alertmanager writes them: `severity="critical"`, `node=~"w-.*"`. */
export interface LabelMatcher {
  name: string;
  value: string;
  isRegex: boolean;
  isEqual: boolean;
}

const MATCHER = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*(?:"((?:[^"\\]|\\.)*)"|([^",]*?))\s*$/;

/** Splits on commas outside double quotes. */
function splitGroup(text: string): string[] {
  const parts: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && quoted) {
      cur += c + (text[++i] ?? '');
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === ',' && !quoted) {
      parts.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  parts.push(cur);
  return parts;
}

/** Parses one group; an error names the matcher that is wrong. */
export function parseMatcherGroup(text: string): LabelMatcher[] | { error: string } {
  const body = text.trim().replace(/^\{(.*)\}$/, '$1');
  if (body.trim() === '') return { error: 'no matcher given' };
  const out: LabelMatcher[] = [];
  for (const part of splitGroup(body)) {
    const m = MATCHER.exec(part);
    if (!m) return { error: `"${part.trim()}" is not NAME=VALUE, NAME!=VALUE, NAME=~REGEX or NAME!~REGEX` };
    const op = m[2]!;
    const value = m[3] !== undefined ? m[3].replace(/\\(.)/g, '$1') : m[4]!;
    const isRegex = op === '=~' || op === '!~';
    if (isRegex)
      try {
        new RegExp(value);
      } catch (e) {
        return { error: `"${part.trim()}": ${(e as Error).message}` };
      }
    out.push({ name: m[1]!, value, isRegex, isEqual: op === '=' || op === '=~' });
  }
  return out;
}

export function matches(labels: Readonly<Record<string, string>>, group: readonly LabelMatcher[]): boolean {
  return group.every((m) => {
    const v = labels[m.name] ?? '';
    const hit = m.isRegex ? new RegExp(`^(?:${m.value})$`).test(v) : v === m.value;
    return hit === m.isEqual;
  });
}

/** `name="value"` as Alertmanager prints a matcher. */
export function formatMatcher(m: LabelMatcher): string {
  const op = m.isRegex ? (m.isEqual ? '=~' : '!~') : m.isEqual ? '=' : '!=';
  return `${m.name}${op}${JSON.stringify(m.value)}`;
}
