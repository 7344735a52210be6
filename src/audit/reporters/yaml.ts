/** The same document as JSON, in YAML. */
import { stringify } from 'yaml';
import type { AuditReport } from '../engine.js';
import { reportDocument } from './json.js';

export function renderYaml(r: AuditReport): string {
  // aliasDuplicateObjects off: the same target summary appears in every finding; anchors/aliases
  // would make the output harder to read and to grep.
  return stringify(reportDocument(r), { aliasDuplicateObjects: false, lineWidth: 0 });
}
