/** `stop-apiserver`: an operator step (moving a static pod manifest away on the node (the lab does it in a rehearsal)): the run prints its commands and waits for its verification. */
import { type Handler, operatorStep } from './context.js';

export const handler: Handler<'stop-apiserver'> = operatorStep();
