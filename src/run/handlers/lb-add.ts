/** `lb-add`: puts the new control plane's apiserver into the load balancer's rotation. */
import type { Handler } from './context.js';
import { changeBackend } from './load-balancer.js';

export const handler: Handler<'lb-add'> = { mode: 'act', act: changeBackend };
