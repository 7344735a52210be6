/**
 * The shape of a plan read back from plan.json: every field the orchestrator reads, with the type
 * model.ts and expected-state.ts give it, checked before anything runs. The digest says the file
 * is what `ferry plan` wrote; this says that what it wrote is a plan `ferry run` can execute
 * (defence in depth: a buggy ferry must not get a malformed plan run either). The rules between
 * steps (order, gates) are in invariants.ts and are checked once the shape holds.
 */
import { PROVISIONERS } from '../facts/target.js';
import type { CapiNames } from '../kit/capi-names.js';
import { memberIdHex } from '../util/member-id.js';
import { isRecord, Walk } from '../util/walk.js';
import {
  arrayOf,
  bool,
  byKind,
  type Check,
  fields,
  int,
  name,
  nullable,
  oneOf,
  opt,
  recordOf,
  refine,
  str,
  stringList,
} from '../util/walk-checks.js';
import type {
  BatchBound,
  BlockedPdb,
  LowerBoundTerm,
  Outage,
  OutageReason,
  Owner,
  Resource,
  Shortage,
  SurgedWorkload,
} from './batches/model.js';
import type {
  ApiserverExpectation,
  AuditExpectation,
  BackendExpectation,
  Command,
  CommandExpectation,
  EtcdExpectation,
  ExpectedState,
  FileExpectation,
  KubeadmMemberRef,
  KubeadmNodeRef,
  MachineExpectation,
  MemberExpectation,
  MemberState,
  NodeExpectation,
  ObjectExpectation,
  TalosMemberRef,
  TalosNodeRef,
} from './expected-state.js';
import { invariantIssues } from './invariants.js';
import { type Issue, Issues, show } from './issues.js';
import {
  type Action,
  type ControlPlaneOrder,
  type DrainNode,
  type FindingRef,
  type GitopsOwnerRef,
  type IdempotencyCheck,
  type KitReference,
  type PdbRef,
  type Performer,
  type Phase,
  PLAN_FORMAT_VERSION,
  PLAN_KIND,
  type Plan,
  type PlanContent,
  STEP_KINDS,
  STRATEGIES,
  type Step,
  type StepKind,
  type StepParams,
  type StepTarget,
  type Undo,
  type Verification,
  type WorkerBatch,
  type WorkerOrder,
  type WorkerRoll,
  type WorkloadRef,
} from './model.js';

/** The members of a string union, as a list the compiler keeps complete. */
function members<T extends string>(all: Record<T, true>): T[] {
  return Object.keys(all) as T[];
}

/** Seconds a step may take: a finite number greater than 0. */
const positiveSeconds: Check = (w) => {
  w.number({ above: 0, expected: 'a number of seconds greater than 0' });
};

/** Seconds to wait: a finite number, 0 or more. */
const seconds: Check = (w) => {
  w.number({ min: 0, expected: 'a number of seconds, 0 or more' });
};

// ---- references -------------------------------------------------------------------------------

/** etcd member ids are uint64: a decimal string, never a JSON number (2^53 and above lose digits). */
const memberId: Check = (w) => {
  const v = w.value;
  if (typeof v === 'number')
    return w.invalid(
      `an etcd member id must be a string of decimal digits, not a JSON number: ids are uint64 and lose precision as numbers (this one reads as ${v}), so the plan no longer says which member it means`,
    );
  if (typeof v !== 'string' || !/^\d{1,20}$/.test(v) || BigInt(v) > 0xffff_ffff_ffff_ffffn)
    w.invalid(`must be an etcd member id: a uint64 as a string of decimal digits; got ${show(v)}`);
};

const kubeadmNode = fields<KubeadmNodeRef>({ kind: oneOf(['kubeadm']), name, address: nullable(str) });
const talosNode = fields<TalosNodeRef>({
  kind: oneOf(['talos']),
  replaces: name,
  name: nullable(name),
  address: nullable(str),
});
const nodeRef = byKind({ kubeadm: kubeadmNode, talos: talosNode });

const kubeadmMember = refine(
  fields<KubeadmMemberRef>({
    kind: oneOf(['kubeadm']),
    name: str,
    id: memberId,
    idHex: str,
    node: nullable(str),
    clientURL: nullable(str),
  }),
  // The runbook's commands name the member by idHex, the run by id: they must be one member.
  (w) => {
    const m = w.value as KubeadmMemberRef;
    const hex = memberIdHex(m.id);
    if (m.idHex !== hex) w.at('idHex').invalid(`must be member ${m.id} in hex, ${hex}; got ${show(m.idHex)}`);
  },
);
const talosMember = fields<TalosMemberRef>({ kind: oneOf(['talos']), replaces: name, name: nullable(name) });
const memberRef = byKind({ kubeadm: kubeadmMember, talos: talosMember });

const where = byKind({
  workstation: fields<{ kind: 'workstation' }>({ kind: oneOf(['workstation']) }),
  node: fields<{ kind: 'node'; node: string }>({ kind: oneOf(['node']), node: name }),
});
const command = fields<Command>({ run: str, where, note: opt(str) });
const commands = arrayOf(command);

// ---- expected state ---------------------------------------------------------------------------

const minMax = refine(fields<{ min: number; max: number }>({ min: int(0), max: int(0) }), (w) => {
  const c = w.value as { min: number; max: number };
  if (c.min > c.max) w.invalid(`min ${c.min} is above max ${c.max}`);
});

const count: Check = (w) => (typeof w.value === 'number' ? int(0)(w) : minMax(w));

const healthy: Check = (w) => {
  const v = w.value;
  if (v === 'all') return;
  if (isRecord(v) && 'allExcept' in v) return memberRef(w.at('allExcept'));
  w.invalid(`must be "all" or { allExcept: member }; got ${show(v)}`);
};

const leader: Check = (w) => {
  const v = w.value;
  if (isRecord(v) && 'is' in v !== 'isNot' in v) return memberRef(w.at('is' in v ? 'is' : 'isNot'));
  w.invalid(`must be { is: member } or { isNot: member }; got ${show(v)}`);
};

const MEMBER_STATES = members<MemberState>({
  voter: true,
  'learner-or-voter': true,
  joining: true,
  absent: true,
});

const etcdExpectation = fields<EtcdExpectation>({
  voters: count,
  learners: count,
  total: count,
  healthy,
  members: arrayOf(fields<MemberExpectation>({ member: memberRef, state: oneOf(MEMBER_STATES) })),
  leader: opt(leader),
  caughtUp: opt(fields<NonNullable<EtcdExpectation['caughtUp']>>({ member: memberRef, maxIndexLag: int(0) })),
});

const port = int(1);

const expectedState = fields<ExpectedState>({
  etcd: opt(etcdExpectation),
  nodes: opt(
    arrayOf(
      fields<NodeExpectation>({
        node: nodeRef,
        exists: bool,
        ready: opt(bool),
        cordoned: opt(bool),
        drained: opt(bool),
      }),
    ),
  ),
  loadBalancer: opt(
    arrayOf(fields<BackendExpectation>({ node: nodeRef, address: nullable(str), port, inRotation: bool })),
  ),
  apiservers: opt(arrayOf(fields<ApiserverExpectation>({ node: nodeRef, serving: bool }))),
  machines: opt(
    arrayOf(
      fields<MachineExpectation>({
        node: nodeRef,
        state: oneOf(['provisioned', 'running', 'decommissioned'] satisfies MachineExpectation['state'][]),
      }),
    ),
  ),
  endpoint: opt(fields<{ readyz: true }>({ readyz: oneOf([true]) })),
  commands: opt(arrayOf(fields<CommandExpectation>({ command, exitCode: oneOf([0]) }))),
  objects: opt(
    arrayOf(
      fields<ObjectExpectation>({
        kind: name,
        namespace: opt(str),
        name,
        present: bool,
        fields: opt(recordOf(str)),
      }),
    ),
  ),
  files: opt(arrayOf(fields<FileExpectation>({ path: name, where, exists: bool }))),
  audit: opt(fields<AuditExpectation>({ maxBlockers: int(0), acceptedBlockers: stringList })),
  budgets: opt(fields<{ healthy: true }>({ healthy: oneOf([true]) })),
  operator: opt(fields<{ confirms: string }>({ confirms: name })),
});

// ---- steps ------------------------------------------------------------------------------------

const PERFORMERS = members<Performer>({
  ferry: true,
  provisioner: true,
  'load-balancer': true,
  operator: true,
});

const findingRef = fields<FindingRef>({
  ruleId: name,
  severity: oneOf(['blocker', 'risk', 'info'] satisfies FindingRef['severity'][]),
  title: str,
  fingerprint: str,
  subject: str,
  remediation: str,
});

const pdbRef = fields<PdbRef>({ namespace: str, name: str, disruptionsAllowed: nullable(int(0)) });
const provisioner = oneOf(PROVISIONERS);
const role = oneOf(['controlplane', 'worker'] satisfies StepParams['provision']['role'][]);

const lb = fields<StepParams['lb-add'] & StepParams['lb-remove']>({
  node: nodeRef,
  address: nullable(str),
  port,
  endpoint: str,
  settleSeconds: seconds,
});

const kitPrep = fields<Extract<StepParams['kubeadm-prep']['source'], { kind: 'kit' }>>({
  kind: oneOf(['kit']),
  prepId: name,
  script: str,
  after: stringList,
});
const generatedPrep = fields<Extract<StepParams['kubeadm-prep']['source'], { kind: 'generate' }>>({
  kind: oneOf(['generate']),
  theme: oneOf(['apiserver-sans', 'sa-issuer', 'encryption-keys'] satisfies string[]),
});

const workloadRef = fields<WorkloadRef>({
  kind: oneOf(['Deployment', 'StatefulSet'] satisfies WorkloadRef['kind'][]),
  namespace: name,
  name,
});

const capiNames = fields<CapiNames>({
  namespace: name,
  cluster: name,
  controlPlane: name,
  machineDeployments: arrayOf(
    fields<CapiNames['machineDeployments'][number]>({ name, replaces: stringList }),
  ),
});

const gitopsOwner = fields<GitopsOwnerRef>({
  apiVersion: str,
  kind: oneOf(['Application', 'Kustomization', 'HelmRelease'] satisfies GitopsOwnerRef['kind'][]),
  namespace: name,
  name,
});

/** A JSON merge patch: any object (the API server judges its content). */
const mergePatch: Check = (w) => {
  if (!isRecord(w.value)) w.invalid(`must be a JSON merge patch (an object); got ${show(w.value)}`);
};

const provisionParams = fields<StepParams['provision']>({
  node: talosNode,
  role,
  provisioner,
  talosVersion: name,
  machineConfig: nullable(str),
});

/** What the orchestrator and the runbook read of each kind's parameters. */
const PARAMS: { [K in StepKind]: Check } = {
  'preflight-audit': fields<StepParams['preflight-audit']>({
    blockers: arrayOf(findingRef),
    allowBlockers: bool,
    suppressed: int(0),
  }),
  gate: fields<StepParams['gate']>({ reason: str, stableSeconds: seconds }),
  'etcd-snapshot': fields<StepParams['etcd-snapshot']>({ file: name, reason: str }),
  'kubeadm-prep': fields<StepParams['kubeadm-prep']>({
    source: byKind({ kit: kitPrep, generate: generatedPrep }),
    scope: oneOf(['node', 'cluster'] satisfies string[]),
    node: nullable(name),
  }),
  'apply-kit-file': fields<StepParams['apply-kit-file']>({
    file: name,
    purpose: oneOf(['probe-rbac', 'cilium-values'] satisfies string[]),
  }),
  manual: fields<StepParams['manual']>({ instructions: stringList, findings: opt(arrayOf(findingRef)) }),
  provision: provisionParams,
  'provision-request': fields<StepParams['provision-request']>({ machines: arrayOf(provisionParams) }),
  'provision-detect': provisionParams,
  'wait-member-joined': fields<StepParams['wait-member-joined']>({ member: memberRef, node: talosNode }),
  'wait-member-voter': fields<StepParams['wait-member-voter']>({
    member: memberRef,
    node: talosNode,
    maxIndexLag: int(0),
  }),
  'wait-node-ready': fields<StepParams['wait-node-ready']>({ node: nodeRef }),
  'lb-add': lb,
  'lb-remove': lb,
  cordon: fields<StepParams['cordon']>({ node: nodeRef }),
  drain: fields<StepParams['drain']>({
    node: nodeRef,
    evictionOnly: oneOf([true]),
    ignoreDaemonSets: oneOf([true]),
    deleteEmptyDirData: bool,
    pdbs: arrayOf(pdbRef),
    pods: int(0),
  }),
  'drain-batch': fields<StepParams['drain-batch']>({
    nodes: arrayOf(fields<DrainNode>({ node: nodeRef, pdbs: arrayOf(pdbRef), pods: int(0) })),
    evictionOnly: oneOf([true]),
    ignoreDaemonSets: oneOf([true]),
    deleteEmptyDirData: bool,
  }),
  'stop-apiserver': fields<StepParams['stop-apiserver']>({ node: nodeRef, manifest: name }),
  'etcd-move-leader': fields<StepParams['etcd-move-leader']>({
    from: memberRef,
    to: arrayOf(memberRef),
    leaderAtSnapshot: bool,
  }),
  'etcd-remove-member': fields<StepParams['etcd-remove-member']>({
    member: memberRef,
    via: arrayOf(memberRef),
    lastKubeadmMember: bool,
  }),
  'verify-membership': fields<StepParams['verify-membership']>({ removed: nullable(memberRef) }),
  decommission: fields<StepParams['decommission']>({ node: nodeRef, provisioner, wipes: stringList }),
  'delete-node': fields<StepParams['delete-node']>({ node: nodeRef }),
  'scale-workload': fields<StepParams['scale-workload']>({
    workload: workloadRef,
    replicas: int(0),
    from: int(0),
    purpose: oneOf(['surge', 'restore'] satisfies StepParams['scale-workload']['purpose'][]),
    pdb: name,
  }),
  'wait-workload-ready': fields<StepParams['wait-workload-ready']>({
    workload: workloadRef,
    readyReplicas: int(1),
  }),
  'delete-bootstrap-token': fields<StepParams['delete-bootstrap-token']>({ tokenIds: stringList }),
  'relabel-kube-proxy': fields<StepParams['relabel-kube-proxy']>({
    namespace: name,
    name,
    labels: recordOf(str),
  }),
  'wipe-pki-copies': fields<StepParams['wipe-pki-copies']>({
    copies: arrayOf(
      fields<StepParams['wipe-pki-copies']['copies'][number]>({ where: str, path: str, why: str }),
    ),
  }),
  drill: fields<StepParams['drill']>({ node: nullable(nodeRef) }),
  'capi-adopt': fields<StepParams['capi-adopt']>({ kit: nullable(str), names: nullable(capiNames) }),
  'gitops-suspend': fields<StepParams['gitops-suspend']>({
    owner: gitopsOwner,
    action: oneOf(['pause', 'resume'] satisfies StepParams['gitops-suspend']['action'][]),
    patch: mergePatch,
    undo: mergePatch,
    owns: stringList,
  }),
  'capi-handover': fields<StepParams['capi-handover']>({
    kit: nullable(str),
    names: nullable(capiNames),
    replicas: int(0),
    settleSeconds: seconds,
  }),
};

const undoable = fields<Extract<Undo, { possible: true }>>({
  possible: oneOf([true]),
  summary: str,
  commands,
});
const notUndoable = fields<Extract<Undo, { possible: false }>>({ possible: oneOf([false]), reason: str });

const undo: Check = (w) => {
  const v = w.value;
  if (isRecord(v) && v['possible'] === true) return undoable(w);
  if (isRecord(v) && v['possible'] === false) return notUndoable(w);
  (isRecord(v) ? w.at('possible') : w).invalid(`must say whether the step can be undone; got ${show(v)}`);
};

const stepCommon = fields<Omit<Step, 'kind' | 'params'>>({
  id: name,
  phase: int(0),
  index: int(1),
  subject: name,
  title: str,
  target: fields<StepTarget>({ node: opt(nodeRef), member: opt(memberRef), address: opt(nullable(str)) }),
  expect: expectedState,
  action: fields<Action>({ summary: str, performer: oneOf(PERFORMERS), commands }),
  verify: fields<Verification>({ expect: expectedState, commands }),
  timeoutSeconds: positiveSeconds,
  destructive: bool,
  undo,
  idempotencyCheck: fields<IdempotencyCheck>({
    description: str,
    doneWhen: expectedState,
    ifNotDone: oneOf(['redo', 'stop'] satisfies IdempotencyCheck['ifNotDone'][]),
  }),
  condition: opt(oneOf(['if-member-leads'] satisfies Step['condition'][])),
  optional: opt(bool),
  batch: opt(int(1)),
  after: opt(stringList),
  notes: opt(stringList),
});

const step: Check = (w) => {
  stepCommon(w);
  const v = w.value;
  if (!isRecord(v)) return;
  const kind = v['kind'];
  if (!(STEP_KINDS as readonly unknown[]).includes(kind))
    return w.at('kind').invalid(`must be a step kind ferry knows; got ${show(kind)}`);
  const params = w.at('params');
  if (params.absent) return params.missing();
  PARAMS[kind as StepKind](params);
};

const phaseCommon = fields<Omit<Phase, 'steps'>>({ id: int(0), name, title: str, summary: str });

const phase: Check = (w) => {
  phaseCommon(w);
  if (!isRecord(w.value)) return;
  // Every issue found in a step names the step.
  for (const s of w.at('steps').items()) {
    const id = isRecord(s.value) && typeof s.value['id'] === 'string' ? s.value['id'] : undefined;
    step(s.about(id));
  }
};

// ---- the worker roll ---------------------------------------------------------------------------

/** A finite number ≥ 0 (requests in bytes, millicores). */
const amount: Check = (w) => {
  w.number({ min: 0, expected: 'a finite number ≥ 0' });
};

const SHORTAGES = members<Shortage>({
  cpu: true,
  memory: true,
  pods: true,
  spread: true,
  fragmentation: true,
});
const RESOURCE_NAMES = members<Resource>({ cpu: true, memory: true, pods: true });

const batchBound = byKind({
  'max-unavailable': fields<Extract<BatchBound, { kind: 'max-unavailable' }>>({
    kind: oneOf(['max-unavailable']),
    max: int(1),
  }),
  pdb: fields<Extract<BatchBound, { kind: 'pdb' }>>({ kind: oneOf(['pdb']), pdb: name, allowed: int(0) }),
  capacity: fields<Extract<BatchBound, { kind: 'capacity' }>>({
    kind: oneOf(['capacity']),
    shortage: oneOf(SHORTAGES),
    pod: name,
  }),
  placement: fields<Extract<BatchBound, { kind: 'placement' }>>({ kind: oneOf(['placement']) }),
  'nodes-left': fields<Extract<BatchBound, { kind: 'nodes-left' }>>({ kind: oneOf(['nodes-left']) }),
  blocked: fields<Extract<BatchBound, { kind: 'blocked' }>>({ kind: oneOf(['blocked']), pdb: name }),
});

const owner = fields<Owner>({ kind: name, namespace: name, name, replicas: nullable(int(0)) });

const lowerBoundTerm = byKind({
  pdb: fields<Extract<LowerBoundTerm, { kind: 'pdb' }>>({
    kind: oneOf(['pdb']),
    pdb: name,
    pods: int(1),
    allowed: int(1),
    rounds: int(1),
    batches: opt(int(1)),
    seconds: int(0),
  }),
  'max-unavailable': fields<Extract<LowerBoundTerm, { kind: 'max-unavailable' }>>({
    kind: oneOf(['max-unavailable']),
    workers: int(1),
    max: int(1),
    batches: int(1),
    seconds: int(0),
  }),
  capacity: fields<Extract<LowerBoundTerm, { kind: 'capacity' }>>({
    kind: oneOf(['capacity']),
    resource: oneOf(RESOURCE_NAMES),
    moved: amount,
    spare: amount,
    batches: int(1),
    seconds: int(0),
  }),
});

const OUTAGE_REASONS = members<OutageReason>({
  'single-replica': true,
  'bare-pod': true,
  'local-volume': true,
  'node-name': true,
  'no-node-fits': true,
  'no-room': true,
});

const workerRoll = fields<WorkerRoll>({
  maxUnavailable: fields<WorkerRoll['maxUnavailable']>({ given: name, nodes: int(1) }),
  surgeWorkers: nullable(fields<NonNullable<WorkerRoll['surgeWorkers']>>({ count: int(1), note: str })),
  surgeReplicas: bool,
  batches: arrayOf(
    fields<WorkerBatch>({
      index: int(1),
      nodes: arrayOf(name),
      pods: int(0),
      rounds: int(1),
      graceSeconds: int(0),
      bound: batchBound,
      scaleUp: stringList,
      restore: stringList,
      seconds: int(0),
      why: str,
    }),
  ),
  outages: arrayOf(
    fields<Outage>({
      kind: name,
      namespace: name,
      name,
      reason: oneOf(OUTAGE_REASONS),
      node: name,
      batch: int(1),
      seconds: nullable(int(0)),
      detail: str,
    }),
  ),
  blocked: arrayOf(
    fields<BlockedPdb>({ pdb: name, rule: str, nodes: arrayOf(name), surgeable: nullable(str), fix: str }),
  ),
  surged: arrayOf(
    fields<SurgedWorkload>({
      workload: owner,
      pdb: name,
      from: int(0),
      to: int(1),
      firstBatch: int(1),
      lastBatch: int(1),
    }),
  ),
  estimate: fields<WorkerRoll['estimate']>({
    seconds: int(0),
    surgeSeconds: int(0),
    lowerBoundSeconds: int(0),
    lowerBound: arrayOf(lowerBoundTerm),
    assumptions: stringList,
  }),
});

// ---- the plan ---------------------------------------------------------------------------------

const planShape = fields<PlanContent>({
  kind: oneOf([PLAN_KIND]),
  formatVersion: oneOf([PLAN_FORMAT_VERSION]),
  ferryVersion: str,
  createdAt: str,
  cluster: fields<Plan['cluster']>({ name: nullable(str), endpoint: nullable(str) }),
  source: fields<Plan['source']>({
    snapshot: str,
    snapshotCreatedAt: str,
    snapshotDigest: str,
    factsDigest: str,
    kit: nullable(fields<KitReference>({ path: str, generatedAt: nullable(str), files: stringList })),
  }),
  strategy: oneOf(STRATEGIES),
  provisioner,
  target: fields<Plan['target']>({
    talosVersion: name,
    kubernetesVersion: nullable(str),
    kubeprism: oneOf(['on', 'off'] satisfies Plan['target']['kubeprism'][]),
    infra: str,
  }),
  etcd: fields<Plan['etcd']>({
    voters: int(1),
    leader: nullable(
      fields<NonNullable<Plan['etcd']['leader']>>({ id: memberId, name: str, node: nullable(str) }),
    ),
    version: nullable(str),
  }),
  audit: fields<Plan['audit']>({
    blockers: arrayOf(findingRef),
    risks: int(0),
    suppressed: int(0),
    allowBlockers: bool,
    resolvedByKit: opt(arrayOf(findingRef)),
  }),
  controlPlanes: arrayOf(
    fields<ControlPlaneOrder>({
      node: name,
      address: nullable(str),
      phase: oneOf([2, 4] satisfies ControlPlaneOrder['phase'][]),
      position: int(1),
      member: nullable(fields<NonNullable<ControlPlaneOrder['member']>>({ id: memberId, name: str })),
      leaderAtSnapshot: bool,
      replacement: talosNode,
    }),
  ),
  workers: arrayOf(
    fields<WorkerOrder>({ node: name, address: nullable(str), batch: int(1), replacement: talosNode }),
  ),
  workerRoll,
  setup: commands,
  warnings: stringList,
  phases: arrayOf(phase),
});

/**
 * Everything wrong with a plan document, shape first; the rules between steps only once the
 * shape holds (they read it as a typed plan). Empty: `ferry run` may execute it.
 */
export function validatePlan(doc: unknown): Issue[] {
  const out = new Issues();
  planShape(Walk.root(doc, out.report));
  if (out.list.length > 0) return out.list;
  return invariantIssues(doc as PlanContent);
}
