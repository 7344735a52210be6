/** `wait-workload-ready`: nothing to do; the verification waits for the workload's Ready replicas. */
import type { Handler } from './context.js';

export const handler: Handler<'wait-workload-ready'> = { mode: 'wait' };
