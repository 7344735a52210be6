/**
 * kube-apiserver values for Talos: extra flags minus the deny-list, service-account issuers and
 * audiences for the mixed period, the anonymous-auth decision, OIDC, PodSecurity and cert SANs
 * (talos.md §4.1, §10; blockers.md kube-apiserver).
 */
import type { Facts, PodSecurityLevel } from '../../facts/model.js';
import { type Sourced, sourced } from '../../facts/sourced.js';
import { apiserverDeniedArgs, type TalosRelease } from '../../knowledge/talos.js';
import type { Flag, SourceRef } from '../../snapshot/model.js';
import type { GenerateNote, MissingInput } from '../artifact.js';
import { need } from '../context.js';
import { carryArgs } from './args.js';
import type { JwtAuthenticator, TalosValues } from './model.js';

/** Flags ferry writes in another form; never copied verbatim. */
const HANDLED = [
  'service-account-issuer',
  'api-audiences',
  'anonymous-auth',
  'secure-port',
  'advertise-address',
  'admission-control-config-file',
];

/** Flags whose meaning Talos owns, with what to do instead. */
const REASONS: Record<string, string> = {
  'encryption-provider-config':
    'Talos renders its own encryption configuration from secrets.yaml (see the secrets notes for the key decision)',
  'audit-policy-file':
    'Talos applies its own audit policy (cluster.apiServer.auditPolicy / KubeAuditPolicyConfig); copy the rules of that file there',
  'audit-log-path': 'Talos writes the audit log to /var/log/audit/kube/kube-apiserver.log',
  'authentication-config':
    'the structured authentication file is not in the snapshot; express it as KubeAuthenticationConfig (v1.14) by hand',
};

const isOidc = (f: Flag) => f.name.startsWith('oidc-');

export function deriveApiserverValues(
  facts: Facts,
  release: TalosRelease,
  endpoint: Sourced<string>,
  endpointHost: string,
  missing: MissingInput[],
  notes: GenerateNote[],
): TalosValues['apiserver'] | undefined {
  const a = facts.apiserver;
  const extra = need(
    a.extraFlags,
    'kube-apiserver flags set on the cluster must be carried or reported',
    missing,
  );
  const issuers = need(
    a.serviceAccountIssuers,
    'Talos must accept the tokens the kubeadm apiservers issued',
    missing,
  );
  const audiences = need(a.apiAudiences, 'Talos must accept the audiences of existing tokens', missing);
  const anonymous = need(a.anonymousAuth, 'the anonymous-auth decision mirrors the cluster', missing);
  const psa = need(
    a.podSecurityDefaults,
    'PodSecurity on Talos must be no stricter than on kubeadm',
    missing,
  );
  const sans = need(a.certSANs, 'clients reach the apiservers under these names', missing);
  if (!extra || !issuers || !audiences || anonymous === undefined || !psa || !sans) return undefined;

  const lists = release.extraArgsLists;
  const multidoc = release.configFormat === 'multidoc';
  // v1.14 keeps its KubeAuthenticationConfig only when the cluster allows anonymous requests (see legacy/multidoc).
  const jwtMode = multidoc && anonymous;
  const carried = carryArgs(
    extra.filter((f) => !isOidc(f)),
    a.extraFlags.provenance,
    {
      component: 'kube-apiserver',
      deniedRule: 'apiserver.extra-arg-denied',
      denied: apiserverDeniedArgs(release),
      handled: HANDLED,
      reasons: REASONS,
      lists,
    },
  );
  notes.push(...carried.notes);
  const oidcFlags = a.oidc.value ?? extra.filter(isOidc);
  const oidcCarried = carryArgs(oidcFlags.filter(isOidc), a.oidc.provenance, {
    component: 'kube-apiserver',
    deniedRule: 'apiserver.extra-arg-denied',
    denied: [],
    reasons: {
      'oidc-ca-file':
        'its CA file is not in the snapshot; Talos cannot mount it (apiserver.oidc) — put the CA into the OIDC settings by hand',
    },
    lists,
  });
  if (!jwtMode) notes.push(...oidcCarried.notes);
  const jwt = jwtMode ? oidcToJwt(oidcFlags, a.oidc.provenance, notes) : null;

  const oldIssuers = issuers.filter((i) => i !== endpoint.value);
  const issuerSources = a.serviceAccountIssuers.provenance;
  if (!lists && oldIssuers.length > 0) {
    notes.push({
      severity: 'warning',
      message:
        `Talos ${release.minor} takes one --service-account-issuer, so Talos apiservers accept only ${endpoint.value}; tokens issued ` +
        `under ${oldIssuers.join(', ')} fail there until pods get new tokens. Run kubeadm/20-sa-issuer.sh first and restart workloads (apiserver.sa-issuer)`,
    });
  }
  const allAudiences = unique([endpoint.value, ...audiences]);
  if (multidoc && !anonymous) {
    notes.push({
      severity: 'info',
      message:
        'kube-apiserver runs with --anonymous-auth=false: the Talos v1.14 KubeAuthenticationConfig (anonymous health checks) is removed so Talos apiservers refuse anonymous requests the same way',
    });
  }
  if (jwtMode) {
    notes.push({
      severity: 'warning',
      message:
        'kubeadm apiservers allow anonymous requests everywhere RBAC permits; Talos v1.14 apiservers allow them only on /livez, /readyz and /healthz (KubeAuthenticationConfig). ' +
        'Anonymous callers of other paths (e.g. kube-public/cluster-info, /version) get 401 there (apiserver.anonymous-auth-dependents)',
    });
  }
  return {
    args: carried.args,
    certSANs: sourced(
      unique([endpointHost, ...sans]),
      [...a.certSANs.provenance, ...endpoint.sources],
      'kubeadm apiServer.certSANs plus the endpoint host',
    ),
    issuer: sourced(
      endpoint.value,
      endpoint.sources,
      // docs/knowledge/talos.md §4.1
      'Talos signs service-account tokens for the cluster endpoint URL',
    ),
    acceptedIssuers: sourced(
      oldIssuers,
      issuerSources,
      'issuers of the kubeadm apiservers, still accepted during the mixed period',
    ),
    audiences: sourced(
      allAudiences,
      [...a.apiAudiences.provenance, ...endpoint.sources],
      'the endpoint URL (Talos) plus the audiences kubeadm tokens carry',
    ),
    anonymous: sourced(
      anonymous,
      a.anonymousAuth.provenance,
      anonymous
        ? 'the kubeadm apiservers allow anonymous requests'
        : 'the kubeadm apiservers refuse anonymous requests',
    ),
    oidcArgs: jwtMode ? [] : oidcCarried.args,
    jwt,
    podSecurity: podSecurity(psa, a.podSecurityDefaults.provenance),
  };
}

function podSecurity(
  psa: NonNullable<Facts['apiserver']['podSecurityDefaults']['value']>,
  sources: SourceRef[],
): Sourced<{ enforce: PodSecurityLevel; audit: PodSecurityLevel; warn: PodSecurityLevel }> {
  if (psa.mode === 'disabled') {
    return sourced(
      { enforce: 'privileged', audit: 'privileged', warn: 'privileged' },
      sources,
      'PodSecurity is disabled on kubeadm: Talos enforces nothing either (the disable flag is carried)',
    );
  }
  return sourced(
    { enforce: psa.enforce, audit: psa.audit, warn: psa.warn },
    sources,
    "relaxed to what kubeadm enforces (Talos's generated default is enforce: baseline)",
  );
}

/** --oidc-* flags as a structured JWT authenticator (AuthenticationConfiguration jwt[]). */
export function oidcToJwt(
  flags: Flag[],
  sources: SourceRef[],
  notes: GenerateNote[],
): Sourced<JwtAuthenticator> | null {
  const get = (n: string) => flags.filter((f) => f.name === n).at(-1)?.value;
  const url = get('oidc-issuer-url');
  if (!url) return null;
  const clientId = get('oidc-client-id');
  const usernameClaim = get('oidc-username-claim') ?? 'sub';
  const prefixFlag = get('oidc-username-prefix');
  // kube-apiserver: no prefix flag → issuer URL + "#" unless the claim is email; "-" → no prefix.
  const usernamePrefix =
    prefixFlag === undefined
      ? usernameClaim === 'email'
        ? ''
        : `${url}#`
      : prefixFlag === '-'
        ? ''
        : prefixFlag;
  const jwt: JwtAuthenticator = {
    issuer: { url, audiences: clientId ? [clientId] : [] },
    claimMappings: { username: { claim: usernameClaim, prefix: usernamePrefix } },
  };
  const groupsClaim = get('oidc-groups-claim');
  if (groupsClaim) jwt.claimMappings.groups = { claim: groupsClaim, prefix: get('oidc-groups-prefix') ?? '' };
  const required = flags
    .filter((f) => f.name === 'oidc-required-claim')
    .flatMap((f) => f.value.split(','))
    .map((kv) => kv.split('='))
    .filter((kv): kv is [string, string] => kv.length === 2 && kv[0] !== '');
  if (required.length > 0)
    jwt.claimValidationRules = required.map(([claim, requiredValue]) => ({ claim, requiredValue }));
  const source = sources[0];
  for (const f of flags) {
    if (f.name === 'oidc-signing-algs' || f.name === 'oidc-ca-file') {
      notes.push({
        severity: 'warning',
        message: `kube-apiserver --${f.name}=${f.value} has no place in the generated JWT authenticator; add it to KubeAuthenticationConfig by hand (apiserver.oidc)`,
        ...(source ? { source } : {}),
      });
    }
  }
  return sourced(jwt, sources, 'the --oidc-* flags of the kubeadm apiservers as a JWT authenticator');
}

export function unique<T>(xs: T[]): T[] {
  return [...new Set(xs)];
}
