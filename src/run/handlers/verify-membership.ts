/** `verify-membership`: observes only (a fresh member list must equal the expected membership: its verification is the step); runs every time, never "already done". */
import type { Handler } from './context.js';

export const handler: Handler<'verify-membership'> = { mode: 'observe' };
