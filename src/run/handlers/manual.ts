/** `manual`: an operator step (instructions ferry cannot carry out): the run prints its commands and waits for its verification. */
import { type Handler, operatorStep } from './context.js';

export const handler: Handler<'manual'> = operatorStep();
