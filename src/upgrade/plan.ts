/**
 * `ferry upgrade plan`'s core (pure): the management cluster's objects for one Cluster, optionally
 * the workload cluster's, and a target in; the stages, the objects each writes in order, and what
 * refuses the upgrade out. A Kubernetes upgrade moves the TalosControlPlane's `spec.version`, then
 * each pool's, one minor per stage; a Talos upgrade creates new (immutable) machine and bootstrap
 * templates and points the TalosControlPlane and the pools at them, one Talos minor per stage.
 */

import { referenceAt } from '../capi/refs.js';
import {
  machines as allMachines,
  bootstrapConfigRef,
  clusterNamed,
  clusterNameOf,
  isPaused,
  machineDeployments,
  objectName,
  talosConfigs,
  talosControlPlanes,
} from '../capi/view.js';
import { lookupTalosRelease, SUPPORTED_TALOS_MINORS, type TalosRelease } from '../knowledge/talos.js';
import { describeNotObserved, type KubeObject, type Snapshot } from '../snapshot/model.js';
import { compareVersionText, minorOf } from '../util/semver.js';
import type { Blocker, Stage, UpgradeInput, UpgradePlan, Write } from './model.js';
import { canonicalJson, derivedName } from './names.js';
import { MACHINE_SECONDS, planPool, poolMachines } from './pools.js';
import { removalsBetween, removedApiUses } from './removed-apis.js';
import { freshCopy, getPath, imageFieldOf, setPath } from './templates.js';
import { kubeletSkew, kubernetesPath, talosPath, talosWindow } from './versions.js';

const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';
const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';

/** The workload reads a pool's budgets need: a read refused is not an empty list. */
const BUDGET_INPUTS = new Set([
  'nodes',
  'pods',
  'poddisruptionbudgets',
  'deployments',
  'statefulsets',
  'replicasets',
]);

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

function empty(
  input: UpgradeInput,
  blockers: Blocker[],
  current = { kubernetes: '', talos: null as string | null, talosSource: '' },
): UpgradePlan {
  return {
    kind: 'FerryUpgradePlan',
    format: 1,
    cluster: `${input.cluster.namespace}/${input.cluster.name}`,
    target: input.target,
    current,
    stages: [],
    blockers,
    warnings: [],
    seconds: 0,
  };
}

/** "Talos (v1.12.0)" → "v1.12.0". */
function talosOfNode(n: KubeObject): string | undefined {
  const os = str(n.status?.nodeInfo?.osImage);
  return os ? /^Talos \((v[^)]+)\)/.exec(os)?.[1] : undefined;
}

function currentTalos(
  tcp: KubeObject,
  workload: Snapshot | null,
  nodeNames: Set<string>,
): { version: string | null; source: string; versions: string[] } {
  const seen = new Set<string>();
  for (const n of workload?.resources.nodes ?? []) {
    if (!nodeNames.has(n.metadata.name)) continue;
    const v = talosOfNode(n);
    if (v) seen.add(v);
  }
  const versions = [...seen].sort(compareVersionText);
  if (versions.length > 0)
    return { version: versions[0]!, source: "the Nodes' osImage (workload cluster)", versions };
  const line = str(getPath(tcp, ['spec', 'controlPlaneConfig', 'controlplane', 'talosVersion']));
  return {
    version: line ?? null,
    source:
      "the TalosControlPlane's controlPlaneConfig.controlplane.talosVersion (no workload cluster given: its patch is unknown)",
    versions: [],
  };
}

/** The MachineDeployment's rollout fields, at its apiVersion's place (v1beta2 spec.rollout, v1beta1 spec.strategy). */
function rolloutPatch(md: KubeObject, maxSurge: number, maxUnavailable: number): Record<string, unknown> {
  const rollingUpdate = { maxSurge, maxUnavailable };
  return md.apiVersion.endsWith('/v1beta1')
    ? { strategy: { type: 'RollingUpdate', rollingUpdate } }
    : { rollout: { strategy: { type: 'RollingUpdate', rollingUpdate } } };
}

function refPatch(o: KubeObject, field: string, name: string): Record<string, unknown> {
  const raw = getPath(o, field.split('.')) as Record<string, unknown> | undefined;
  return { ...(raw ?? {}), name };
}

export function buildUpgradePlan(input: UpgradeInput): UpgradePlan {
  const { mgmt, workload } = input;
  const ns = input.cluster.namespace;
  const subject = `Cluster ${ns}/${input.cluster.name}`;
  const cluster = clusterNamed(mgmt, ns, input.cluster.name);
  if (!cluster) return empty(input, [{ kind: 'cluster-not-found', cluster: `${ns}/${input.cluster.name}` }]);
  const cpRef = referenceAt(cluster, 'spec.controlPlaneRef');
  const tcp = talosControlPlanes(mgmt).find(
    (t) => t.metadata.namespace === (cpRef?.namespace ?? ns) && t.metadata.name === cpRef?.name,
  );
  if (!tcp || cpRef?.kind !== 'TalosControlPlane')
    return empty(input, [
      {
        kind: 'no-talos-control-plane',
        cluster: `${ns}/${input.cluster.name}`,
        controlPlane: cpRef ? `${cpRef.kind ?? '?'} ${cpRef.name}` : null,
      },
    ]);
  const name = input.cluster.name;
  const mds = machineDeployments(mgmt)
    .filter((d) => d.metadata.namespace === ns && clusterNameOf(d) === name)
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  const machines = allMachines(mgmt).filter(
    (m) => m.metadata.namespace === ns && m.metadata.labels?.[CLUSTER_NAME_LABEL] === name,
  );
  const cpMachines = machines.filter((m) => m.metadata.labels?.[CONTROL_PLANE_LABEL] !== undefined);
  const blockers: Blocker[] = [];
  const warnings: string[] = [];

  // -- refusals: what must hold before anything is planned
  // The Cluster's spec.paused or annotation stops every controller of it; the others' annotation theirs.
  const paused = [cluster, tcp, ...mds].filter((o) => isPaused(o, o === cluster ? cluster : undefined));
  if (paused.length > 0)
    blockers.push({
      kind: 'paused',
      objects: paused.map((o) =>
        objectName({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }),
      ),
    });
  const kubernetes = str(tcp.spec?.version);
  const byVersion = new Map<string, string[]>();
  for (const m of machines) {
    const v = str(m.spec?.version) ?? '(none)';
    byVersion.set(v, [...(byVersion.get(v) ?? []), m.metadata.name]);
  }
  const cpBehind = cpMachines.filter((m) => kubernetes !== undefined && str(m.spec?.version) !== kubernetes);
  if (byVersion.size > 1 || cpBehind.length > 0) {
    if (kubernetes && !byVersion.has(kubernetes)) byVersion.set(kubernetes, []);
    blockers.push({
      kind: 'upgrade-in-progress',
      versions: [...byVersion]
        .map(([version, ms]) => ({ version, machines: ms.sort() }))
        .sort((a, b) => compareVersionText(a.version, b.version)),
    });
  }
  const nodeNames = new Set(machines.flatMap((m) => str(m.status?.nodeRef?.name) ?? []));
  const talos = currentTalos(tcp, workload, nodeNames);
  if (talos.versions.length > 1)
    blockers.push({
      kind: 'upgrade-in-progress',
      versions: talos.versions.map((v) => ({ version: `Talos ${v}`, machines: [] })),
    });
  const current = { kubernetes: kubernetes ?? '', talos: talos.version, talosSource: talos.source };
  if (!kubernetes)
    return {
      ...empty(
        input,
        [...blockers, { kind: 'version-unknown', what: "the TalosControlPlane's spec.version", found: null }],
        current,
      ),
    };

  // -- what the workload cluster did not show
  if (workload) {
    const missing = (workload.manifest.unobserved ?? []).filter((n) => BUDGET_INPUTS.has(n.input));
    if (missing.length > 0) blockers.push({ kind: 'not-observed', reads: missing.map(describeNotObserved) });
  }

  const stages: Stage[] = [];
  const plan = (): UpgradePlan => {
    const seconds = stages.reduce((s, x) => s + x.seconds, 0);
    return { ...empty(input, blockers, current), stages, warnings, seconds };
  };

  const looked = talos.version ? lookupTalosRelease(talos.version) : undefined;
  const talosRelease: TalosRelease | undefined = looked?.kind === 'release' ? looked.release : undefined;
  const replicas = typeof tcp.spec?.replicas === 'number' ? tcp.spec.replicas : cpMachines.length;
  const cpSeconds = Math.max(1, replicas) * MACHINE_SECONDS;
  const cpName = objectName({ kind: 'TalosControlPlane', namespace: ns, name: tcp.metadata.name });
  const strategy = str(tcp.spec?.rolloutStrategy?.type) ?? 'RollingUpdate';
  const maxSurgeCp = tcp.spec?.rolloutStrategy?.rollingUpdate?.maxSurge ?? 1;
  // capi.md (CACPPT): replicas 1 with maxSurge 0 deletes first and never proceeds.
  if (strategy === 'RollingUpdate' && replicas <= 1 && Number(maxSurgeCp) === 0)
    blockers.push({ kind: 'control-plane-rollout-stuck', controlPlane: cpName, replicas });
  // H7: CACPPT compares each Machine's TalosConfig with the TalosControlPlane's, and one that
  // differs is outdated whatever the version: such a Machine rolls with any change, this one too.
  const want = canonicalJson(getPath(tcp, ['spec', 'controlPlaneConfig', 'controlplane']) ?? null);
  const drifted = cpMachines.filter((m) => {
    const ref = bootstrapConfigRef(m);
    const tc =
      ref && talosConfigs(mgmt).find((c) => c.metadata.namespace === ns && c.metadata.name === ref.name);
    return tc !== undefined && canonicalJson(tc.spec ?? null) !== want;
  });
  if (drifted.length > 0)
    warnings.push(
      `control-plane Machine(s) ${drifted.map((m) => m.metadata.name).join(', ')}: their TalosConfig differs from the TalosControlPlane's controlPlaneConfig.controlplane, so the provider counts them outdated and rolls them with any change (and a RollingUpdate control plane rolls them even without one)`,
    );
  // Oldest first: the order CACPPT itself picks outdated Machines in.
  const cpOrder = [...cpMachines].sort(
    (a, b) =>
      String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')) ||
      a.metadata.name.localeCompare(b.metadata.name),
  );
  /** The TalosControlPlane's patch and its roll: the provider's (RollingUpdate) or one Machine deleted at a time (OnDelete). */
  const cpWrites = (patch: Record<string, unknown>, why: string, done: string): Write[] => {
    const head: Write = {
      kind: 'patch',
      target: cpName,
      apiVersion: tcp.apiVersion,
      patch: { spec: patch },
      why,
    };
    if (strategy !== 'OnDelete')
      return [
        head,
        {
          kind: 'wait',
          what: `TalosControlPlane ${tcp.metadata.name}: ${replicas} Machine(s) ${done}, Ready, etcd members = Machines`,
          seconds: cpSeconds,
        },
      ];
    return [
      head,
      ...cpOrder.flatMap((m): Write[] => [
        {
          kind: 'delete',
          target: objectName({ kind: 'Machine', namespace: ns, name: m.metadata.name }),
          why: 'rolloutStrategy OnDelete: the provider replaces a control-plane Machine only once it is deleted',
        },
        {
          kind: 'wait',
          what: `its replacement ${done} and Ready, etcd members = Machines = ${replicas}`,
          seconds: MACHINE_SECONDS,
        },
      ]),
    ];
  };

  // -- the pools' budgets: the same for every stage (the workloads do not change between them)
  const pools = mds.map((md) => ({
    md,
    answer: planPool(md, poolMachines(md, machines), workload, { surgeReplicas: input.surgeReplicas }),
  }));
  for (const p of pools) {
    blockers.push(...p.answer.blockers);
    warnings.push(...p.answer.warnings);
  }
  const workloadObjects = workload
    ? Object.values(workload.resources)
        .flat()
        .map((object) => ({ object: object as KubeObject, file: null }))
    : [];
  const scanned = [...workloadObjects, ...input.manifests.map((m) => ({ object: m.object, file: m.file }))];

  const poolWrites = (
    md: KubeObject,
    specPatch: Record<string, unknown>,
    why: string,
    answer: (typeof pools)[number]['answer'],
  ): Write[] => [
    ...answer.before,
    {
      kind: 'patch',
      target: objectName({ kind: 'MachineDeployment', namespace: ns, name: md.metadata.name }),
      apiVersion: md.apiVersion,
      patch: {
        spec: {
          ...rolloutPatch(md, answer.roll.maxSurge, answer.roll.maxUnavailable),
          template: { spec: specPatch },
        },
      },
      why,
    },
    {
      kind: 'wait',
      what: `MachineDeployment ${md.metadata.name}: every Machine on the new spec and Ready`,
      seconds: answer.roll.seconds,
    },
    ...answer.after,
  ];

  if (input.target.kind === 'kubernetes') {
    const path = kubernetesPath(kubernetes, input.target.version);
    if (path.kind === 'refused') {
      blockers.push(path.blocker);
      return plan();
    }
    if (path.stops.length === 0)
      warnings.push(`${subject} already runs Kubernetes ${kubernetes}: nothing to do`);
    if (!talosRelease && path.stops.length > 0)
      blockers.push(
        talos.version
          ? { kind: 'talos-line-unknown', line: talos.version, known: SUPPORTED_TALOS_MINORS }
          : { kind: 'version-unknown', what: 'the current Talos version', found: null },
      );
    const last = path.stops.at(-1);
    if (last) blockers.push(...removedApiUses(scanned, removalsBetween(kubernetes, last.version)));
    let from = kubernetes;
    const poolVersions = new Map(
      pools.map((p) => [p.md.metadata.name, str(p.md.spec?.template?.spec?.version) ?? kubernetes]),
    );
    for (const stop of path.stops) {
      if (talosRelease) {
        const w = talosWindow(talosRelease, stop.version);
        if (w) blockers.push(w);
      }
      // Workers stay on their version while the control plane moves: the skew they are left with.
      for (const p of pools) {
        // The Nodes' own kubelets only until the pool's first roll: after it they run the pool's version.
        const first = stop === path.stops[0];
        const kubelets = [
          poolVersions.get(p.md.metadata.name)!,
          ...(first ? kubeletsOf(workload, p.answer.roll.nodes) : []),
        ];
        for (const k of new Set(kubelets)) {
          const s = kubeletSkew(p.md.metadata.name, k, stop.version);
          if (s) blockers.push(s);
        }
      }
      const writes: Write[] = cpWrites(
        { version: stop.version },
        `the control plane to Kubernetes ${stop.version}: each control-plane Machine is replaced in turn`,
        `on ${stop.version}`,
      );
      for (const p of pools) {
        writes.push(
          ...poolWrites(
            p.md,
            { version: stop.version },
            `pool ${p.md.metadata.name} to Kubernetes ${stop.version}`,
            p.answer,
          ),
        );
        poolVersions.set(p.md.metadata.name, stop.version);
      }
      stages.push(
        stage(
          stages.length + 1,
          'kubernetes',
          from,
          stop.version,
          stop.source,
          tcp,
          replicas,
          cpSeconds,
          pools.map((p) => p.answer.roll),
          writes,
        ),
      );
      from = stop.version;
    }
    return plan();
  }

  // -- Talos
  if (!talos.version) {
    blockers.push({ kind: 'version-unknown', what: 'the current Talos version', found: null });
    return plan();
  }
  const path = talosPath(talos.version, input.target.version);
  if (path.kind === 'refused') {
    blockers.push(path.blocker);
    return plan();
  }
  if (path.stops.length === 0) warnings.push(`${subject} already runs Talos ${talos.version}: nothing to do`);
  if (minorOf(talos.version) !== undefined && /^v?\d+\.\d+$/.test(talos.version) && path.stops.length > 0)
    warnings.push(
      `the current Talos patch is unknown (${talos.source}); give --snapshot or --kubeconfig to read it from the Nodes`,
    );
  const byName = (kind: string, n: string | undefined) =>
    mgmt.objects.find((o) => o.kind === kind && o.metadata.namespace === ns && o.metadata.name === n);
  const templateOf = (o: KubeObject, field: string): KubeObject | undefined => {
    const r = referenceAt(o, field);
    const t = r?.kind ? byName(r.kind, r.name) : undefined;
    if (!t)
      blockers.push({
        kind: 'template-missing',
        referrer: objectName({ kind: o.kind, namespace: ns, name: o.metadata.name }),
        template: r ? `${r.kind ?? '?'} ${r.name}` : `(no ${field})`,
      });
    return t;
  };
  // The templates each referrer uses now; each stage replaces them with its own.
  let cpTemplate = templateOf(tcp, 'spec.infrastructureTemplate');
  const poolTemplates = new Map(
    pools.map((p) => [
      p.md.metadata.name,
      {
        infra: templateOf(p.md, 'spec.template.spec.infrastructureRef'),
        bootstrap: templateOf(p.md, 'spec.template.spec.bootstrap.configRef'),
      },
    ]),
  );
  let from = talos.version;
  const usedIds = new Map<string, string[]>();
  for (const o of mgmt.objects) {
    const f = imageFieldOf(o);
    const v = f ? getPath(o, f.path) : undefined;
    if (v !== undefined)
      usedIds.set(String(v), [
        ...(usedIds.get(String(v)) ?? []),
        objectName({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }),
      ]);
  }
  path.stops.forEach((stop, i) => {
    const to = stop.release.version;
    const line = `v${stop.release.minor}`;
    const w = talosWindow(stop.release, kubernetes);
    if (w) blockers.push(w);
    const id = input.templateIds[i];
    const created = new Map<string, KubeObject>();
    const writes: Write[] = [];
    // A new infrastructure template per template in use: same spec, the new image.
    const newInfra = (old: KubeObject | undefined): KubeObject | undefined => {
      if (!old) return undefined;
      const field = imageFieldOf(old);
      if (!field) {
        blockers.push({
          kind: 'infrastructure-unsupported',
          template: old.metadata.name,
          templateKind: old.kind,
        });
        return undefined;
      }
      if (id === undefined) return undefined;
      const value = field.parse(id);
      if (value === undefined) {
        const b: Blocker = {
          kind: 'template-id-malformed',
          templateId: id,
          templateKind: old.kind,
          expected: field.expected,
        };
        if (!blockers.some((x) => x.kind === b.kind && x.templateId === id && x.templateKind === old.kind))
          blockers.push(b);
        return undefined;
      }
      const spec = structuredClone(old.spec) as Record<string, unknown>;
      setPath({ spec } as Record<string, unknown>, field.path, value);
      const n = derivedName(old.metadata.name, spec);
      const done = created.get(n);
      if (done) return done;
      const obj = { ...freshCopy(old, n), spec };
      created.set(n, obj);
      if (!byName(obj.kind, n))
        writes.push({
          kind: 'create',
          object: obj,
          why: `${old.kind} ${old.metadata.name} with the Talos ${to} image (templates are immutable)`,
        });
      return obj;
    };
    if (id === undefined) {
      const field = cpTemplate ? imageFieldOf(cpTemplate) : undefined;
      blockers.push({
        kind: 'template-id-missing',
        stage: i + 1,
        talos: to,
        commands: field ? field.build(to) : [],
      });
    } else {
      const earlier = input.templateIds.indexOf(id);
      const inUse = earlier < i ? [`the template of stage ${earlier + 1}`] : usedIds.get(id);
      if (inUse) blockers.push({ kind: 'template-id-in-use', templateId: id, usedBy: inUse.join(', ') });
    }
    const cpNew = newInfra(cpTemplate);
    const cpPatch: Record<string, unknown> = {
      controlPlaneConfig: { controlplane: { talosVersion: line } },
      ...(cpNew && {
        infrastructureTemplate: refPatch(tcp, 'spec.infrastructureTemplate', cpNew.metadata.name),
      }),
    };
    const poolSteps: Write[] = [];
    for (const p of pools) {
      const t = poolTemplates.get(p.md.metadata.name)!;
      const infra = newInfra(t.infra);
      let boot: KubeObject | undefined;
      if (t.bootstrap) {
        const spec = structuredClone(t.bootstrap.spec) as Record<string, unknown>;
        setPath({ spec } as Record<string, unknown>, ['spec', 'template', 'spec', 'talosVersion'], line);
        const n = derivedName(t.bootstrap.metadata.name, spec);
        boot = created.get(n) ?? { ...freshCopy(t.bootstrap, n), spec };
        if (!created.has(n)) {
          created.set(n, boot);
          if (!byName(boot.kind, n))
            writes.push({
              kind: 'create',
              object: boot,
              why: `${t.bootstrap.kind} ${t.bootstrap.metadata.name} for Talos ${line}`,
            });
        }
      }
      const specPatch: Record<string, unknown> = {
        ...(boot && {
          bootstrap: {
            configRef: refPatch(p.md, 'spec.template.spec.bootstrap.configRef', boot.metadata.name),
          },
        }),
        ...(infra && {
          infrastructureRef: refPatch(p.md, 'spec.template.spec.infrastructureRef', infra.metadata.name),
        }),
      };
      poolSteps.push(...poolWrites(p.md, specPatch, `pool ${p.md.metadata.name} to Talos ${to}`, p.answer));
      poolTemplates.set(p.md.metadata.name, { infra: infra ?? t.infra, bootstrap: boot ?? t.bootstrap });
    }
    writes.push(
      ...cpWrites(
        cpPatch,
        `the control plane to Talos ${to}: a new template and TalosConfig spec make every control-plane Machine outdated; each is replaced in turn`,
        'from the new template',
      ),
      ...poolSteps,
    );
    if (cpNew) cpTemplate = cpNew;
    stages.push(
      stage(
        i + 1,
        'talos',
        from,
        to,
        stop.source,
        tcp,
        replicas,
        cpSeconds,
        pools.map((p) => p.answer.roll),
        writes,
      ),
    );
    from = to;
  });
  return plan();
}

function kubeletsOf(workload: Snapshot | null, nodes: readonly string[]): string[] {
  const names = new Set(nodes);
  return (workload?.resources.nodes ?? []).flatMap((n) =>
    names.has(n.metadata.name) ? (str(n.status?.nodeInfo?.kubeletVersion) ?? []) : [],
  );
}

function stage(
  index: number,
  kind: Stage['kind'],
  from: string,
  to: string,
  versionSource: string,
  tcp: KubeObject,
  replicas: number,
  cpSeconds: number,
  pools: Stage['pools'],
  writes: Write[],
): Stage {
  const seconds = cpSeconds + pools.reduce((s, p) => s + p.seconds, 0);
  return {
    index,
    kind,
    from,
    to,
    versionSource,
    controlPlane: { name: tcp.metadata.name, replicas, seconds: cpSeconds },
    pools,
    writes,
    seconds,
  };
}
