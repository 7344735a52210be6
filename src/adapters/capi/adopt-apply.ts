/**
 * Carries out an adoption plan (adopt-plan.ts) against the management cluster: reads what exists,
 * plans, validates every object it will send against the CRDs the package carries (nothing is sent
 * when one is invalid), then runs each step not yet done in order and verifies it by reading the
 * object back. A refused plan is a gate stop; re-running after success changes nothing.
 */

import { mintKubeconfigSecret } from '../../capi/adopt-kubeconfig.js';
import {
  type AdoptStep,
  controlPlaneContract,
  describeStep,
  type PlannedStep,
  planAdoption,
  RECONCILE_ANNOTATION,
  statusHas,
} from '../../capi/adopt-plan.js';
import { kubeconfigSecretName, PAUSED_ANNOTATION } from '../../capi/view.js';
import { FerryError } from '../../errors.js';
import type { CrdValidator } from '../../generate/schema/crd.js';
import { isKubeApiError } from '../../ports/kube.js';
import type { KubeObject } from '../../snapshot/model.js';
import { CRD_PATH, KubeClient } from '../kube/client.js';
import type { KubeRequester } from '../kube/request.js';

interface Resource {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

export interface AdoptResult {
  /** Steps carried out and verified, described. */
  applied: string[];
  /** Steps the cluster already showed. */
  alreadyDone: string[];
  nothingToDo: boolean;
}

interface CrdSpec {
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string };
    versions: { name: string; storage?: boolean }[];
  };
}

async function resources(req: KubeClient): Promise<Map<string, Resource>> {
  const out = new Map<string, Resource>();
  for (const c of (await req.customResourceDefinitions()) as unknown as CrdSpec[]) {
    const storage = c.spec.versions.find((v) => v.storage)?.name ?? c.spec.versions[0]?.name ?? '';
    out.set(`${c.spec.group}|${c.spec.names.kind}`, {
      group: c.spec.group,
      version: storage,
      plural: c.spec.names.plural,
      namespaced: c.spec.scope === 'Namespaced',
    });
  }
  return out;
}

function pathOf(o: KubeObject, res: Map<string, Resource>, withName = true): string {
  const ns = o.metadata.namespace ?? 'default';
  const name = withName ? `/${encodeURIComponent(o.metadata.name)}` : '';
  if (o.kind === 'Namespace') return `/api/v1/namespaces${name}`;
  if (o.kind === 'Secret') return `/api/v1/namespaces/${ns}/secrets${name}`;
  const [group, version] = o.apiVersion.split('/');
  const r = res.get(`${group}|${o.kind}`);
  if (!r)
    // Most often the wrong kubeconfig (a workload cluster): bad input, not a gate.
    throw new FerryError('input', `the management cluster serves no ${o.kind} (${o.apiVersion})`, {
      remediation:
        'point --mgmt-kubeconfig at the management cluster, or install the Cluster API providers there first (clusterctl init --infrastructure … --bootstrap talos --control-plane talos)',
    });
  return r.namespaced
    ? `/apis/${group}/${version}/namespaces/${ns}/${r.plural}${name}`
    : `/apis/${group}/${version}/${r.plural}${name}`;
}

async function getOrNull(req: KubeClient, path: string): Promise<KubeObject | null> {
  return (await req.get(path)) ?? null;
}

const ref = (kind: string, apiVersion: string, namespace: string, name: string): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, namespace },
});

/** What adoption would do now: the plan over the live state, every object to send checked against its CRD. */
export async function inspectAdoption(
  requester: KubeRequester,
  kit: KubeObject[],
  opts: { kubeadmMembersRemain: boolean; crds: CrdValidator },
): Promise<{ plan: PlannedStep[]; nothingToDo: boolean; res: Map<string, Resource> }> {
  const req = KubeClient.of(requester);
  const res = await resources(req);
  const cluster = kit.find((o) => o.kind === 'Cluster');
  const ns = cluster?.metadata.namespace ?? 'default';
  const live: KubeObject[] = [];
  if (await getOrNull(req, `/api/v1/namespaces/${ns}`)) live.push(ref('Namespace', 'v1', '', ns));
  for (const o of kit) {
    const got = await getOrNull(req, pathOf(o, res));
    if (got) live.push({ ...got, apiVersion: o.apiVersion, kind: o.kind });
  }
  const machinesPath = pathOf(ref('Machine', 'cluster.x-k8s.io/v1beta2', ns, ''), res, false);
  // A namespace not made yet may answer 404 where Kubernetes answers an empty list.
  const machines = await req.list(machinesPath).catch((err: unknown) => {
    if (isKubeApiError(err, 404)) return [];
    throw err;
  });
  for (const m of machines) live.push({ ...m, kind: 'Machine' });
  const kubeconfig = await getOrNull(
    req,
    `/api/v1/namespaces/${ns}/secrets/${encodeURIComponent(kubeconfigSecretName(cluster?.metadata.name ?? ''))}`,
  );
  if (kubeconfig) live.push({ ...kubeconfig, apiVersion: 'v1', kind: 'Secret' });
  const tcpCrd = await getOrNull(req, `${CRD_PATH}/taloscontrolplanes.controlplane.cluster.x-k8s.io`);

  const plan = planAdoption(kit, live, opts.kubeadmMembersRemain, {
    // Minted only when missing; never printed.
    ...(!kubeconfig && { kubeconfig: await mintKubeconfigSecret(kit, new Date()) }),
    contract: controlPlaneContract(tcpCrd?.metadata.labels),
  });
  if (plan.kind === 'refused') throw new FerryError('gate', plan.reason, { remediation: plan.remediation });
  // Every object is checked before the first request that changes anything.
  const invalid = plan.steps.flatMap(({ step }) =>
    step.kind === 'create' && opts.crds.knows(step.object.apiVersion, step.object.kind)
      ? opts.crds.validate(step.object)
      : [],
  );
  if (invalid.length > 0)
    throw new FerryError(
      'internal',
      `the kit's Cluster API objects do not match their CRDs: ${invalid.map((e) => `${e.document} ${e.path} ${e.message}`).join('; ')}`,
      {
        remediation: 'this is a ferry bug: report it with the kit',
      },
    );
  return { plan: plan.steps, nothingToDo: plan.nothingToDo, res };
}

export async function adopt(
  requester: KubeRequester,
  kit: KubeObject[],
  opts: {
    kubeadmMembersRemain: boolean;
    crds: CrdValidator;
    /** Called after each step is carried out and verified. */
    onStep?: (description: string) => void;
  },
): Promise<AdoptResult> {
  const req = KubeClient.of(requester);
  const { plan, nothingToDo, res } = await inspectAdoption(req, kit, opts);
  const result: AdoptResult = { applied: [], alreadyDone: [], nothingToDo };
  for (const { step, done } of plan) {
    if (done) {
      result.alreadyDone.push(describeStep(step));
      continue;
    }
    await run(req, res, step, kit);
    result.applied.push(describeStep(step));
    opts.onStep?.(describeStep(step));
  }
  return result;
}

async function run(
  req: KubeClient,
  res: Map<string, Resource>,
  step: AdoptStep,
  kit: KubeObject[],
): Promise<void> {
  const fail = (what: string) =>
    new FerryError('gate', `adopt: ${describeStep(step)}: ${what}`, {
      remediation:
        'inspect the object in the management cluster; run adopt again once it is fixed (finished steps are skipped)',
    });
  switch (step.kind) {
    case 'namespace': {
      await req.create('/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: step.name },
      });
      if (!(await getOrNull(req, `/api/v1/namespaces/${step.name}`)))
        throw fail('not there after creating it');
      return;
    }
    case 'create': {
      const { status: _s, ...body } = step.object;
      await req.create(pathOf(step.object, res, false), body);
      if (!(await getOrNull(req, pathOf(step.object, res)))) throw fail('not there after creating it');
      return;
    }
    case 'tcp-bootstrapped': {
      const tcp = kit.find((o) => o.kind === 'TalosControlPlane')!;
      const path = pathOf(tcp, res);
      await req.mergePatchStatus(path, { status: { bootstrapped: true } });
      const got = await getOrNull(req, path);
      if (got?.status?.['bootstrapped'] !== true) throw fail('status.bootstrapped did not read back true');
      return;
    }
    case 'kubeconfig-secret': {
      if (!step.secret) throw fail('no Secret was minted');
      const path = `/api/v1/namespaces/${step.namespace}/secrets`;
      await req.create(path, step.secret);
      if (!(await getOrNull(req, `${path}/${encodeURIComponent(step.name)}`)))
        throw fail('not there after creating it');
      return;
    }
    case 'tcp-initialized': {
      const tcp = kit.find((o) => o.kind === 'TalosControlPlane')!;
      const path = pathOf(tcp, res);
      await req.mergePatchStatus(path, { status: step.status });
      if (!statusHas((await getOrNull(req, path))?.status, step.status))
        throw fail('the status did not read back (does the CRD declare this contract?)');
      return;
    }
    case 'touch-cluster': {
      const cluster = kit.find((o) => o.kind === 'Cluster')!;
      const tcp = kit.find((o) => o.kind === 'TalosControlPlane')!;
      const path = pathOf(cluster, res);
      const version = (await getOrNull(req, pathOf(tcp, res)))?.metadata.resourceVersion;
      if (!version) throw fail(`TalosControlPlane ${step.controlPlane} has no resourceVersion`);
      await req.mergePatch(path, { metadata: { annotations: { [RECONCILE_ANNOTATION]: version } } });
      if ((await getOrNull(req, path))?.metadata.annotations?.[RECONCILE_ANNOTATION] !== version)
        throw fail('the annotation did not read back');
      return;
    }
    case 'own-secrets': {
      const cluster = kit.find((o) => o.kind === 'Cluster')!;
      const live = await getOrNull(req, pathOf(cluster, res));
      if (!live?.metadata.uid) throw fail(`Cluster ${step.cluster} has no uid`);
      const owner = {
        apiVersion: cluster.apiVersion,
        kind: 'Cluster',
        name: step.cluster,
        uid: live.metadata.uid,
      };
      for (const name of step.secrets) {
        const path = `/api/v1/namespaces/${step.namespace}/secrets/${encodeURIComponent(name)}`;
        await req.mergePatch(path, { metadata: { ownerReferences: [owner] } });
        const got = await getOrNull(req, path);
        if (!got?.metadata.ownerReferences?.some((r) => r.uid === owner.uid))
          throw fail(`Secret ${name} has no ownerRef to the Cluster`);
      }
      return;
    }
    case 'unpause-cluster': {
      const cluster = kit.find((o) => o.kind === 'Cluster')!;
      const path = pathOf(cluster, res);
      await req.mergePatch(path, { spec: { paused: false } });
      if ((await getOrNull(req, path))?.spec?.['paused'] === true) throw fail('still paused');
      return;
    }
    case 'unpause-tcp': {
      const tcp = kit.find((o) => o.kind === 'TalosControlPlane')!;
      const path = pathOf(tcp, res);
      await req.mergePatch(path, { metadata: { annotations: { [PAUSED_ANNOTATION]: null } } });
      if ((await getOrNull(req, path))?.metadata.annotations?.[PAUSED_ANNOTATION] !== undefined)
        throw fail('still paused');
      return;
    }
  }
}
