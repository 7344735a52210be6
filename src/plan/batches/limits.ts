/**
 * --max-unavailable N|P%: the most workers one batch takes out at once. A percentage of the
 * workers rounds down, as a Deployment's maxUnavailable does, but never below one worker.
 */
import { usageError } from '../../errors.js';

export type MaxUnavailable = { kind: 'count'; nodes: number } | { kind: 'percent'; percent: number };

/** Kubernetes' own default for a rolling update's maxUnavailable. */
export const DEFAULT_MAX_UNAVAILABLE: MaxUnavailable = { kind: 'percent', percent: 25 };

export function parseMaxUnavailable(text: string): MaxUnavailable {
  const pct = /^(\d+)%$/.exec(text.trim());
  if (pct) {
    const percent = Number(pct[1]);
    if (percent >= 1 && percent <= 100) return { kind: 'percent', percent };
  } else if (/^\d+$/.test(text.trim())) {
    const nodes = Number(text.trim());
    if (nodes >= 1) return { kind: 'count', nodes };
  }
  throw usageError(
    `--max-unavailable must be a number of workers (1 or more) or a percentage (1% to 100%); got "${text}"`,
    'e.g. --max-unavailable 3, or --max-unavailable 10%',
  );
}

export function showMaxUnavailable(m: MaxUnavailable): string {
  return m.kind === 'count' ? String(m.nodes) : `${m.percent}%`;
}

/** Workers per batch at most, for `workers` workers. */
export function resolveMaxUnavailable(m: MaxUnavailable, workers: number): number {
  if (m.kind === 'count') return m.nodes;
  return Math.max(1, Math.floor((m.percent * workers) / 100));
}
