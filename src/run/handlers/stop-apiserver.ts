/** `stop-apiserver`: an operator step (moving a static pod manifest away on the node (the lab does it in a rehearsal)): the run prints its commands and waits for its verification. */
import { apiserverStoppedAlerts } from '../../knowledge/expected-alerts.js';
import { type Handler, operatorStep } from './context.js';

export const handler: Handler<'stop-apiserver'> = {
  ...operatorStep<'stop-apiserver'>(),
  expectedAlerts: (step, ctx) => apiserverStoppedAlerts(ctx.requireName(step.params.node)),
};
