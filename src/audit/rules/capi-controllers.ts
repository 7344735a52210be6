/**
 * The Cluster API controllers run on the management cluster they upgrade (mgmt.md §9, §10): one
 * replica, no leader election or every replica on one node means a node replaced during that
 * upgrade stops the controllers that were replacing it.
 */
import type { MgmtController } from '../../snapshot/model.js';
import { notApplicable, type Rule, type RuleFinding, skip } from '../rule.js';
import { DOCS, withMgmt } from './capi-mgmt.js';

const FIX =
  'Run every Cluster API controller with at least 2 replicas, leader election on and one pod per control plane: with the Cluster API operator, set each provider\'s spec.deployment (replicas: 2, a required podAntiAffinity on kubernetes.io/hostname for its cluster.x-k8s.io/provider label, the control-plane nodeSelector and toleration) and its manager\'s leader-election flag (containers: [{name: manager, args: {"--leader-elect": "true"}}]; "--enable-leader-election" for the Talos providers), and the operator chart\'s replicaCount: 2 with leaderElection.enabled: true. ferry mgmt bootstrap installs them so.';

const evidence = (d: MgmtController, field: string, observed: string, expected: string) => ({
  kind: 'object' as const,
  object: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: d.namespace, name: d.name },
  field,
  observed,
  expected,
});

/** What keeps one controller from surviving the loss of its node; empty when nothing does. */
function problems(d: MgmtController): RuleFinding[] {
  const who = `${d.component} (Deployment ${d.namespace}/${d.name})`;
  if (d.replicas < 2)
    return [
      {
        message: `${who} runs ${d.replicas} replica${d.replicas === 1 ? '' : 's'}: while its node is drained or replaced, ${d.component} reconciles nothing, and on a management cluster that upgrades itself the node being replaced may be its own.`,
        evidence: [evidence(d, 'spec.replicas', String(d.replicas), 'at least 2')],
        remediation: FIX,
      },
    ];
  const out: RuleFinding[] = [];
  if (d.leaderElection === 'off')
    out.push({
      message: `${who} runs ${d.replicas} replicas without leader election: they reconcile the same objects at once and undo each other's work.`,
      evidence: [
        evidence(
          d,
          'spec.template.spec.containers[manager].args',
          'no leader-election flag set true',
          '--leader-elect (or --enable-leader-election)=true',
        ),
      ],
      remediation: FIX,
    });
  if (d.spread === 'none')
    out.push({
      message: `${who} runs ${d.replicas} replicas that nothing keeps on different nodes: they may share one, and that node's loss stops them all.`,
      evidence: [
        evidence(
          d,
          'spec.template.spec.affinity.podAntiAffinity',
          'no required anti-affinity or DoNotSchedule spread on kubernetes.io/hostname',
          'one pod per node',
        ),
      ],
      remediation: FIX,
    });
  return out;
}

export const controllersNotHa: Rule = {
  id: 'capi.controllers-not-ha',
  family: 'capi',
  severity: 'risk',
  title: 'Cluster API controllers that do not survive the loss of a node',
  inputs: ['mgmt'],
  reads: [],
  requires: ['mgmt'],
  description:
    'The management cluster upgrades itself: a Cluster API controller (the operator, a provider) with one replica, without leader election, or with its replicas free to share a node stops reconciling when the node it runs on is drained or replaced.',
  docs: DOCS('capi.controllers-not-ha'),
  check: (ctx) =>
    withMgmt(ctx, (m) => {
      const c = m.controllers;
      // Fail closed: unread or refused is unknown, never "no single-replica controller".
      if (c === undefined)
        return skip(
          ["the management cluster's controller Deployments"],
          'take the snapshot again with ferry snapshot --mgmt-kubeconfig (it lists the Deployments), or add them to mgmt/ (kubectl get deployments -A -o yaml)',
        );
      switch (c.kind) {
        case 'not-observed':
          return skip(
            [`the management cluster's controller Deployments (${c.reason}: ${c.message})`],
            'give --mgmt-kubeconfig a kubeconfig that may list deployments.apps in every namespace, and take the snapshot again',
          );
        case 'observed':
          if (c.deployments.length === 0)
            // Providers installed, yet no Deployment carries their label: the controllers are somewhere ferry did not look.
            return m.objects.some(
              (o) =>
                o.apiVersion.startsWith('clusterctl.cluster.x-k8s.io/') ||
                o.apiVersion.startsWith('operator.cluster.x-k8s.io/'),
            )
              ? skip(
                  [
                    'the Deployments of the installed providers (none carries a cluster.x-k8s.io/provider label)',
                  ],
                  "add the providers' controller Deployments to mgmt/ (kubectl get deployments -A -o yaml), or take the snapshot with --mgmt-kubeconfig of the cluster they run on",
                )
              : notApplicable('no Cluster API provider or controller is installed on the management cluster');
          return c.deployments.flatMap(problems);
      }
    }),
};
