/** `preflight-audit`: observes only (the audit recorded in the plan is checked by the step's gate); runs every time, never "already done". */
import type { Handler } from './context.js';

export const handler: Handler<'preflight-audit'> = { mode: 'observe' };
