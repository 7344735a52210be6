/**
 * `ferry capi add-control-plane`: the runbook's stand-in for the capi provisioner's control-plane
 * step — one Talos control-plane Machine made while the TalosControlPlane stays paused (its etcd
 * audit would remove the kubeadm members once a control-plane Machine has a Node). `--replicas N`
 * is the count wanted, so typing the command twice adds no second Machine.
 */
import { resolve } from 'node:path';
import { shq } from '../capi/kubectl-commands.js';
import { type ExitCode, usageError } from '../errors.js';
import { parseFlags } from './args.js';
import type { Io } from './io.js';

export const addCpUsage = `usage: ferry capi add-control-plane KIT --mgmt-kubeconfig FILE --replicas N [--context NAME] [--no-wait]

Adds the Nth Talos control plane while the TalosControlPlane stays paused: raises its replicas to N
and creates the Machine, its TalosConfig (the TalosControlPlane's control-plane config) and its
infrastructure machine (from the TalosControlPlane's infrastructure template), as the control-plane
provider would, checked against the Cluster API CRDs first. Nothing to do when N control-plane
Machines exist. Refused (exit 3) when the TalosControlPlane is not paused, the Cluster is paused, or
an earlier control-plane Machine has no Node yet (one at a time; --no-wait adds it anyway); exit 2
when the management cluster serves none of the objects' kinds. A create that fails takes back what
it did, the replica bump included. Watch the Machine until it has a Node afterwards, and check
its etcd member is a voter before the next.

Exit codes: 0 added (or nothing to do); 2 bad usage or kit; 3 stopped; 4 internal error.
`;

const options = {
  'mgmt-kubeconfig': { type: 'string' },
  context: { type: 'string' },
  replicas: { type: 'string' },
  'no-wait': { type: 'boolean' },
} as const;

export async function addControlPlaneCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, options, addCpUsage);
  const [kitArg, ...extra] = positionals;
  const see = `see usage:\n${addCpUsage.trim()}`;
  if (kitArg === undefined) throw usageError('missing KIT (the directory `ferry generate` wrote)', see);
  if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`, see);
  const kubeconfig = values['mgmt-kubeconfig'];
  if (!kubeconfig)
    throw usageError('missing --mgmt-kubeconfig', "pass the management cluster's admin kubeconfig");
  const want = Number(values.replicas);
  if (values.replicas === undefined || !Number.isInteger(want) || want < 1)
    throw usageError(
      `--replicas must be a whole number of control planes, 1 or more (got ${values.replicas ?? 'nothing'})`,
      'pass the count of Talos control planes wanted after this one is added, e.g. --replicas 1 for the first',
    );
  const { readCapiKit } = await import('../capi/kit-objects.js');
  const { capiNamesOf } = await import('../kit/capi-names.js');
  const { KIT } = await import('../knowledge/kit-paths.js');
  const kit = await readCapiKit(resolve(io.cwd, kitArg), kitArg);
  const names = capiNamesOf(
    kit.objects.filter((x) => x.kind !== 'Secret').map((value, line) => ({ value, line: line + 1 })),
    `${kitArg}/${KIT.capiCluster}`,
  );
  const { loadKubeconfig } = await import('../adapters/kube/kubeconfig.js');
  const { createRequester } = await import('../adapters/kube/request.js');
  const { MgmtApi } = await import('../adapters/capi/mgmt-api.js');
  const { CrdValidator } = await import('../generate/schema/crd.js');
  const { gateError } = await import('../ports/stop.js');
  const { addControlPlaneMachine } = await import('../adapters/capi/cp-create.js');
  const req = createRequester(loadKubeconfig(resolve(io.cwd, kubeconfig), values.context));
  const api = MgmtApi.fromKit(req, names, kit.objects);
  const { decideAddControlPlane } = await import('../capi/cp-order.js');
  const decision = decideAddControlPlane({
    names,
    controlPlane: await api.controlPlane(),
    machines: await api.machines({ controlPlane: true }),
    want,
    noWait: values['no-wait'] === true,
    target: { kubeconfig, kit: kitArg, ...(values.context && { context: values.context }) },
  });
  if (decision.kind === 'refuse') throw gateError(decision.reason, decision.remediation);
  if (decision.kind === 'nothing-to-do') {
    io.stdout(
      `TalosControlPlane ${names.namespace}/${names.controlPlane}: ${decision.have} control-plane Machine(s) exist, nothing to do\n`,
    );
    return 0;
  }
  const retry = `ferry capi add-control-plane ${argv.map(shq).join(' ')}`;
  await addControlPlaneMachine(api, CrdValidator.fromSchemas(), {
    target: want,
    log: (l) => io.stdout(`${l}\n`),
    retry: `run ${retry}`,
  });
  // The etcd member list is the workload cluster's: not visible from the management cluster.
  io.stdout(
    "before the next control plane: wait for this Machine's Node and check that its etcd member is a voter (talosctl -n NODE etcd members); ferry run does both\n",
  );
  return 0;
}
