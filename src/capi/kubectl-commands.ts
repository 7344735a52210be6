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
import type { AdoptStep, PlannedStep } from './adopt-plan.js';
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

export function kubectlCommands(
  steps: PlannedStep[],
  t: KubectlTarget,
): { step: AdoptStep; commands: string[] }[] {
  const k = `kubectl --kubeconfig ${shq(t.kubeconfig)}${t.context ? ` --context ${shq(t.context)}` : ''}`;
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
          return [
            `${k} -n ${shq(step.namespace)} patch ${TCP} ${shq(step.name)} --subresource=status --type=merge -p '{"status":{"bootstrapped":true}}'`,
          ];
        case 'own-secrets': {
          const uid = `$(${k} -n ${shq(step.namespace)} get ${CLUSTER} ${shq(step.cluster)} -o jsonpath='{.metadata.uid}')`;
          const owner = `{"metadata":{"ownerReferences":[{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","name":"${step.cluster}","uid":"'"${uid}"'"}]}}`;
          return step.secrets.map(
            (s) => `${k} -n ${shq(step.namespace)} patch secret ${shq(s)} --type=merge -p '${owner}'`,
          );
        }
        case 'unpause-cluster':
          return [
            `${k} -n ${shq(step.namespace)} patch ${CLUSTER} ${shq(step.name)} --type=merge -p '{"spec":{"paused":false}}'`,
          ];
        case 'unpause-tcp':
          return [`${k} -n ${shq(step.namespace)} annotate ${TCP} ${shq(step.name)} ${PAUSED_ANNOTATION}-`];
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
