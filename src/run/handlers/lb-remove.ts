/** `lb-remove`: takes the old control plane's apiserver out of rotation before its member goes. */
import type { Handler } from './context.js';
import { changeBackend } from './load-balancer.js';

export const handler: Handler<'lb-remove'> = { mode: 'act', act: changeBackend };
