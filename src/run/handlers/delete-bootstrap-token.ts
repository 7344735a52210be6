/** `delete-bootstrap-token`: an operator step (kubeadm token delete on a control plane): the run prints its commands and waits for its verification. */
import { type Handler, operatorStep } from './context.js';

export const handler: Handler<'delete-bootstrap-token'> = operatorStep();
