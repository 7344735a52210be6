/**
 * A capi plan: adoption is ferry's act step at the end of phase 1 (before any Talos Machine), the
 * hand-over ferry's act step in after-care; no manual Cluster API step is left; with a kit, the
 * runbook's kubectl commands name the kit's objects.
 */
import { describe, expect, it } from 'vitest';
import { labKitObjects } from '../capi/testing-kit.js';
import { capiNamesOf } from '../kit/capi-names.js';
import { exampleSnapshot } from '../snapshot/testing-example.js';
import { buildPlan } from './build.js';
import { PLAN_FORMAT_VERSION } from './model.js';
import { inputsFor } from './testing-example.js';

const names = capiNamesOf(
  labKitObjects('lab')
    .filter((o) => o.kind !== 'Secret')
    .map((value, line) => ({ value, line })),
  'capi/cluster.yaml',
);

describe('capi plan steps', () => {
  it('adopts at the end of phase 1 and hands over in after-care, both ferry acts', async () => {
    const plan = buildPlan(inputsFor(await exampleSnapshot(), { target: { provisioner: 'capi' } }));
    expect(plan.formatVersion).toBe(PLAN_FORMAT_VERSION);
    expect(PLAN_FORMAT_VERSION).toBe(4);
    const p1 = plan.phases.find((p) => p.id === 1)!.steps;
    expect(p1.at(-1)?.kind).toBe('capi-adopt');
    const p5 = plan.phases.find((p) => p.id === 5)!.steps;
    const handover = p5.find((s) => s.kind === 'capi-handover');
    expect(handover?.action.performer).toBe('ferry');
    expect(handover?.kind === 'capi-handover' && handover.params.replicas).toBe(plan.controlPlanes.length);
    const all = plan.phases.flatMap((p) => p.steps);
    expect(all.filter((s) => s.kind === 'manual' && /TalosControlPlane/.test(s.title))).toEqual([]);
    // Every capi step is before/after every swap: adoption before the first provision, hand-over after the last.
    const idx = (k: string) => all.findIndex((s) => s.kind === k);
    expect(idx('capi-adopt')).toBeLessThan(idx('provision'));
    expect(idx('capi-handover')).toBeGreaterThan(all.findLastIndex((s) => s.kind === 'etcd-remove-member'));
  });

  it("with a kit, the runbook's kubectl commands name its objects", async () => {
    const kit = { path: 'kit' };
    const { capiAdoptStep, capiHandoverStep } = await import('./capi-steps.js');
    const adopt = capiAdoptStep(kit.path, names);
    const text = adopt.action.commands.map((c) => c.run).join('\n');
    expect(text).toContain(
      `kubectl --kubeconfig "$MGMT_KUBECONFIG" -n lab patch taloscontrolplanes.controlplane.cluster.x-k8s.io ${names.controlPlane} --subresource=status --type=merge -p '{"status":{"bootstrapped":true}}'`,
    );
    const hand = capiHandoverStep(kit.path, names, 3);
    expect(hand.action.commands.map((c) => c.run).join('\n')).toContain(
      `annotate taloscontrolplanes.controlplane.cluster.x-k8s.io ${names.controlPlane} cluster.x-k8s.io/paused-`,
    );
  });
});
