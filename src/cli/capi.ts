import { join, resolve } from 'node:path';
import type { AdoptStep } from '../capi/adopt-plan.js';
import { type ExitCode, usageError } from '../errors.js';
import { oneOf, parseFlags } from './args.js';
import { addControlPlaneCommand, addCpUsage } from './capi-add-cp.js';
import type { Command } from './command.js';
import type { Io } from './io.js';

const usage = `usage: ferry capi adopt KIT --mgmt-kubeconfig FILE [--context NAME] [--dry-run] [-o text|json]

Hands the running cluster to Cluster API: applies the kit's Cluster API objects (capi/secrets.yaml,
capi/cluster.yaml) to the management cluster in the order that keeps Cluster API's controllers
from acting on the running cluster (removing etcd members, bootstrapping a second etcd, deleting
undrained Nodes), and verifies each step by reading it back: namespace, the PKI
Secrets, the Cluster (paused), the infrastructure cluster and templates, the TalosControlPlane
(replicas 0, paused), its status.bootstrapped, the MachineDeployments (replicas 0, preflight skip),
the <cluster>-kubeconfig Secret (a client certificate CN=ferry-capi-adopt, O=system:masters, 180
days, minted from the kit's cluster CA, unless one exists), the Secrets owned by the Cluster, the
TalosControlPlane's initialized status (the fields the CRD's contract names), the Cluster unpaused
and asked to reconcile: without the last four no Machine gets its Node while the TalosControlPlane
is paused. The TalosControlPlane stays paused: its etcd
audit would remove the kubeadm members. Unpause it only when no kubeadm etcd member remains
(\`kubectl -n NAMESPACE annotate taloscontrolplane NAME cluster.x-k8s.io/paused-\`). Steps the
management cluster already shows are skipped; a second run does nothing and says so.

  --mgmt-kubeconfig FILE   the management cluster's admin kubeconfig; --context NAME
  --dry-run                change nothing in the cluster: print the plan and the kubectl commands that
                           do the same (the minted kubeconfig Secret goes to KIT/capi/kubeconfig-secret.yaml, 0600)
  -o text|json             output format (default text)

Exit codes: 0 adopted (or nothing to do); 2 bad usage, a bad kit, a cluster that serves no Cluster
API, an unreachable API server; 3 stopped: a state adoption must not touch (e.g. control-plane
Machines of an unbootstrapped TalosControlPlane); 4 internal error.
`;

const options = {
  'mgmt-kubeconfig': { type: 'string' },
  context: { type: 'string' },
  'dry-run': { type: 'boolean' },
  output: { type: 'string', short: 'o' },
} as const;

async function adoptCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseFlags(argv, options, usage);
  const [kitArg, ...extra] = positionals;
  if (kitArg === undefined)
    throw usageError('missing KIT (the directory `ferry generate` wrote)', `see usage:\n${usage.trim()}`);
  if (extra.length > 0) throw usageError(`unexpected argument "${extra[0]}"`, `see usage:\n${usage.trim()}`);
  const kubeconfig = values['mgmt-kubeconfig'];
  if (kubeconfig === undefined || kubeconfig === '')
    throw usageError('missing --mgmt-kubeconfig', "pass the management cluster's admin kubeconfig");
  const format = oneOf('output', values.output, ['text', 'json'] as const, 'text');
  const { readCapiKit } = await import('../capi/kit-objects.js');
  const kit = await readCapiKit(resolve(io.cwd, kitArg), kitArg);
  const { loadKubeconfig } = await import('../adapters/kube/kubeconfig.js');
  const { createRequester } = await import('../adapters/kube/request.js');
  const req = createRequester(loadKubeconfig(resolve(io.cwd, kubeconfig), values.context));
  const { CrdValidator } = await import('../generate/schema/crd.js');
  const { adopt, inspectAdoption } = await import('../adapters/capi/adopt-apply.js');
  const { describeStep } = await import('../capi/adopt-plan.js');
  // The management cluster cannot see the workload's etcd: fail closed, the TCP stays paused.
  const opts = { kubeadmMembersRemain: true, crds: CrdValidator.fromSchemas() };
  const subject = `Cluster ${kit.namespace}/${kit.cluster}`;

  if (values['dry-run']) {
    const { kubectlCommands } = await import('../capi/kubectl-commands.js');
    const { plan, nothingToDo } = await inspectAdoption(req, kit.objects, opts);
    const written = await writeMintedKubeconfig(plan, resolve(io.cwd, kitArg));
    const commands = kubectlCommands(plan, {
      kubeconfig,
      ...(values.context !== undefined && { context: values.context }),
      kitDir: kitArg,
    });
    if (format === 'json') {
      io.stdout(
        `${JSON.stringify(
          {
            cluster: subject,
            nothingToDo,
            steps: plan.map(({ step, done }) => ({
              step: describeStep(step),
              done,
              commands: commands.find((c) => c.step === step)?.commands ?? [],
            })),
          },
          null,
          2,
        )}\n`,
      );
      return 0;
    }
    if (nothingToDo) {
      io.stdout(`${subject}: already adopted, nothing to do\n`);
      return 0;
    }
    const lines = [`${subject}: adoption plan (dry run, nothing changed)`];
    for (const { step, done } of plan) lines.push(`  ${done ? 'done   ' : 'to do  '} ${describeStep(step)}`);
    if (written)
      lines.push(
        '',
        `The kubeconfig Secret minted for this plan is in ${kitArg}/${written} (mode 0600; its data is not printed).`,
      );
    lines.push('', 'The same with kubectl, in this order:');
    for (const c of commands) {
      if (c.commands.length === 0) continue;
      lines.push(`# ${describeStep(c.step)}`, ...c.commands);
    }
    io.stdout(`${lines.join('\n')}\n`);
    return 0;
  }

  const result = await adopt(req, kit.objects, {
    ...opts,
    ...(format === 'text' && { onStep: (d: string) => io.stdout(`  applied, verified: ${d}\n`) }),
  });
  if (format === 'json') {
    io.stdout(`${JSON.stringify({ cluster: subject, ...result }, null, 2)}\n`);
    return 0;
  }
  io.stdout(
    result.nothingToDo
      ? `${subject}: already adopted, nothing to do\n`
      : `${subject}: adopted (${result.applied.length} steps applied and verified, ${result.alreadyDone.length} already done); the TalosControlPlane stays paused until no kubeadm etcd member remains\n`,
  );
  return 0;
}

/** The dry run's minted kubeconfig Secret, for its kubectl commands: the kit path written, if any. */
async function writeMintedKubeconfig(
  plan: { step: AdoptStep; done: boolean }[],
  kitDir: string,
): Promise<string | undefined> {
  const step = plan.find((p) => !p.done && p.step.kind === 'kubeconfig-secret')?.step;
  if (step?.kind !== 'kubeconfig-secret' || !step.secret) return undefined;
  const { stringify } = await import('yaml');
  const { writeFileAtomic } = await import('../util/atomic-write.js');
  const { KIT } = await import('../knowledge/kit-paths.js');
  // It holds a private key: owner-only.
  await writeFileAtomic(join(kitDir, KIT.capiKubeconfigSecret), stringify(step.secret), { mode: 0o600 });
  return KIT.capiKubeconfigSecret;
}

export const command: Command = {
  name: 'capi',
  summary:
    'Cluster API: adopt the running cluster into the management cluster (capi adopt), add a control plane (capi add-control-plane)',
  usage: `${usage}\n${addCpUsage}`,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    switch (sub) {
      case 'adopt':
        return adoptCommand(rest, io);
      case 'add-control-plane':
        return addControlPlaneCommand(rest, io);
      default:
        throw usageError(
          sub === undefined ? 'missing subcommand' : `unknown subcommand "${sub}"`,
          `see usage:\n${usage.trim()}`,
        );
    }
  },
};
