/** `--boot-seconds S --decommission-seconds S --jitter F`: a lab's clock as `ferry lab` and bench/workers take it. */
import type { LabClock } from '../lab/provisioner/clock.js';
import { fraction, seconds } from './args.js';

/** The flags of a lab's clock (lab/provisioner/clock.ts), for `parseArgs` options. */
export const LAB_CLOCK_OPTIONS = {
  'boot-seconds': { type: 'string' },
  'decommission-seconds': { type: 'string' },
  jitter: { type: 'string' },
} as const;

/** `--boot-seconds S --decommission-seconds S --jitter F`: the lab's clock, `dflt`'s figure for a flag left out. */
export function parseLabClock(
  values: { 'boot-seconds'?: string; 'decommission-seconds'?: string; jitter?: string },
  dflt: LabClock,
): LabClock {
  return {
    bootSeconds: seconds('boot-seconds', values['boot-seconds']) ?? dflt.bootSeconds,
    decommissionSeconds:
      seconds('decommission-seconds', values['decommission-seconds']) ?? dflt.decommissionSeconds,
    jitter: fraction('jitter', values.jitter) ?? dflt.jitter,
  };
}
