/** `apply-kit-file`: an operator step (kubectl apply of a kit file, reviewed and applied by the operator): the run prints its commands and waits for its verification. */
import { type Handler, operatorStep } from './context.js';

export const handler: Handler<'apply-kit-file'> = operatorStep();
