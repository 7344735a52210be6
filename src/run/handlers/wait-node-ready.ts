/** `wait-node-ready`: nothing to send (the kubelet registers the Node and the CNI makes it Ready); the verification waits for it. */
import type { Handler } from './context.js';

export const handler: Handler<'wait-node-ready'> = { mode: 'wait', concurrent: true };
