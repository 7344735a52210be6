/**
 * capi.controllers-not-ha beyond the fixture: it fails closed (Deployments unread, refused, or
 * providers without any controller found), and what ferry mgmt bootstrap installs passes it once
 * the operator has written it into the providers' Deployments, while one replica of it does not.
 */
import { describe, expect, it } from 'vitest';
import { providerFacts } from '../../knowledge/capi-providers.js';
import { OPERATOR_POD_LABELS, providerDeployment } from '../../mgmt/bootstrap/stages.js';
import { controllerSummary } from '../../snapshot/mgmt-controllers.js';
import type { KubeObject, MgmtControllers, MgmtSnapshot } from '../../snapshot/model.js';
import { adopted, findings, run, withMgmt } from './testing-capi.js';

const ID = 'capi.controllers-not-ha';
const withControllers = (
  controllers: MgmtControllers | undefined,
  bend: (m: MgmtSnapshot) => void = () => {},
) => {
  const m = adopted();
  if (controllers === undefined) delete m.controllers;
  else m.controllers = controllers;
  bend(m);
  return withMgmt(m);
};

/** A provider's Deployment as its components ship it (1 replica, the manager's own args), then customised as the operator does. */
function asOperatorWrites(type: string, name: string, shippedArgs: string[], replicas?: number): KubeObject {
  const p = providerFacts(type, name)!;
  const d = providerDeployment(p);
  const labels = { 'cluster.x-k8s.io/provider': p.podLabel, 'control-plane': 'controller-manager' };
  // The operator sets FLAG=VALUE, replacing a FLAG=… already there, else appending.
  const args = [...shippedArgs];
  for (const [flag, value] of Object.entries(d.containers[0]!.args)) {
    const i = args.findIndex((a) => a.startsWith(`${flag}=`));
    if (i >= 0) args[i] = `${flag}=${value}`;
    else args.push(`${flag}=${value}`);
  }
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `${p.podLabel}-controller-manager`, namespace: `${p.podLabel}-system`, labels },
    spec: {
      replicas: replicas ?? d.replicas,
      template: {
        metadata: { labels },
        spec: {
          affinity: d.affinity,
          nodeSelector: d.nodeSelector,
          tolerations: d.tolerations,
          containers: [{ name: 'manager', args }],
        },
      },
    },
  };
}

describe('capi.controllers-not-ha', () => {
  it('skips when the Deployments were not read, saying how to provide them', () => {
    const r = run(ID, withControllers(undefined));
    expect(r).toMatchObject({ kind: 'skipped', howToProvide: expect.stringMatching(/--mgmt-kubeconfig/) });
  });

  it('a Deployment list the server refused is not observed, never "no risk"', () => {
    const r = run(
      ID,
      withControllers({
        kind: 'not-observed',
        reason: 'forbidden',
        message: 'list deployments.apps: forbidden',
      }),
    );
    expect(r).toMatchObject({ kind: 'skipped' });
    expect(JSON.stringify(r)).toContain('forbidden: list deployments.apps: forbidden');
  });

  it('providers installed but no controller Deployment found: skipped; nothing installed at all: not applicable', () => {
    const none: MgmtControllers = { kind: 'observed', deployments: [] };
    expect(run(ID, withControllers(none))).toMatchObject({ kind: 'skipped' });
    const bare = withControllers(none, (m) => {
      m.objects = m.objects.filter((o) => !o.apiVersion.startsWith('clusterctl.cluster.x-k8s.io/'));
    });
    expect(run(ID, bare)).toMatchObject({ kind: 'not-applicable' });
  });

  it('what ferry mgmt bootstrap asks the operator for passes, for every provider ferry installs; one replica of it does not', () => {
    const shipped: [string, string, string[]][] = [
      ['CoreProvider', 'cluster-api', ['--leader-elect', '--diagnostics-address=:8443']],
      ['BootstrapProvider', 'talos', ['--enable-leader-election']],
      ['ControlPlaneProvider', 'talos', ['--enable-leader-election']],
      ['InfrastructureProvider', 'proxmox', ['--leader-elect']],
      ['InfrastructureProvider', 'vsphere', ['--leader-elect']],
      ['IPAMProvider', 'in-cluster', ['--leader-elect']],
    ];
    const ours = shipped.map(([t, n, a]) => controllerSummary(asOperatorWrites(t, n, a))!);
    expect(ours.every((c) => c.replicas === 2 && c.leaderElection === 'on' && c.spread === 'hostname')).toBe(
      true,
    );
    expect(findings(run(ID, withControllers({ kind: 'observed', deployments: ours })))).toEqual([]);

    const single = controllerSummary(
      asOperatorWrites('InfrastructureProvider', 'proxmox', ['--leader-elect'], 1),
    )!;
    const [f, ...rest] = findings(run(ID, withControllers({ kind: 'observed', deployments: [single] })));
    expect(rest).toEqual([]);
    expect(f!.message).toMatch(
      /^infrastructure-proxmox \(Deployment infrastructure-proxmox-system\/\S+\) runs 1 replica/,
    );
    expect(f!.evidence[0]).toMatchObject({ field: 'spec.replicas', observed: '1', expected: 'at least 2' });
  });

  it("the operator's own placement selects its pods; a selector that misses them is no spread", () => {
    const operator = (selector: Record<string, string>): KubeObject => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'op', namespace: 'capi-operator-system', labels: OPERATOR_POD_LABELS },
      spec: {
        replicas: 2,
        template: {
          metadata: { labels: OPERATOR_POD_LABELS },
          spec: {
            topologySpreadConstraints: [
              {
                topologyKey: 'kubernetes.io/hostname',
                whenUnsatisfiable: 'DoNotSchedule',
                maxSkew: 1,
                labelSelector: { matchLabels: selector },
              },
            ],
            containers: [{ name: 'manager', args: ['--leader-elect=true'] }],
          },
        },
      },
    });
    expect(controllerSummary(operator(OPERATOR_POD_LABELS))).toMatchObject({
      component: 'cluster-api-operator',
      spread: 'hostname',
    });
    expect(controllerSummary(operator({ app: 'something-else' }))?.spread).toBe('none');
  });
});
