/**
 * Service-account issuer, audiences and JWKS URI: apiserver.sa-issuer and apiserver.sa-jwks-uri.
 */

import { evidenceFromSource } from '../../findings.js';
import { type KitCheck, patchChecks } from '../../kit-checks.js';
import { HOW_TO_PROVIDE, type Rule, type RuleFinding, skip } from '../../rule.js';
import { CLUSTER_INFO } from '../../rule-reads.js';
import { KIT } from '../kit-paths.js';
import { factEvidence, flagEvidence, isV114, talosMinor } from './evidence.js';

function sameUrl(a: string, b: string): boolean {
  return a.trim().replace(/\/+$/, '').toLowerCase() === b.trim().replace(/\/+$/, '').toLowerCase();
}

export const saIssuer: Rule = {
  id: 'apiserver.sa-issuer',
  family: 'apiserver',
  severity: 'blocker',
  title: 'Service-account issuer or audiences differ from Talos (endpoint URL)',
  inputs: ['flags', 'target'],
  reads: [CLUSTER_INFO],
  description:
    'Talos sets --service-account-issuer and --api-audiences to the endpoint URL. Tokens minted by one side are rejected by the other (401 "invalid bearer token", Cilium first) unless both sides list each other.',
  docs: 'docs/rules.md#apiserver.sa-issuer',
  check(ctx) {
    const ep = ctx.facts.cluster.controlPlaneEndpoint;
    const issuers = ctx.facts.apiserver.serviceAccountIssuers;
    if (!ep.value) return skip(['kubeadm'], ep.missing ?? HOW_TO_PROVIDE.kubeadm);
    if (!issuers.value) return skip(['flags'], issuers.missing ?? HOW_TO_PROVIDE.flags);
    const url = ep.value.url;
    const minor = talosMinor(ctx.target);
    const talosSide =
      minor <= 12
        ? `Talos v1.${minor} takes a single issuer (extraArgs are strings): after the switch, recreate the pods so every projected token carries ${url} before the first Talos control plane serves`
        : minor === 13
          ? `in the Talos config set extraArgs \`service-account-issuer: [${url}, ${issuers.value.join(', ')}]\` and \`api-audiences\` to the union of both sides`
          : `in the Talos config set \`KubeServiceAccountConfig.accepted.issuers\` to ${issuers.value.join(', ')} and \`accepted.audiences\` to the union of both sides`;
    const out: RuleFinding[] = [];
    const first = issuers.value[0];
    const audiences = ctx.facts.apiserver.apiAudiences;
    // kubeadm apiservers without --api-audiences accept their first issuer as the audience.
    const kubeadmAudiences = audiences.value ?? issuers.value.slice(0, 1);
    const step: KitCheck = { kind: 'step', script: KIT.saIssuer, mentions: [url] };
    const patch = (at: { doc?: string; path: string[] }, test: Parameters<typeof patchChecks>[2]) =>
      patchChecks([KIT.controlPlanePatch], at, test);
    const args = (flag: string) => ({ path: ['cluster', 'apiServer', 'extraArgs', flag] });
    const sa = (...path: string[]) => ({ doc: 'KubeServiceAccountConfig', path });
    /** What the kit's patch must say for the Talos side (≤v1.12 takes one issuer: not the kit's to resolve). */
    const talosKit: KitCheck[] | undefined =
      minor <= 12
        ? undefined
        : minor === 13
          ? [
              ...patch({ path: [...args('service-account-issuer').path, '0'] }, { op: 'equals', value: url }),
              ...patch(args('service-account-issuer'), { op: 'includes', values: issuers.value }),
              ...patch(args('api-audiences'), { op: 'includes', values: [url, ...kubeadmAudiences] }),
            ]
          : [
              ...patch(sa('issuer', 'issuerURL'), { op: 'equals', value: url }),
              ...patch(sa('accepted', 'issuers'), {
                op: 'includes',
                values: issuers.value.filter((i) => !sameUrl(i, url)),
              }),
              ...patch(sa('accepted', 'audiences'), { op: 'includes', values: [url, ...kubeadmAudiences] }),
            ];
    // Half-way through the kubeadm-side change the control planes disagree: each one still
    // signing with the old issuer counts, whatever ferry believes for the cluster as a whole.
    const running = issuers.conflict
      ? issuers.conflict.candidates.filter((c) => c.source.kind === 'flag')
      : [];
    const lagging = running.filter((c) => !sameUrl(c.value[0] ?? '', url));
    const firstWrong = first === undefined || !sameUrl(first, url);
    if (firstWrong || lagging.length > 0) {
      const expected = `${url} first`;
      const who = firstWrong
        ? `kubeadm apiservers sign service-account tokens with issuer ${first ?? '(none)'}`
        : `${lagging.length} of ${running.length} kubeadm apiservers still sign service-account tokens with ${[...new Set(lagging.map((c) => c.value[0] ?? '(none)'))].join(', ')}`;
      out.push({
        message: `${who}; Talos apiservers use ${url}. Tokens from either side get 401 on the other once both serve behind the endpoint.`,
        evidence: [
          ...(firstWrong
            ? factEvidence(issuers, { observed: issuers.value.join(', ') || '(none)', expected })
            : lagging.map((c) =>
                evidenceFromSource(c.source, { observed: c.value.join(', ') || '(none)', expected }),
              )),
          ...factEvidence(ep, { note: 'the Talos issuer is this endpoint URL' }),
        ],
        remediation: `On every kubeadm apiserver, add --service-account-issuer=${url} as the first issuer and keep the old one after it (all listed issuers are accepted, the first signs), restarting one control plane at a time (the kit's ${KIT.saIssuer}); ${talosSide}. Then restart workloads so their tokens are re-issued.`,
        subject: { kind: 'Component', name: 'kube-apiserver' },
        field: '--service-account-issuer',
        artifacts: [KIT.saIssuer, KIT.controlPlanePatch],
        ...(talosKit ? { kitChecks: [step, ...talosKit] } : {}),
      });
    } else if (audiences.value && !audiences.value.some((a) => sameUrl(a, url))) {
      out.push({
        message: `kubeadm apiservers accept the audiences ${audiences.value.join(', ')} but not ${url}, the audience Talos apiservers put in the tokens they mint: those tokens get 401 on kubeadm apiservers.`,
        evidence: factEvidence(audiences, {
          observed: audiences.value.join(', '),
          expected: `includes ${url}`,
        }),
        remediation: `Add ${url} to --api-audiences on every kubeadm apiserver (one at a time), and carry kubeadm's audiences into the Talos config (${minor >= 14 ? '`KubeServiceAccountConfig.accepted.audiences`' : 'extraArgs `api-audiences`'}).`,
        subject: { kind: 'Component', name: 'kube-apiserver' },
        field: '--api-audiences',
        artifacts: [KIT.saIssuer, KIT.controlPlanePatch],
        ...(talosKit
          ? {
              kitChecks: [
                step,
                ...(minor >= 14
                  ? patch(sa('accepted', 'audiences'), { op: 'includes', values: kubeadmAudiences })
                  : patch(args('api-audiences'), { op: 'includes', values: kubeadmAudiences })),
              ],
            }
          : {}),
      });
    }
    return out;
  },
};

export const saJwksUri: Rule = {
  id: 'apiserver.sa-jwks-uri',
  family: 'apiserver',
  severity: 'info',
  title: 'kubeadm sets --service-account-jwks-uri (Talos does not)',
  inputs: ['flags'],
  reads: [],
  description:
    'External OIDC consumers of the service-account discovery document (workload identity federation) read the JWKS URI; Talos never sets it, so it changes unless carried over.',
  docs: 'docs/rules.md#apiserver.sa-jwks-uri',
  check(ctx) {
    const jwks = ctx.facts.apiserver.serviceAccountJwksUri;
    if (jwks.value === undefined) return skip(['flags'], jwks.missing ?? HOW_TO_PROVIDE.flags);
    if (jwks.value === null) return [];
    const at = isV114(ctx.target) ? '`KubeAPIServerConfig.extraArgs`' : '`cluster.apiServer.extraArgs`';
    return [
      {
        message: `kubeadm apiservers publish ${jwks.value} as the service-account JWKS URI; Talos apiservers would publish their own address instead, which external token consumers may not reach.`,
        evidence: flagEvidence(
          ctx.snapshot,
          'kube-apiserver',
          ctx.facts.apiserver.instances.value,
          'service-account-jwks-uri',
        ),
        remediation: `Carry it over: \`service-account-jwks-uri: ${jwks.value}\` in ${at} (the flag is not on Talos's deny-list).`,
        subject: { kind: 'Component', name: 'kube-apiserver' },
        field: '--service-account-jwks-uri',
        artifacts: [KIT.controlPlanePatch],
      },
    ];
  },
};
