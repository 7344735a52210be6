/** `relabel-kube-proxy`: an operator step (a label change the operator reviews): the run prints its commands and waits for its verification. */
import { type Handler, operatorStep } from './context.js';

export const handler: Handler<'relabel-kube-proxy'> = operatorStep();
