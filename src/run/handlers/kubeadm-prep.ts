/** `kubeadm-prep`: an operator step (a script of the kit run on a kubeadm node (or cluster-wide) by the operator): the run prints its commands and waits for its verification. */
import { type Handler, operatorStep } from './context.js';

export const handler: Handler<'kubeadm-prep'> = operatorStep();
