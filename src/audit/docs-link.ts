/**
 * Where a rule is documented, said the same way everywhere: its section of docs/rules.md, whose
 * anchor is the rule id (`docs/rules.md#apiserver.san-loopback`). `ferry explain`, the rules' own
 * `docs`, the Markdown and HTML reports and SARIF's help text cite that reference; the HTML report
 * anchors its own section of a rule by the same id.
 */

export const RULES_DOC = 'docs/rules.md';

/** `docs/rules.md#<id>`: the reference printed to users (test/knowledge/citations.test.ts checks the anchors). */
export function ruleDocsRef(id: string): string {
  return `${RULES_DOC}#${id}`;
}

/** The repository (or installed package) root: this module is src/audit/ (or dist/audit/) two levels down. */
const ROOT = new URL('../../', import.meta.url);

/**
 * A rule's documentation as an absolute URI, for links that must be one (SARIF `helpUri`; the
 * HTML report's links): an http(s) `docs` as it is, a repository path such as
 * `docs/rules.md#<id>` as the file: URI of that file beside this ferry. ferry has no published
 * documentation site, so the local copy is the one a link can point at.
 */
export function ruleDocsUri(id: string, docs: string = ruleDocsRef(id)): string {
  if (/^https?:\/\//.test(docs)) return docs;
  return new URL(docs, ROOT).href;
}
