import { describe, expect, it } from 'vitest';
import { iacOwned } from '../audit/rules/gitops.js';
import { buildIndex } from '../audit/snapshot-index.js';
import { deriveFacts } from '../facts/derive.js';
import type { Snapshot } from '../snapshot/model.js';
import { exampleSnapshot } from '../snapshot/testing-example.js';
import { buildPlan } from './build.js';
import { iacResumeSteps } from './gitops-steps.js';
import { inputsFor } from './testing-example.js';

/** The example, its Cilium agent and CoreDNS Deployment labelled as Terraform manages them. */
async function terraformExample(): Promise<Snapshot> {
  const s = await exampleSnapshot();
  for (const o of [
    s.resources.daemonsets.find((d) => d.metadata.name === 'cilium'),
    s.resources.deployments.find((d) => d.metadata.name === 'coredns'),
  ]) {
    if (!o) throw new Error('the example lacks the Cilium agent or CoreDNS');
    o.metadata.labels = { ...o.metadata.labels, 'app.kubernetes.io/managed-by': 'Terraform' };
  }
  return s;
}

describe('Terraform-managed objects in the plan', () => {
  it('stops its pipelines first in phase 1 and gives them back last in after-care, both confirmed by the operator', async () => {
    const plan = buildPlan(inputsFor(await terraformExample()));
    const first = plan.phases[1]!.steps[0]!;
    expect(first.kind).toBe('manual');
    expect(first.title).toBe(
      'Pause the Terraform pipelines: they would put back DaemonSet kube-system/cilium, Deployment kube-system/coredns',
    );
    expect(first.verify.expect.operator?.confirms).toBe(
      'no Terraform pipeline applies to this cluster until the migration ends',
    );
    const last = plan.phases[5]!.steps.at(-1)!;
    expect(last.title).toBe('Give Terraform back what it manages, as the migration left it');
    const text = JSON.stringify(last);
    expect(text).toContain('Talos manages Deployment kube-system/coredns now');
    expect(text).toContain('tofu/cluster-objects/');
    // Without a kit there is no directory to run in: no command is printed.
    expect(last.action.commands).toEqual([]);
  });

  it('names the kit directory and the clean import plan to expect', async () => {
    const s = await terraformExample();
    const owned = iacOwned({
      snapshot: s,
      facts: deriveFacts(s),
      target: deriveFacts(s).target,
      index: buildIndex(s),
    });
    expect(owned.map((o) => [o.manager, o.objects.map((t) => t.change)])).toEqual([
      ['Terraform', ['cilium-values', 'talos-adopts']],
    ]);
    const [step] = iacResumeSteps(owned, '/srv/kit');
    expect(step!.action.commands).toEqual([
      {
        run: 'cd /srv/kit/tofu/cluster-objects && tofu init && tofu plan -var kubeconfig="$KUBECONFIG" -generate-config-out=generated.tf',
        where: expect.anything(),
        note: 'shows 1 to import, 0 to add, 0 to change, 0 to destroy',
      },
    ]);
  });

  it('adds nothing when nothing is Terraform-managed', async () => {
    const plan = buildPlan(inputsFor(await exampleSnapshot()));
    expect(JSON.stringify(plan)).not.toContain('Terraform pipelines');
  });
});
