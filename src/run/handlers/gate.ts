/** `gate`: observes only (its expectation, observed twice a stability interval apart, is the step); runs every time, never "already done". */
import type { Handler } from './context.js';

export const handler: Handler<'gate'> = { mode: 'observe' };
