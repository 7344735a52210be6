/**
 * kube-apiserver facts: per-node instances, service-account issuers/audiences/JWKS, flags kubeadm
 * did not set (OIDC and the rest), anonymous auth, authorization, admission and PodSecurity.
 */
import type { Flag, SourceRef, StaticPod } from '../snapshot/model.js';
import { imageTag, normalizeKubernetesVersion, parseVersion } from '../util/semver.js';
import {
  type Absent,
  absent,
  extraFlagsFact,
  instancesFact,
  podCandidates,
  runningBeatsDeclared,
} from './components.js';
import { decide, known, missingFact } from './decide.js';
import { apiserverDefaults, flagSetKey, kubeadmContext } from './kubeadm-defaults.js';
import type {
  Admission,
  ApiserverFacts,
  ApiserverInstance,
  Authorization,
  Candidate,
  Fact,
  PodSecurityDefaults,
} from './model.js';
import { atField, derivedRef } from './sources.js';
import { flagValues, lastFlag, listFlag, type SnapshotView } from './view.js';

const NO_APISERVER =
  'the kube-apiserver static pod manifest(s): manifests/NODE/kube-apiserver.yaml, or the mirror pods kube-system/kube-apiserver-NODE in resources/';

export function deriveApiserverFacts(v: SnapshotView): ApiserverFacts {
  const declared = v.cc
    ? { flags: v.cc.apiServer.extraArgs, source: atField(v.cc.source, 'apiServer.extraArgs') }
    : undefined;
  const issuers = serviceAccountIssuers(v, declared);
  const admission = admissionFact(v);
  return {
    instances: instancesFact(
      'apiserver.instances',
      'kube-apiserver instances',
      v.apiservers,
      instance,
      NO_APISERVER,
    ),
    serviceAccountIssuers: issuers,
    apiAudiences: apiAudiences(v, declared),
    serviceAccountJwksUri: simpleFlag(
      v,
      declared,
      'service-account-jwks-uri',
      'apiserver.serviceAccountJwksUri',
      'service-account JWKS URI',
      'the discovery document points at the apiserver itself',
    ),
    serviceAccountKeyFiles: decide({
      key: 'apiserver.serviceAccountKeyFiles',
      title: 'service-account verification key files',
      candidates: podCandidates(v.apiservers, 'service-account-key-file', (f) =>
        flagValues(f, 'service-account-key-file'),
      ),
      reason: runningBeatsDeclared('kube-apiserver --service-account-key-file values'),
      missing: NO_APISERVER,
    }),
    extraFlags: extraFlagsFact({
      key: 'apiserver.extraFlags',
      title: 'kube-apiserver flags not set by kubeadm',
      pods: v.apiservers,
      declared,
      defaults: apiserverDefaults(kubeadmContext(v)),
      what: 'kube-apiserver command lines',
      missing: `${NO_APISERVER}, or kubeadm-config.yaml (apiServer.extraArgs)`,
    }),
    oidc: oidc(v, declared),
    anonymousAuth: decide({
      key: 'apiserver.anonymousAuth',
      title: 'anonymous requests allowed (--anonymous-auth)',
      candidates: podCandidates(v.apiservers, 'anonymous-auth', (f) => {
        const val = lastFlag(f, 'anonymous-auth');
        return val === undefined ? absent(true, 'the Kubernetes default (true) applies') : val !== 'false';
      }),
      reason: runningBeatsDeclared('kube-apiserver --anonymous-auth'),
      missing: NO_APISERVER,
      note: 'an --authentication-config file, when set, may restrict anonymous access further (see apiserver.oidc)',
    }),
    authorization: decide({
      key: 'apiserver.authorization',
      title: 'authorization (modes / config file)',
      candidates: podCandidates(v.apiservers, 'authorization-mode', authorization),
      reason: runningBeatsDeclared('kube-apiserver authorization flags'),
      missing: NO_APISERVER,
    }),
    admission,
    podSecurityDefaults: podSecurity(admission),
    certSANs: v.cc
      ? known('apiserver.certSANs', 'extra apiserver certificate SANs (kubeadm)', v.cc.apiServer.certSANs, [
          atField(v.cc.source, 'apiServer.certSANs'),
        ])
      : missingFact(
          'apiserver.certSANs',
          'extra apiserver certificate SANs (kubeadm)',
          'kubeadm-config.yaml (ClusterConfiguration apiServer.certSANs)',
        ),
  };
}

function instance(pod: StaticPod): ApiserverInstance {
  const tag = pod.image ? imageTag(pod.image) : undefined;
  const port = Number(lastFlag(pod.flags, 'secure-port'));
  return {
    node: pod.node ?? null,
    image: pod.image ?? null,
    version: tag && parseVersion(tag) ? normalizeKubernetesVersion(tag) : null,
    advertiseAddress: lastFlag(pod.flags, 'advertise-address') ?? null,
    securePort: Number.isInteger(port) && port > 0 ? port : null,
    etcdServers: listFlag(pod.flags, 'etcd-servers') ?? [],
    flags: pod.flags,
    source: pod.source,
  };
}

type Declared = { flags: Flag[]; source: SourceRef } | undefined;

function declaredValues(
  declared: Declared,
  name: string,
): { values: string[]; source: SourceRef } | undefined {
  if (!declared) return undefined;
  const values = flagValues(declared.flags, name);
  return values.length > 0 ? { values, source: declared.source } : undefined;
}

function serviceAccountIssuers(v: SnapshotView, declared: Declared): Fact<string[]> {
  const candidates: Candidate<string[]>[] = podCandidates(v.apiservers, 'service-account-issuer', (f) => {
    const vals = flagValues(f, 'service-account-issuer');
    return vals.length > 0
      ? vals
      : absent([], 'no issuer: the apiserver cannot issue bound service-account tokens');
  });
  const d = declaredValues(declared, 'service-account-issuer');
  if (d) {
    candidates.push({ value: d.values, source: d.source });
  } else if (v.cc) {
    // No extraArgs issuer: kubeadm wrote its own, derived from the DNS domain.
    const ctx = kubeadmContext(v);
    if (ctx.dnsDomain) {
      candidates.push({
        value: [`https://kubernetes.default.svc.${ctx.dnsDomain}`],
        source: derivedRef(
          'kubeadm writes https://kubernetes.default.svc.<dnsDomain> when apiServer.extraArgs has no issuer',
          [atField(v.cc.source, 'apiServer.extraArgs'), atField(v.cc.source, 'networking.dnsDomain')],
        ),
      });
    }
  }
  return decide({
    key: 'apiserver.serviceAccountIssuers',
    title: 'service-account issuers (first one signs)',
    candidates,
    reason: runningBeatsDeclared('kube-apiserver --service-account-issuer list'),
    missing: `${NO_APISERVER}, or kubeadm-config.yaml`,
    note: 'tokens are signed with the first issuer; every listed issuer is accepted',
  });
}

function apiAudiences(v: SnapshotView, declared: Declared): Fact<string[]> {
  const candidates: Candidate<string[]>[] = podCandidates(v.apiservers, 'api-audiences', (f) => {
    const list = listFlag(f, 'api-audiences');
    if (list) return list;
    const first = flagValues(f, 'service-account-issuer')[0];
    return absent(
      first ? [first] : [],
      'the apiserver defaults its audiences to the first --service-account-issuer',
    );
  });
  const d = declaredValues(declared, 'api-audiences');
  if (d)
    candidates.push({ value: d.values.flatMap((x) => x.split(',')).map((s) => s.trim()), source: d.source });
  return decide({
    key: 'apiserver.apiAudiences',
    title: 'API audiences',
    candidates,
    reason: runningBeatsDeclared('kube-apiserver --api-audiences'),
    missing: NO_APISERVER,
  });
}

function simpleFlag(
  v: SnapshotView,
  declared: Declared,
  flag: string,
  key: string,
  title: string,
  absentMeaning: string,
): Fact<string | null> {
  const candidates: Candidate<string | null>[] = podCandidates<string | null>(v.apiservers, flag, (f) => {
    const val = lastFlag(f, flag);
    return val === undefined ? absent(null, absentMeaning) : val;
  });
  const d = declaredValues(declared, flag);
  if (d) candidates.push({ value: d.values.at(-1) ?? null, source: d.source });
  return decide({
    key,
    title,
    candidates,
    reason: runningBeatsDeclared(`kube-apiserver --${flag}`),
    missing: NO_APISERVER,
  });
}

const isOidcFlag = (f: Flag) => f.name.startsWith('oidc-') || f.name === 'authentication-config';

function oidc(v: SnapshotView, declared: Declared): Fact<Flag[]> {
  const candidates: Candidate<Flag[]>[] = podCandidates(v.apiservers, 'oidc-*', (f) => {
    const found = f.filter(isOidcFlag);
    return found.length > 0 ? found : absent([], 'no OIDC flags and no --authentication-config');
  });
  if (declared) {
    const found = declared.flags.filter(isOidcFlag);
    if (found.length > 0 || candidates.length === 0)
      candidates.push({ value: found, source: declared.source });
  }
  return decide({
    key: 'apiserver.oidc',
    title: 'OIDC / structured authentication flags',
    candidates,
    equals: (a, b) => flagSetKey(a) === flagSetKey(b),
    reason: runningBeatsDeclared('kube-apiserver OIDC flags'),
    missing: `${NO_APISERVER}, or kubeadm-config.yaml (apiServer.extraArgs)`,
  });
}

function authorization(flags: Flag[]): Authorization | Absent<Authorization> {
  const configFile = lastFlag(flags, 'authorization-config') ?? null;
  const modes = listFlag(flags, 'authorization-mode');
  if (modes) return { modes, configFile };
  if (configFile) return { modes: [], configFile };
  return absent(
    { modes: ['AlwaysAllow'], configFile: null },
    'the Kubernetes default authorization mode AlwaysAllow applies',
  );
}

function admissionFact(v: SnapshotView): Fact<Admission> {
  return decide({
    key: 'apiserver.admission',
    title: 'admission plugins',
    candidates: podCandidates(v.apiservers, 'enable-admission-plugins', (f) => ({
      enabled: listFlag(f, 'enable-admission-plugins') ?? [],
      disabled: listFlag(f, 'disable-admission-plugins') ?? [],
      configFile: lastFlag(f, 'admission-control-config-file') ?? null,
    })),
    reason: runningBeatsDeclared('kube-apiserver admission flags'),
    missing: NO_APISERVER,
    note: "lists only what the flags add or remove; Kubernetes' default plugins are on unless disabled",
  });
}

function podSecurity(admission: Fact<Admission>): Fact<PodSecurityDefaults> {
  const key = 'apiserver.podSecurityDefaults';
  const title = 'PodSecurity admission defaults';
  const a = admission.value;
  if (!a) return missingFact(key, title, NO_APISERVER);
  const from = [derivedRef('fact apiserver.admission', admission.provenance)];
  if (a.disabled.includes('PodSecurity')) {
    return known(key, title, { mode: 'disabled' }, from, 'PodSecurity is in --disable-admission-plugins');
  }
  if (a.configFile) {
    return missingFact(
      key,
      title,
      `the AdmissionConfiguration file ${a.configFile} (named by --admission-control-config-file) from a control-plane host; ` +
        'the snapshot does not carry it, so its PodSecurity defaults are unknown — check them by hand',
    );
  }
  return known(
    key,
    title,
    { mode: 'built-in', enforce: 'privileged', audit: 'privileged', warn: 'privileged' },
    from,
    'no --admission-control-config-file: PodSecurity runs with its built-in defaults (privileged)',
  );
}
