/**
 * kube-apiserver (blockers.md "kube-apiserver"). Talos renders its own apiserver command line and
 * serving certificate; for old and new apiservers to live behind one endpoint, their certificates,
 * service-account issuer, authentication, flags and admission must agree before the first Talos
 * control plane joins `default/kubernetes`.
 *
 * This file is the family's entry point; the rules live in apiserver/, one file per group.
 */

import type { Rule } from '../rule.js';
import { anonymousAuthDependents } from './apiserver/anonymous.js';
import { sanEndpoint, sanLoopback } from './apiserver/certs.js';
import { coexistenceEndpoints, tls13Clients } from './apiserver/clients.js';
import { extraArgDenied, extraArgsCarryover } from './apiserver/flags.js';
import { oidc } from './apiserver/oidc.js';
import { podSecurityDefault } from './apiserver/pod-security.js';
import { saIssuer, saJwksUri } from './apiserver/service-accounts.js';

export { coversHost } from './apiserver/certs.js';
export {
  anonymousAuthDependents,
  coexistenceEndpoints,
  extraArgDenied,
  extraArgsCarryover,
  oidc,
  podSecurityDefault,
  saIssuer,
  saJwksUri,
  sanEndpoint,
  sanLoopback,
  tls13Clients,
};

export const APISERVER_RULES: Rule[] = [
  sanLoopback,
  sanEndpoint,
  saIssuer,
  saJwksUri,
  anonymousAuthDependents,
  extraArgsCarryover,
  extraArgDenied,
  oidc,
  podSecurityDefault,
  tls13Clients,
  coexistenceEndpoints,
];
