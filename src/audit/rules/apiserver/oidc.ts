/**
 * OIDC / structured authentication for users (apiserver.oidc): the --oidc-* flags or
 * --authentication-config, which Talos apiservers only know if carried over.
 */

import { HOW_TO_PROVIDE, type Rule, skip } from '../../rule.js';
import { KIT } from '../kit-paths.js';
import { flagEvidence, isV114 } from './evidence.js';

export const oidc: Rule = {
  id: 'apiserver.oidc',
  family: 'apiserver',
  severity: 'risk',
  title: 'OIDC / structured authentication must be carried to Talos',
  inputs: ['flags'],
  reads: [],
  description:
    'User logins through OIDC break on Talos apiservers unless the --oidc-* flags (or --authentication-config) are carried over; on v1.14 they must become jwt authenticators of KubeAuthenticationConfig.',
  docs: 'docs/rules.md#apiserver.oidc',
  artifacts: [KIT.controlPlanePatch],
  check(ctx) {
    const fact = ctx.facts.apiserver.oidc;
    if (fact.value === undefined) return skip(['flags'], fact.missing ?? HOW_TO_PROVIDE.flags);
    if (fact.value.length === 0) return [];
    const v14 = isV114(ctx.target);
    const names = [...new Set(fact.value.map((f) => f.name))];
    const caFile = fact.value.find((f) => f.name === 'oidc-ca-file');
    const authConfig = fact.value.find((f) => f.name === 'authentication-config');
    const remediation = v14
      ? `Talos v1.14 generates \`KubeAuthenticationConfig\` (--authentication-config, which it then denies as an extraArg, and kube-apiserver does not take --oidc-* together with it): express ${authConfig ? `the AuthenticationConfiguration in ${authConfig.value}` : 'the --oidc-* settings'} as \`jwt\` authenticators in that document${caFile ? `, with the CA from ${caFile.value} inline (certificateAuthority)` : ''}.`
      : `Carry ${names.map((n) => `--${n}`).join(', ')} into \`cluster.apiServer.extraArgs\`${caFile ? `; ${caFile.value} must exist on Talos nodes (\`cluster.apiServer.extraVolumes\` + \`machine.files\` under /var)` : ''}${authConfig ? `; the file ${authConfig.value} likewise` : ''}.`;
    return [
      {
        message: `kube-apiserver authenticates users with ${names.map((n) => `--${n}`).join(', ')} (${
          fact.value
            .filter((f) => f.name === 'oidc-issuer-url')
            .map((f) => f.value)
            .join(', ') ||
          authConfig?.value ||
          'OIDC'
        }); Talos apiservers know nothing of it, so user logins fail whenever the endpoint sends a request to them.`,
        evidence: names.flatMap((n) =>
          flagEvidence(ctx.snapshot, 'kube-apiserver', ctx.facts.apiserver.instances.value, n),
        ),
        remediation,
        subject: { kind: 'Component', name: 'kube-apiserver' },
        field: 'oidc',
        artifacts: [KIT.controlPlanePatch],
      },
    ];
  },
};
