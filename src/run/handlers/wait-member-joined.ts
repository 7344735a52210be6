/** `wait-member-joined`: nothing to send (Talos adds its member itself, as a learner); the verification waits for it. */
import type { Handler } from './context.js';

export const handler: Handler<'wait-member-joined'> = { mode: 'wait' };
