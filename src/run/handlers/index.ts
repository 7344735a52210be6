/**
 * The step handlers, one per step kind, each in its own module. The mapped type makes the table
 * exhaustive: a step kind added to the plan model does not compile until it has a handler.
 */
import type { StepKind, StepOf } from '../../plan/model.js';
import { handler as applyKitFile } from './apply-kit-file.js';
import { handler as capiAdopt } from './capi-adopt.js';
import { handler as capiHandover } from './capi-handover.js';
import type { Handler, Handlers } from './context.js';
import { handler as cordon } from './cordon.js';
import { handler as decommission } from './decommission.js';
import { handler as deleteBootstrapToken } from './delete-bootstrap-token.js';
import { handler as deleteNode } from './delete-node.js';
import { handler as drain } from './drain.js';
import { handler as drainBatch } from './drain-batch.js';
import { handler as drill } from './drill.js';
import { handler as etcdMoveLeader } from './etcd-move-leader.js';
import { handler as etcdRemoveMember } from './etcd-remove-member.js';
import { handler as etcdSnapshot } from './etcd-snapshot.js';
import { handler as gate } from './gate.js';
import { handler as gitopsSuspend } from './gitops-suspend.js';
import { handler as kubeadmPrep } from './kubeadm-prep.js';
import { handler as lbAdd } from './lb-add.js';
import { handler as lbRemove } from './lb-remove.js';
import { handler as manual } from './manual.js';
import { handler as preflightAudit } from './preflight-audit.js';
import { handler as provision } from './provision.js';
import { handler as provisionDetect } from './provision-detect.js';
import { handler as provisionRequest } from './provision-request.js';
import { handler as relabelKubeProxy } from './relabel-kube-proxy.js';
import { handler as scaleWorkload } from './scale-workload.js';
import { handler as stopApiserver } from './stop-apiserver.js';
import { handler as verifyMembership } from './verify-membership.js';
import { handler as waitMemberJoined } from './wait-member-joined.js';
import { handler as waitMemberVoter } from './wait-member-voter.js';
import { handler as waitNodeReady } from './wait-node-ready.js';
import { handler as waitWorkloadReady } from './wait-workload-ready.js';
import { handler as wipePkiCopies } from './wipe-pki-copies.js';

export type { ActionResult, Handlers, StepContext } from './context.js';

export const HANDLERS: Handlers = {
  'preflight-audit': preflightAudit,
  gate,
  'etcd-snapshot': etcdSnapshot,
  'kubeadm-prep': kubeadmPrep,
  'apply-kit-file': applyKitFile,
  manual,
  provision,
  'provision-request': provisionRequest,
  'provision-detect': provisionDetect,
  'wait-member-joined': waitMemberJoined,
  'wait-member-voter': waitMemberVoter,
  'wait-node-ready': waitNodeReady,
  'lb-add': lbAdd,
  'lb-remove': lbRemove,
  cordon,
  drain,
  'drain-batch': drainBatch,
  'stop-apiserver': stopApiserver,
  'etcd-move-leader': etcdMoveLeader,
  'etcd-remove-member': etcdRemoveMember,
  'verify-membership': verifyMembership,
  decommission,
  'delete-node': deleteNode,
  'scale-workload': scaleWorkload,
  'wait-workload-ready': waitWorkloadReady,
  'delete-bootstrap-token': deleteBootstrapToken,
  'relabel-kube-proxy': relabelKubeProxy,
  'wipe-pki-copies': wipePkiCopies,
  drill,
  'capi-adopt': capiAdopt,
  'capi-handover': capiHandover,
  'gitops-suspend': gitopsSuspend,
};

/**
 * The handler of a step's kind. The cast is the one place TypeScript cannot follow the
 * correlation between `step.kind` and the table's entry for it.
 */
export function handlerOf<K extends StepKind>(step: StepOf<K>): Handler<K> {
  return HANDLERS[step.kind as K] as Handler<K>;
}
