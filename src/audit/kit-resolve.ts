/**
 * `ferry audit --kit`: which findings the kit resolves. A pure function of the findings and the
 * kit's contents (kit/read.ts reads them): a finding is resolved when every one of its kitChecks
 * holds in the kit; a finding without kitChecks is never resolved by a kit.
 */
import type { KitContents } from '../kit/read.js';
import type { Finding } from './findings.js';
import { checkFile, describeCheck, kitChecker } from './kit-checks.js';

export interface KitSplit {
  /** Findings the kit leaves open, in the order given; those it was checked for say why (kitGap). */
  open: Finding[];
  /** Copies of the findings the kit resolves, each with its `resolution`, in the order given. */
  resolved: Finding[];
}

export function resolveByKit(findings: readonly Finding[], kit: KitContents): KitSplit {
  const check = kitChecker(kit);
  const open: Finding[] = [];
  const resolved: Finding[] = [];
  for (const f of findings) {
    const checks = f.kitChecks ?? [];
    if (checks.length === 0) {
      open.push(f);
      continue;
    }
    const failed = checks.map(check).find((o) => !o.ok);
    if (failed && !failed.ok) {
      open.push({ ...f, kitGap: failed.why });
      continue;
    }
    resolved.push({
      ...f,
      resolution: {
        kit: kit.summary.path,
        files: [...new Set(checks.map(checkFile))],
        how: checks.map(describeCheck).join('; '),
      },
    });
  }
  return { open, resolved };
}
