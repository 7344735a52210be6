/**
 * The kubectl commands an operator can type instead of `ferry capi adopt`, one group per step not
 * yet done, in the plan's order. They must work as written: Secrets come from the kit's file (their
 * data is never printed), every other object is given whole on stdin as the plan would send it
 * (the kit's file differs: the Cluster is created paused), the TalosControlPlane status goes
 * through the status subresource. Resources are named fully qualified: `cluster` alone is ambiguous
 * on a management cluster. Pure.
 */
import { stringify } from 'yaml';
import { KIT } from '../knowledge/kit-paths.js';
import type { KubeObject } from '../snapshot/model.js';
import { type AdoptStep, type PlannedStep, RECONCILE_ANNOTATION } from './adopt-plan.js';
import { PAUSED_ANNOTATION } from './view.js';

export interface KubectlTarget {
  kubeconfig: string;
  context?: string;
  kitDir: string;
}

/** POSIX shell single-quoting. */
export const shq = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);

const TCP = 'taloscontrolplanes.controlplane.cluster.x-k8s.io';
const CLUSTER = 'clusters.cluster.x-k8s.io';
const MD = 'machinedeployments.cluster.x-k8s.io';
const MACHINES = 'machines.cluster.x-k8s.io';

/** The runbook's kubectl for the management cluster: the kubeconfig from the environment. */
export const MGMT_KUBECTL = 'kubectl --kubeconfig "$MGMT_KUBECONFIG"';

export function kubectlPrefix(t: { kubeconfig: string; context?: string }): string {
  return `kubectl --kubeconfig ${shq(t.kubeconfig)}${t.context ? ` --context ${shq(t.context)}` : ''}`;
}

/**
 * One command each, `k` being the kubectl prefix (kubeconfig, context). Merge patches and
 * annotate need no OpenAPI from the server; `kubectl scale` needs a scale subresource, so replicas
 * are patched.
 */
export const capiKubectl = {
  pauseTcp: (k: string, ns: string, name: string) =>
    `${k} -n ${shq(ns)} annotate ${TCP} ${shq(name)} ${PAUSED_ANNOTATION}=true --overwrite`,
  unpauseTcp: (k: string, ns: string, name: string) =>
    `${k} -n ${shq(ns)} annotate ${TCP} ${shq(name)} ${PAUSED_ANNOTATION}-`,
  scaleTcp: (k: string, ns: string, name: string, replicas: number) =>
    `${k} -n ${shq(ns)} patch ${TCP} ${shq(name)} --type=merge -p '{"spec":{"replicas":${replicas}}}'`,
  scaleMachineDeployment: (k: string, ns: string, name: string, replicas: number) =>
    `${k} -n ${shq(ns)} patch ${MD} ${shq(name)} --type=merge -p '{"spec":{"replicas":${replicas}}}'`,
  bootstrapped: (k: string, ns: string, name: string) =>
    `${k} -n ${shq(ns)} patch ${TCP} ${shq(name)} --subresource=status --type=merge -p '{"status":{"bootstrapped":true}}'`,
  tcpStatus: (k: string, ns: string, name: string, status: Record<string, unknown>) =>
    `${k} -n ${shq(ns)} patch ${TCP} ${shq(name)} --subresource=status --type=merge -p '${JSON.stringify({ status })}'`,
  touchCluster: (k: string, ns: string, name: string, controlPlane: string) =>
    `${k} -n ${shq(ns)} annotate ${CLUSTER} ${shq(name)} ${RECONCILE_ANNOTATION}="$(${k} -n ${shq(ns)} get ${TCP} ${shq(controlPlane)} -o jsonpath='{.metadata.resourceVersion}')" --overwrite`,
  /** A Cluster is paused by spec.paused or by the paused annotation: one merge patch clears both (null deletes a key). */
  unpauseCluster: (k: string, ns: string, name: string) =>
    `${k} -n ${shq(ns)} patch ${CLUSTER} ${shq(name)} --type=merge -p '{"spec":{"paused":false},"metadata":{"annotations":{"${PAUSED_ANNOTATION}":null}}}'`,
  /** `kinds`: "Kind/name" each, as kubectl delete takes them. */
  deleteObjects: (k: string, ns: string, kinds: string[]) =>
    `${k} -n ${shq(ns)} delete ${kinds.map(shq).join(' ')}`,
  watchMachines: (k: string, ns: string, selector: string) =>
    `${k} -n ${shq(ns)} get ${MACHINES} -l ${shq(selector)} -o wide -w`,
  tcpState: (k: string, ns: string, name: string) =>
    `${k} -n ${shq(ns)} get ${TCP} ${shq(name)} -o custom-columns='PAUSED:.metadata.annotations.cluster\\.x-k8s\\.io/paused,REPLICAS:.spec.replicas,MACHINES:.status.replicas,READY:.status.readyReplicas,BOOTSTRAPPED:.status.bootstrapped'`,
};

export function kubectlCommands(
  steps: PlannedStep[],
  t: KubectlTarget,
): { step: AdoptStep; commands: string[] }[] {
  const k = kubectlPrefix(t);
  let secretsApplied = false;
  const secretSteps = steps.filter(({ step }) => step.kind === 'create' && step.object.kind === 'Secret');
  // create when none is there yet; apply (which needs the server's OpenAPI) only to complete a partial set.
  const secretVerb = secretSteps.every((s) => !s.done) ? 'create' : 'apply';
  const out: { step: AdoptStep; commands: string[] }[] = [];
  for (const { step, done } of steps) {
    if (done) continue;
    const commands = ((): string[] => {
      switch (step.kind) {
        case 'namespace':
          // As a manifest, not `create namespace`: that one sends protobuf, which the lab API server does not read.
          return [
            `${k} create -f - <<'EOF'\n${stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: step.name } })}EOF`,
          ];
        case 'create':
          if (step.object.kind === 'Secret') {
            // One file holds them all.
            if (secretsApplied) return [];
            secretsApplied = true;
            return [`${k} ${secretVerb} -f ${shq(`${t.kitDir}/${KIT.capiSecrets}`)}`];
          }
          return [
            `${k} create -f - <<'EOF'\n${stringify(withoutStatus(step.object), { lineWidth: 0, aliasDuplicateObjects: false })}EOF`,
          ];
        case 'tcp-bootstrapped':
          return [capiKubectl.bootstrapped(k, step.namespace, step.name)];
        case 'kubeconfig-secret':
          // Its key is never printed: the dry run wrote the minted Secret into the kit (0600).
          return [`${k} create -f ${shq(`${t.kitDir}/${KIT.capiKubeconfigSecret}`)}`];
        case 'tcp-initialized':
          return [capiKubectl.tcpStatus(k, step.namespace, step.name, step.status)];
        case 'touch-cluster':
          return [capiKubectl.touchCluster(k, step.namespace, step.name, step.controlPlane)];
        case 'own-secrets': {
          const uid = `$(${k} -n ${shq(step.namespace)} get ${CLUSTER} ${shq(step.cluster)} -o jsonpath='{.metadata.uid}')`;
          const owner = `{"metadata":{"ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","name":"${step.cluster}","uid":"'"${uid}"'"}]}}`;
          return step.secrets.map(
            (s) => `${k} -n ${shq(step.namespace)} patch secret ${shq(s)} --type=merge -p '${owner}'`,
          );
        }
        case 'unpause-cluster':
          return [capiKubectl.unpauseCluster(k, step.namespace, step.name)];
        case 'unpause-tcp':
          return [capiKubectl.unpauseTcp(k, step.namespace, step.name)];
      }
    })();
    out.push({ step, commands });
  }
  return out;
}

function withoutStatus(o: KubeObject): KubeObject {
  const { status: _s, ...rest } = o;
  return rest as KubeObject;
}
