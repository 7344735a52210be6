/** `wait-member-voter`: nothing to send (Talos promotes its learner itself once it caught up); the verification waits for it. */
import type { Handler } from './context.js';

export const handler: Handler<'wait-member-voter'> = { mode: 'wait' };
