/** `wipe-pki-copies`: an operator step (deleting copies of key material where ferry has no reach): the run prints its commands and waits for its verification. */
import { type Handler, operatorStep } from './context.js';

export const handler: Handler<'wipe-pki-copies'> = operatorStep();
