/**
 * Control-plane extraArgs: flags on the Talos deny-list (apiserver.extra-arg-denied) and flags Talos
 * would drop unless carried over (apiserver.extra-args-carryover), for the apiserver, controller
 * manager, scheduler and etcd.
 */

import { flagSetKey } from '../../../facts/kubeadm-defaults.js';
import type { ComponentInstance, Conflict, Fact } from '../../../facts/model.js';
import type { Target } from '../../../facts/target.js';
import {
  ADDITIVE_EXTRA_ARGS,
  apiserverDeniedArgs,
  CONTROLLER_MANAGER_DENIED_ARGS,
  ETCD_DENIED_ARGS,
  SCHEDULER_DENIED_ARGS,
} from '../../../knowledge/talos.js';
import type { Flag } from '../../../snapshot/model.js';
import { type KitCheck, type KitValueRef, settingPath } from '../../kit-checks.js';
import { HOW_TO_PROVIDE, type Rule, type RuleFinding, skip } from '../../rule.js';
import { KIT } from '../kit-paths.js';
import { flagEvidence, isV114, plural, talosMinor, targetEvidence } from './evidence.js';

type ComponentName = 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'etcd';

interface ComponentFlags {
  component: ComponentName;
  extra: Fact<Flag[]>;
  instances: readonly ComponentInstance[] | undefined;
  denied: readonly string[];
  /** Talos config path for extraArgs, as the remediation names it. */
  where: string;
  /** The same place in the kit's control-plane patch. */
  at: Omit<KitValueRef, 'file'>;
}

/** extraArgs of a component: a v1.14 document of its own, or `cluster.<section>.extraArgs`. */
function extraArgsAt(v14: boolean, doc: string, section: string): Pick<ComponentFlags, 'where' | 'at'> {
  const at = v14 ? { doc, path: ['extraArgs'] } : { path: ['cluster', section, 'extraArgs'] };
  return { where: settingPath(at), at };
}

/**
 * Who disagrees about a component's extra flags: the running control planes among themselves, or
 * the running manifests against kubeadm-config's extraArgs (a single control plane can only be the
 * latter). Running candidates are derived from manifests; the declared one is kubeadm-config.
 */
function describeDisagreement(conflict: Conflict<Flag[]>): string {
  const running = conflict.candidates.filter((c) => c.source.kind === 'derived');
  const declared = conflict.candidates.find((c) => c.source.kind !== 'derived');
  const names = (flags: Flag[]) => new Set(flags.map((f) => `--${f.name}=${f.value}`));
  const parts: string[] = [];
  if (new Set(running.map((c) => flagSetKey(c.value))).size > 1)
    parts.push('The control planes run different extra flags.');
  if (declared && running.some((c) => flagSetKey(c.value) !== flagSetKey(declared.value))) {
    const run = names(conflict.believed);
    const decl = names(declared.value);
    const onlyRunning = [...run].filter((f) => !decl.has(f));
    const onlyDeclared = [...decl].filter((f) => !run.has(f));
    parts.push(
      `The running ${running.length === 1 ? 'manifest' : 'manifests'} and kubeadm-config's extraArgs disagree${
        onlyRunning.length
          ? `: ${onlyRunning.join(' ')} ${onlyRunning.length === 1 ? 'runs' : 'run'} but ${onlyRunning.length === 1 ? 'is' : 'are'} not in kubeadm-config`
          : ''
      }${onlyDeclared.length ? `${onlyRunning.length ? ';' : ':'} kubeadm-config declares ${onlyDeclared.join(' ')}, which ${onlyDeclared.length === 1 ? 'does' : 'do'} not run` : ''}.`,
    );
  }
  parts.push(`${conflict.reason}.`);
  return parts.join(' ');
}

function componentFlags(ctx: Parameters<Rule['check']>[0]): ComponentFlags[] {
  const f = ctx.facts;
  const v14 = isV114(ctx.target);
  return [
    {
      component: 'kube-apiserver',
      extra: f.apiserver.extraFlags,
      instances: f.apiserver.instances.value,
      denied: apiserverDeniedArgs(ctx.target.talos),
      ...extraArgsAt(v14, 'KubeAPIServerConfig', 'apiServer'),
    },
    {
      component: 'kube-controller-manager',
      extra: f.controllerManager.extraFlags,
      instances: f.controllerManager.instances.value,
      denied: CONTROLLER_MANAGER_DENIED_ARGS,
      ...extraArgsAt(v14, 'KubeControllerManagerConfig', 'controllerManager'),
    },
    {
      component: 'kube-scheduler',
      extra: f.scheduler.extraFlags,
      instances: f.scheduler.instances.value,
      denied: SCHEDULER_DENIED_ARGS,
      ...extraArgsAt(v14, 'KubeSchedulerConfig', 'scheduler'),
    },
    {
      component: 'etcd',
      extra: f.etcd.extraArgs,
      instances: f.etcd.instances.value,
      denied: ETCD_DENIED_ARGS,
      ...extraArgsAt(false, '', 'etcd'),
    },
  ];
}

/** apiserver flags another rule owns (so a finding is never reported twice under two ids). */
function ownedElsewhere(component: ComponentName, name: string): string | undefined {
  if (component !== 'kube-apiserver') return undefined;
  if (name.startsWith('oidc-') || name === 'authentication-config') return 'apiserver.oidc';
  if (name === 'encryption-provider-config') return 'encryption.*';
  if (name === 'service-account-issuer' || name === 'api-audiences') return 'apiserver.sa-issuer';
  if (name === 'service-account-jwks-uri') return 'apiserver.sa-jwks-uri';
  if (name === 'anonymous-auth') return 'apiserver.anonymous-auth-dependents';
  if (name === 'service-account-key-file') return 'pki.sa-extra-verify-keys';
  // A non-loopback --etcd-servers is the external-etcd topology: one blocker, etcd.external, explains it.
  if (name === 'etcd-servers') return 'etcd.external';
  return undefined;
}

/**
 * Denied flags whose non-default value carries no cluster behaviour: credentials and file locations
 * Talos provides itself (a kubeconfig path, where etcd keeps its certificates or data).
 */
const PLUMBING: Partial<Record<ComponentName, ReadonlySet<string>>> = {
  'kube-controller-manager': new Set(['authentication-kubeconfig', 'authorization-kubeconfig']),
  'kube-scheduler': new Set(['kubeconfig', 'authentication-kubeconfig', 'authorization-kubeconfig']),
  etcd: new Set([
    'name',
    'data-dir',
    'cert-file',
    'key-file',
    'trusted-ca-file',
    'peer-cert-file',
    'peer-key-file',
    'peer-trusted-ca-file',
  ]),
};

/** How the behaviour of a denied flag can be had on Talos, if at all. */
function deniedHint(component: ComponentName, name: string, t: Target): string {
  const v14 = isV114(t);
  if (component === 'kube-apiserver') {
    if (name === 'authorization-config')
      return v14
        ? 'express the authorizers as `KubeAuthorizerConfig` documents'
        : 'use `cluster.apiServer.authorizationConfig`';
    if (name === 'tls-min-version')
      return 'none: Talos v1.14 enforces TLS 1.3 on the apiserver (see apiserver.tls13-clients)';
    if (name === 'client-ca-file' || name === 'requestheader-client-ca-file')
      return v14
        ? 'list the extra client CAs in `KubeAPIServerCAConfig.acceptedCAs` / `KubeAggregatorCAConfig.acceptedCAs`'
        : 'list the extra client CAs in `cluster.acceptedCAs`';
    if (name.startsWith('etcd-'))
      return 'none: Talos apiservers talk only to their local etcd member (external etcd: see etcd.external)';
    return 'none: Talos issues and mounts these files itself from the imported CAs and keys';
  }
  if (component === 'kube-controller-manager')
    return 'none: Talos signs with the imported cluster CA and service-account key (see pki.intermediate-ca)';
  if (component === 'kube-scheduler' && name === 'config')
    return v14
      ? 'inline the KubeSchedulerConfiguration into `KubeSchedulerConfig.config`'
      : 'inline the KubeSchedulerConfiguration into `cluster.scheduler.config`';
  if (component === 'etcd' && name.startsWith('listen-'))
    return 'use `cluster.etcd.listenSubnets` / `advertisedSubnets`';
  return 'none: Talos sets it itself';
}

/** Equivalent to what Talos sets anyway: nothing is lost by dropping it. */
function sameAsTalos(component: ComponentName, f: Flag, t: Target): boolean {
  return (
    component === 'kube-apiserver' && f.name === 'tls-min-version' && isV114(t) && f.value === 'VersionTLS13'
  );
}

export const extraArgDenied: Rule = {
  id: 'apiserver.extra-arg-denied',
  family: 'apiserver',
  severity: 'blocker',
  title: 'A flag the cluster relies on is on the Talos deny-list',
  inputs: ['flags', 'target'],
  reads: [],
  // kubeadm-config's extraArgs also show the flags; the rule needs one of the two.
  requires: [],
  description:
    'Talos rejects some extraArgs outright (`extra arg "X" is not allowed`, at render time; `talosctl validate` does not catch it). A cluster that depends on one of them with a non-default value needs a redesign.',
  docs: 'docs/rules.md#apiserver.extra-arg-denied',
  check(ctx) {
    const comps = componentFlags(ctx);
    if (comps.every((c) => c.extra.value === undefined))
      return skip(['flags', 'kubeadm'], `${HOW_TO_PROVIDE.flags}; or ${HOW_TO_PROVIDE.kubeadm}`);
    const out: RuleFinding[] = [];
    for (const c of comps) {
      const seen = new Set<string>();
      for (const f of c.extra.value ?? []) {
        if (seen.has(f.name) || !c.denied.includes(f.name)) continue;
        seen.add(f.name);
        if (
          ownedElsewhere(c.component, f.name) ||
          PLUMBING[c.component]?.has(f.name) ||
          sameAsTalos(c.component, f, ctx.target)
        )
          continue;
        out.push({
          message: `${c.component} runs with --${f.name}=${f.value}, which kubeadm does not set by default; Talos ${ctx.target.talosVersion} refuses it in ${c.where} ("extra arg \\"${f.name}\\" is not allowed") and sets its own value.`,
          evidence: [
            ...flagEvidence(ctx.snapshot, c.component, c.instances, f.name),
            targetEvidence(ctx.target, `${c.where} deny-list`, { note: `${f.name} is denied` }),
          ],
          remediation: `Redesign before migrating: ${deniedHint(c.component, f.name, ctx.target)}. Otherwise the migration is unsupported for this cluster.`,
          subject: { kind: 'Component', name: c.component },
          field: `--${f.name}`,
          artifacts: [],
        });
      }
    }
    return out;
  },
};

/** Talos-native homes for file-valued flags (an inline document instead of a host file). */
function nativeHome(name: string, v14: boolean): string | undefined {
  switch (name) {
    case 'audit-policy-file':
      return v14 ? '`KubeAuditPolicyConfig`' : '`cluster.apiServer.auditPolicy`';
    case 'admission-control-config-file':
      return v14 ? '`KubeAdmissionControlConfig`' : '`cluster.apiServer.admissionControl`';
    default:
      return undefined;
  }
}

export const extraArgsCarryover: Rule = {
  id: 'apiserver.extra-args-carryover',
  family: 'apiserver',
  severity: 'risk',
  title: 'Control-plane flags Talos defaults would silently drop',
  inputs: ['flags', 'kubeadm'],
  reads: [],
  requires: [],
  description:
    'Talos renders its own kube-apiserver, kube-controller-manager and kube-scheduler command lines; flags kubeadm clusters added (audit, feature gates, admission, bind addresses…) are gone unless carried in extraArgs, and host-file flags need the file on Talos.',
  docs: 'docs/rules.md#apiserver.extra-args-carryover',
  artifacts: [KIT.controlPlanePatch],
  check(ctx) {
    const comps = componentFlags(ctx).filter((c) => c.component !== 'etcd'); // etcd.extra-args owns etcd
    if (comps.every((c) => c.extra.value === undefined))
      return skip(['flags', 'kubeadm'], `${HOW_TO_PROVIDE.flags}; or ${HOW_TO_PROVIDE.kubeadm}`);
    const v14 = isV114(ctx.target);
    const minor = talosMinor(ctx.target);
    const out: RuleFinding[] = [];
    for (const c of comps) {
      const flags = (c.extra.value ?? []).filter(
        (f) => !ownedElsewhere(c.component, f.name) && !c.denied.includes(f.name),
      );
      if (flags.length === 0) continue;
      const names = [...new Set(flags.map((f) => f.name))];
      const additive: readonly string[] =
        c.component === 'kube-apiserver'
          ? ADDITIVE_EXTRA_ARGS.apiserver
          : c.component === 'kube-controller-manager'
            ? ADDITIVE_EXTRA_ARGS.controllerManager
            : [];
      const files = flags.filter((f) => f.value.startsWith('/'));
      const merged = names.filter((n) => additive.includes(n));
      const evidence = names.flatMap((n) => {
        const notes = [
          additive.includes(n) ? 'Talos merges this flag with its own value' : '',
          files.some((f) => f.name === n) ? 'names a host file' : '',
        ].filter(Boolean);
        return flagEvidence(
          ctx.snapshot,
          c.component,
          c.instances,
          n,
          notes.length ? { note: notes.join('; ') } : {},
        );
      });
      const parts = [
        `${c.component} runs ${plural(names.length, 'flag')} kubeadm does not set (${flags.map((f) => `--${f.name}=${f.value}`).join(' ')}); Talos replaces its command line and drops them unless they are carried in ${c.where}.`,
      ];
      if (files.length > 0)
        parts.push(
          `${files.map((f) => `--${f.name}`).join(', ')} name host files that must also exist on Talos nodes.`,
        );
      if (c.extra.conflict) parts.push(describeDisagreement(c.extra.conflict));
      const fileFix = v14
        ? 'The v1.14 schema has no extraVolumes: prefer inline documents'
        : 'Host files need `cluster.apiServer.extraVolumes` plus `machine.files` (which can only create files under /var), or an inline document';
      const natives = files
        .map((f) => [f.name, nativeHome(f.name, v14)] as const)
        .filter((x): x is readonly [string, string] => x[1] !== undefined)
        .map(([n, home]) => `--${n} → ${home}`);
      const remediation = [
        `Carry each flag you keep into ${c.where} (${minor >= 13 ? 'a repeated flag may be a list' : '≤v1.12 values are strings only: one value per flag'}) and list the ones you drop in the migration record.`,
        merged.length > 0
          ? `${merged.map((n) => `--${n}`).join(', ')} merge with Talos's own value instead of replacing it.`
          : '',
        files.length > 0 ? `${fileFix}${natives.length ? ` (${natives.join('; ')})` : ''}.` : '',
      ]
        .filter(Boolean)
        .join(' ');
      out.push({
        message: parts.join(' '),
        evidence,
        remediation,
        subject: { kind: 'Component', name: c.component },
        field: 'extraArgs',
        artifacts: [KIT.controlPlanePatch],
        // Resolved when the kit's patch carries every one of them with its value (a host file never is).
        kitChecks: names.map((n): KitCheck => {
          const values = flags.filter((f) => f.name === n).map((f) => f.value);
          return {
            kind: 'value',
            file: KIT.controlPlanePatch,
            ...c.at,
            path: [...c.at.path, n],
            test: values.length === 1 ? { op: 'equals', value: values[0] } : { op: 'includes', values },
          };
        }),
      });
    }
    return out;
  },
};
