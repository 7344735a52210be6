/**
 * `--accept-unobserved CHECK`: the operator's explicit word that a gate may pass a check ferry could
 * not observe (the lookup failed: a 403, a timeout). Nothing else lets an unobserved check pass.
 * CHECK is a section (`apiservers`: every unobserved apiserver check) or `SECTION:SUBJECT`
 * (`apiservers:cp-2`), as the gate's message names it.
 */
import { usageError } from '../errors.js';
import type { Check } from './gates.js';

/** The sections whose lookups can fail; `commands`, `files`, `audit`, `operator` never do. */
export const OBSERVED_SECTIONS = [
  'etcd',
  'nodes',
  'loadBalancer',
  'apiservers',
  'machines',
  'objects',
  'budgets',
] as const satisfies readonly Check['section'][];

export type ObservedSection = (typeof OBSERVED_SECTIONS)[number];

export interface UnobservedAcceptance {
  section: ObservedSection;
  /** Only the check about this subject (a node name, `voters`, `Secret kube-system/x`); all when absent. */
  subject?: string;
  /** As the operator typed it, for the journal. */
  raw: string;
}

export function parseAcceptUnobserved(raw: string): UnobservedAcceptance {
  const at = raw.indexOf(':');
  const section = at < 0 ? raw : raw.slice(0, at);
  const subject = at < 0 ? undefined : raw.slice(at + 1).trim();
  if (!(OBSERVED_SECTIONS as readonly string[]).includes(section)) {
    throw usageError(
      `--accept-unobserved ${raw}: "${section}" is not a section a gate observes`,
      `give one of ${OBSERVED_SECTIONS.join(', ')}, optionally with :SUBJECT as the gate's message names it (e.g. apiservers:cp-2)`,
    );
  }
  if (subject === '') throw usageError(`--accept-unobserved ${raw}: the subject after ":" is empty`);
  return { section: section as ObservedSection, ...(subject !== undefined && { subject }), raw };
}

/** The name of a check for `--accept-unobserved`. */
export function checkName(c: Pick<Check, 'section' | 'subject'>): string {
  return `${c.section}:${c.subject}`;
}

function matches(a: UnobservedAcceptance, c: Check): boolean {
  if (a.section !== c.section) return false;
  // A subject may carry an address after the name ("cp-1 (10.0.0.1:6443)"): the name is enough.
  return a.subject === undefined || c.subject === a.subject || c.subject.startsWith(`${a.subject} `);
}

export interface Accepted {
  check: Check;
  by: UnobservedAcceptance;
}

/**
 * Lets the accepted unobserved mismatches pass. They stay marked `unobserved`, so that a resumed run
 * never takes one as proof that a destructive step did not happen.
 */
export function applyAcceptance(
  checks: Check[],
  accepted: readonly UnobservedAcceptance[],
): { checks: Check[]; accepted: Accepted[] } {
  const used: Accepted[] = [];
  const out = checks.map((c) => {
    if (c.status !== 'mismatch' || !c.unobserved) return c;
    const by = accepted.find((a) => matches(a, c));
    if (!by) return c;
    used.push({ check: c, by });
    return {
      ...c,
      status: 'ok' as const,
      seen: `${c.seen} (passed unobserved: --accept-unobserved ${by.raw})`,
    };
  });
  return { checks: out, accepted: used };
}

/** The hint a stopped gate gives for its unobserved checks. */
export function unobservedHint(checks: Check[]): string | undefined {
  const names = checks.filter((c) => c.status === 'mismatch' && c.unobserved).map(checkName);
  if (names.length === 0) return undefined;
  return `ferry could not observe ${names.length === 1 ? 'one check' : `${names.length} checks`}, so it has not seen ${names.length === 1 ? 'it' : 'them'} hold: fix the cause shown (credentials, RBAC, network), or, if you verified ${names.length === 1 ? 'it' : 'them'} yourself, pass ${names.map((n) => `--accept-unobserved '${n}'`).join(' ')} (journalled)`;
}
