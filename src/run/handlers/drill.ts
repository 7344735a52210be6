/** `drill`: an operator step (an optional failure drill the operator runs): the run prints its commands and waits for its verification. */
import { type Handler, operatorStep } from './context.js';

export const handler: Handler<'drill'> = operatorStep();
