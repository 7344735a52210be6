import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { KubeObject } from '../snapshot/model.js';
import { mintKubeconfigSecret } from './adopt-kubeconfig.js';
import { type AdoptStep, controlPlaneContract, describeStep, planAdoption } from './adopt-plan.js';
import { kubectlCommands } from './kubectl-commands.js';
import { labKitObjects } from './testing-kit.js';

const label = (s: AdoptStep) => (s.kind === 'create' ? `create ${s.object.kind}` : s.kind);

describe('planAdoption', () => {
  it('orders the steps so no hazard fires: bootstrapped before any MachineDeployment, TCP paused while kubeadm members remain', async () => {
    const kubeconfig = await mintKubeconfigSecret(labKitObjects(), new Date());
    const p = planAdoption(labKitObjects(), [], true, { kubeconfig });
    if (p.kind !== 'plan') throw new Error(p.reason);
    const order = p.steps.map((s) => label(s.step));
    expect(order).toEqual([
      'namespace',
      'create Secret',
      'create Secret',
      'create Cluster',
      'create ProxmoxCluster',
      'create ProxmoxMachineTemplate',
      'create ProxmoxMachineTemplate',
      'create TalosConfigTemplate',
      'create TalosControlPlane',
      'tcp-bootstrapped',
      'create MachineDeployment',
      'kubeconfig-secret',
      'own-secrets',
      'tcp-initialized',
      'unpause-cluster',
      'touch-cluster',
    ]);
    const created = (k: string) =>
      p.steps
        .map((s) => s.step)
        .find((s): s is Extract<AdoptStep, { kind: 'create' }> => s.kind === 'create' && s.object.kind === k)!
        .object;
    expect(created('Cluster').spec?.['paused']).toBe(true);
    expect(created('TalosControlPlane').spec?.['replicas']).toBe(0);
    expect(created('TalosControlPlane').metadata.annotations?.['cluster.x-k8s.io/paused']).toBe('true');
    expect(created('MachineDeployment').spec?.['replicas']).toBe(0);
    expect(p.nothingToDo).toBe(false);
    // No kubeadm member left: the TCP is unpaused last.
    const last = planAdoption(labKitObjects(), [], false, { kubeconfig });
    expect(last.kind === 'plan' && label(last.steps.at(-1)!.step)).toBe('unpause-tcp');
  });

  it('refuses when a control-plane Machine exists before the TCP is bootstrapped (H2)', () => {
    const machine: KubeObject = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: {
        name: 'lab-control-plane-abcde',
        namespace: 'lab',
        labels: { 'cluster.x-k8s.io/cluster-name': 'lab', 'cluster.x-k8s.io/control-plane': '' },
      },
    };
    const p = planAdoption(labKitObjects(), [machine], true);
    expect(p).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/second etcd/) });
  });

  it('writes what the paused provider would: the kubeconfig Secret owned by the Cluster, the contract status, a touch', async () => {
    const kit = labKitObjects();
    const kubeconfig = await mintKubeconfigSecret(kit, new Date('2026-12-03T00:00:00Z'));
    if (kubeconfig.kind !== 'minted') throw new Error(kubeconfig.reason);
    const s = kubeconfig.secret as KubeObject & { type?: string; data?: Record<string, string> };
    expect(s).toMatchObject({
      type: 'cluster.x-k8s.io/secret',
      metadata: {
        name: 'lab-kubeconfig',
        namespace: 'lab',
        labels: { 'cluster.x-k8s.io/cluster-name': 'lab' },
      },
    });
    const text = Buffer.from(s.data!['value']!, 'base64').toString('utf8');
    const cfg = parse(text) as { clusters: { name: string; cluster: { server: string } }[] };
    // Cluster API's renewal looks the server up under the Cluster's name.
    expect(cfg.clusters).toEqual([
      expect.objectContaining({
        name: 'lab',
        cluster: expect.objectContaining({ server: expect.stringMatching(/^https:\/\/.+:6443$/) }),
      }),
    ]);
    const crt = (parse(text) as { users: { user: Record<string, string> }[] }).users[0]!.user[
      'client-certificate-data'
    ]!;
    const cert = new X509Certificate(Buffer.from(crt, 'base64'));
    expect(cert.subject).toContain('CN=ferry-capi-adopt');
    expect(cert.subject).toContain('O=system:masters');
    expect(
      cert.checkIssued(
        new X509Certificate(
          Buffer.from(
            (kit.find((o) => o.metadata.name === 'lab-ca') as KubeObject & { data: Record<string, string> })
              .data['tls.crt']!,
            'base64',
          ),
        ),
      ),
    ).toBe(true);
    expect(new Date(cert.validTo).getTime() - new Date('2026-12-03T00:00:00Z').getTime()).toBeLessThan(
      183 * 86_400_000,
    );

    const p = planAdoption(kit, [], true, { kubeconfig, contract: 'v1beta1' });
    if (p.kind !== 'plan') throw new Error(p.reason);
    const step = (k: AdoptStep['kind']) => p.steps.find((x) => x.step.kind === k)!.step;
    expect(step('own-secrets')).toMatchObject({ secrets: ['lab-ca', 'lab-talos', 'lab-kubeconfig'] });
    expect(step('tcp-initialized')).toMatchObject({ status: { initialized: true, ready: true } });
    const v2 = planAdoption(kit, [], true, { kubeconfig, contract: 'v1beta2' });
    expect(v2.kind === 'plan' && v2.steps.find((x) => x.step.kind === 'tcp-initialized')!.step).toMatchObject(
      {
        status: { initialization: { controlPlaneInitialized: true } },
      },
    );
    expect(controlPlaneContract({ 'cluster.x-k8s.io/v1beta1': 'v1alpha3' })).toBe('v1beta1');
    expect(
      controlPlaneContract({
        'cluster.x-k8s.io/v1beta1': 'v1alpha3',
        'cluster.x-k8s.io/v1beta2': 'v1alpha4',
      }),
    ).toBe('v1beta2');
    expect(controlPlaneContract(undefined)).toBe('v1beta1');

    // The dry run's text: every new step, the credential named, no secret data.
    const text2 = p.steps.map((x) => describeStep(x.step)).join('\n');
    expect(text2).toMatch(/Secret lab\/lab-kubeconfig .*CN=ferry-capi-adopt, O=system:masters.*180 days/);
    expect(text2).toMatch(/status\.initialized: true, status\.ready: true \(contract v1beta1/);
    expect(text2).toMatch(/Cluster lab\/lab asked to reconcile/);
    const cmds = kubectlCommands(p.steps, { kubeconfig: 'mgmt', kitDir: 'kit' })
      .flatMap((c) => c.commands)
      .join('\n');
    expect(cmds).toContain('create -f kit/capi/kubeconfig-secret.yaml');
    expect(cmds).toContain(
      `--subresource=status --type=merge -p '{"status":{"initialized":true,"ready":true}}'`,
    );
    expect(cmds).toMatch(/annotate clusters\.cluster\.x-k8s\.io lab ferry\.dev\/reconcile-requested=/);
    for (const secret of [s.data!['value']!, crt]) {
      expect(text2).not.toContain(secret.slice(0, 40));
      expect(cmds).not.toContain(secret.slice(0, 40));
    }
  });

  it('an existing kubeconfig Secret is kept (and not re-owned when another owns it); no CA and none live: refused', async () => {
    const kit = labKitObjects();
    const live: KubeObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'lab-kubeconfig',
        namespace: 'lab',
        ownerReferences: [
          {
            apiVersion: 'controlplane.cluster.x-k8s.io/v1alpha3',
            kind: 'TalosControlPlane',
            name: 'lab-control-plane',
            uid: 'u',
          },
        ],
      },
    };
    const p = planAdoption(kit, [live], true, {});
    if (p.kind !== 'plan') throw new Error(p.reason);
    expect(p.steps.find((x) => x.step.kind === 'kubeconfig-secret')).toMatchObject({ done: true });
    expect(p.steps.find((x) => x.step.kind === 'own-secrets')!.step).toMatchObject({
      secrets: ['lab-ca', 'lab-talos'],
    });
    const noCa = kit.filter((o) => o.metadata.name !== 'lab-ca');
    const refused = planAdoption(noCa, [], true, {
      kubeconfig: await mintKubeconfigSecret(noCa, new Date()),
    });
    expect(refused).toMatchObject({
      kind: 'refused',
      reason: expect.stringMatching(/lab-kubeconfig .*lab-ca has no tls\.crt/),
    });
  });

  it("the Cluster's touch is done once it is initialized, or its request names the TalosControlPlane as it is now", () => {
    const kit = labKitObjects();
    const tcp = kit.find((o) => o.kind === 'TalosControlPlane')!;
    const cluster = kit.find((o) => o.kind === 'Cluster')!;
    const live = (
      tcpVersion: string,
      annotation: string | undefined,
      status: Record<string, unknown> = {},
    ) => [
      {
        ...tcp,
        metadata: { ...tcp.metadata, resourceVersion: tcpVersion },
        status: { initialized: true, ready: true },
      },
      {
        ...cluster,
        metadata: {
          ...cluster.metadata,
          uid: 'u',
          ...(annotation && { annotations: { 'ferry.dev/reconcile-requested': annotation } }),
        },
        spec: { ...cluster.spec, paused: false },
        status,
      },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'lab-kubeconfig', namespace: 'lab' } },
    ];
    const touch = (objs: KubeObject[]) => {
      const p = planAdoption(kit, objs, true, {});
      if (p.kind !== 'plan') throw new Error(p.reason);
      return p.steps.find((x) => x.step.kind === 'touch-cluster')!;
    };
    expect(touch(live('7', '7')).done).toBe(true);
    // The status changed after the touch (by hand, by a controller): ask again.
    expect(touch(live('8', '7')).done).toBe(false);
    expect(touch(live('8', undefined)).done).toBe(false);
    expect(touch(live('8', '7', { initialization: { controlPlaneInitialized: true } })).done).toBe(true);
    expect(touch(live('8', '7')).step).toMatchObject({ controlPlane: 'lab-control-plane' });
  });

  it('the initialized status is done once initialized holds: a not-ready the controller reports is not written over', () => {
    const kit = labKitObjects();
    const tcp = kit.find((o) => o.kind === 'TalosControlPlane')!;
    const step = (status: Record<string, unknown> | undefined, contract: 'v1beta1' | 'v1beta2') => {
      const secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'lab-kubeconfig', namespace: 'lab' },
      };
      const p = planAdoption(kit, [{ ...tcp, ...(status && { status }) }, secret], true, { contract });
      if (p.kind !== 'plan') throw new Error(p.reason);
      return p.steps.find((x) => x.step.kind === 'tcp-initialized')!;
    };
    expect(step({ initialized: true, ready: false }, 'v1beta1').done).toBe(true);
    expect(step({ ready: true }, 'v1beta1').done).toBe(false);
    expect(step(undefined, 'v1beta1').done).toBe(false);
    expect(step({ initialized: true }, 'v1beta2').done).toBe(false);
    expect(step({ initialization: { controlPlaneInitialized: true } }, 'v1beta2').done).toBe(true);
    expect(step({ initialization: { controlPlaneInitialized: false } }, 'v1beta2').done).toBe(false);
  });
});
