/**
 * Alerts a migration step raises by doing its job, named as the Prometheus community mixins name
 * them (kubernetes-mixin: KubeNodeNotReady, KubeNodeUnreachable; kube-prometheus: TargetDown;
 * etcd's own mixin: etcdMembersDown, etcdHighNumberOfLeaderChanges). Source: the mixins' alert
 * rules as published by monitoring-mixins (kubernetes-mixin and etcd-mixin alerts.yaml). With
 * `--silence-expected` ferry silences these for the step's duration, scoped to its subject where
 * the alert carries one; an alert not listed here (etcdInsufficientMembers, KubeAPIDown, a workload's
 * alerts) is never expected: it stops the run.
 */
import type { LabelMatcher } from '../util/label-match.js';

/** An alert ferry expects while a step runs: silenced for the step, then the silence expires. */
export interface ExpectedAlert {
  alertname: string;
  /** Labels that scope it to the step's subject, matched exactly. */
  labels?: Record<string, string>;
  /** Why the step makes it fire, for the silence's comment. */
  because: string;
}

/** A node powered off or deleted: its kubelet stops reporting. */
export function nodeLeavingAlerts(node: string, because: string): ExpectedAlert[] {
  return [
    { alertname: 'KubeNodeNotReady', labels: { node }, because },
    { alertname: 'KubeNodeUnreachable', labels: { node }, because },
  ];
}

/** A control plane's kube-apiserver stopped on purpose: its scrape target goes down. */
export function apiserverStoppedAlerts(node: string): ExpectedAlert[] {
  return [
    {
      alertname: 'TargetDown',
      labels: { job: 'apiserver' },
      because: `kube-apiserver on ${node} is stopped`,
    },
  ];
}

/** etcd leadership moved away on purpose. */
export function leaderMoveAlerts(from: string): ExpectedAlert[] {
  return [{ alertname: 'etcdHighNumberOfLeaderChanges', because: `etcd leadership moves away from ${from}` }];
}

/** A member removed on purpose: its scrape target and peer traffic stop. */
export function memberRemovedAlerts(member: string): ExpectedAlert[] {
  return [{ alertname: 'etcdMembersDown', because: `etcd member ${member} is removed` }];
}

/** The matchers of a silence for an expected alert: its name and its scoping labels, exact. */
export function silenceMatchers(a: ExpectedAlert): LabelMatcher[] {
  return [
    { name: 'alertname', value: a.alertname, isRegex: false, isEqual: true },
    ...Object.entries(a.labels ?? {}).map(([name, value]) => ({
      name,
      value,
      isRegex: false,
      isEqual: true,
    })),
  ];
}
