/**
 * The cluster's own health signals, read at each gate of a run: an Alertmanager's firing alerts,
 * the operator's probes. A signal that could not be read has not been seen to be clear: the gate
 * stops on `unobserved` as it does on `firing` (fail closed).
 */
import type { ExpectedAlert } from '../knowledge/expected-alerts.js';
import type { LabelMatcher } from '../util/label-match.js';

export type { ExpectedAlert, LabelMatcher };

export type SignalReading =
  | { kind: 'clear' }
  /** What is wrong, one line each (an alert's name and labels, a probe's failures). */
  | { kind: 'firing'; items: string[] }
  | { kind: 'unobserved'; reason: string };

export interface HealthSignal {
  /** As the stop message names it: `Alertmanager http://127.0.0.1:9093`, `probe shop`. */
  readonly name: string;
  read(signal?: AbortSignal): Promise<SignalReading>;
}

export interface Silencer {
  readonly name: string;
  /** Creates a silence until `endsAt`; returns its id. */
  silence(matchers: LabelMatcher[], endsAt: Date, comment: string, signal?: AbortSignal): Promise<string>;
  /** Ends a silence early; an id the server no longer knows is already gone. */
  expire(id: string, signal?: AbortSignal): Promise<void>;
}
