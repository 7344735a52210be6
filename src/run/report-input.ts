/**
 * The report's input, read from the journal: `ferry run` and `ferry rehearse` report the same run
 * the same way, and differ only in the title and what they add (notes, checks).
 */
import type { Plan } from '../plan/model.js';
import { Journal } from './journal.js';
import { probeRecordsFrom, type ReportInput } from './report.js';

export function reportInputFromJournal(
  journalFile: string,
  about: { title: string; plan: Plan; planFile: string } & Pick<ReportInput, 'notes' | 'checks'>,
): ReportInput {
  const j = Journal.open(journalFile, { readonly: true });
  try {
    return {
      ...about,
      runs: j.runs(),
      transitions: j.transitions(),
      runEnds: j.runEnds(),
      probes: probeRecordsFrom(j.observations({ purpose: 'probe' })),
      drainProgress: j.observations({ purpose: 'drain-progress' }),
      signals: j.observations({ purpose: 'signal' }),
      silences: j.observations({ purpose: 'silence' }),
    };
  } finally {
    j.close();
  }
}
