/**
 * The drain of a worker batch as one step (plan format 3): its nodes are drained together (the run
 * bounds how many at a time, `--drain-concurrency`), so a batch takes as long as its slowest node,
 * not the sum of its nodes. The step is done when every node holds only DaemonSet and mirror pods
 * and every evicted controller-owned pod's replacement is Ready on another node.
 */
import { cmd, drainCmd, kubectl, nodeArg } from './commands.js';
import type { ExpectedState, KubeadmNodeRef } from './expected-state.js';
import type { DraftStep, DrainNode, PdbRef } from './model.js';
import { doneWhen, draft, undoWith } from './steps.js';

const pdbName = (p: PdbRef) => `${p.namespace}/${p.name}`;

/** The nodes of a batch `ferry run` drains at the same time unless told otherwise (`--drain-concurrency`). */
export const DEFAULT_DRAIN_CONCURRENCY = 4;

/** How many rounds of at most `concurrency` nodes a batch of `nodes` drains in: ⌈nodes ÷ concurrency⌉. */
export function drainRounds(nodes: number, concurrency: number): number {
  return Math.max(1, Math.ceil(nodes / Math.max(1, concurrency)));
}

/**
 * The drain-batch step's timeout: the per-node drain timeout once per round, since the nodes past
 * the first `concurrency` wait for a free slot (a batch of 9 at 4 at a time takes three nodes' time).
 */
export function batchDrainTimeoutSeconds(perNodeSeconds: number, nodes: number, concurrency: number): number {
  return perNodeSeconds * drainRounds(nodes, concurrency);
}

function batchState(nodes: KubeadmNodeRef[], drained: boolean): ExpectedState {
  return {
    nodes: nodes.map((node) => ({ node, exists: true, cordoned: true, ...(drained && { drained }) })),
  };
}

export function drainBatchStep(c: {
  batch: number;
  nodes: { node: KubeadmNodeRef; info: { pdbs: PdbRef[]; pods: number } }[];
  /** The per-node drain timeout (`ferry plan --drain-timeout`); the step's own is one per round. */
  perNodeTimeoutSeconds: number;
  /** PDBs ("ns/name") whose workload --surge-replicas scales up before this batch. */
  surged?: ReadonlySet<string>;
}): DraftStep {
  const refs = c.nodes.map((n) => n.node);
  const names = refs.map((n) => n.name);
  const pods = c.nodes.reduce((a, n) => a + n.info.pods, 0);
  const pdbs = new Map<string, PdbRef>();
  for (const n of c.nodes) for (const p of n.info.pdbs) pdbs.set(pdbName(p), p);
  const zero = [...pdbs.values()].filter((p) => p.disruptionsAllowed === 0);
  const blocking = zero.filter((p) => !c.surged?.has(pdbName(p)));
  const scaled = zero.filter((p) => c.surged?.has(pdbName(p)));
  const rounds = drainRounds(names.length, DEFAULT_DRAIN_CONCURRENCY);
  const timeoutSeconds = batchDrainTimeoutSeconds(
    c.perNodeTimeoutSeconds,
    names.length,
    DEFAULT_DRAIN_CONCURRENCY,
  );
  const notes = [
    `the nodes are drained in parallel, at most --drain-concurrency at a time (ferry run; default ${DEFAULT_DRAIN_CONCURRENCY})`,
    `timeout ${timeoutSeconds} s: ${c.perNodeTimeoutSeconds} s per node × ${rounds} round(s) of at most ${DEFAULT_DRAIN_CONCURRENCY} of its ${names.length} node(s); ferry run --drain-concurrency N scales it to ⌈${names.length} ÷ N⌉ rounds, --drain-timeout replaces the per-node figure`,
    'a pod without a controller stops the run before anything is evicted, unless ferry run --evict-bare-pods (journaled)',
    ...(blocking.length > 0
      ? [
          `PodDisruptionBudget(s) allowing no disruption at snapshot time: ${blocking.map(pdbName).join(', ')}; this drain waits on them and stops at its timeout naming the budget`,
        ]
      : []),
    ...(scaled.length > 0
      ? [
          `PodDisruptionBudget(s) ${scaled.map(pdbName).join(', ')} allowed no disruption at snapshot time: their workload was scaled up by one before this batch (--surge-replicas)`,
        ]
      : []),
  ];
  const drained = batchState(refs, true);
  const nodes: DrainNode[] = c.nodes.map((n) => ({ node: n.node, pdbs: n.info.pdbs, pods: n.info.pods }));
  return draft<'drain-batch'>({
    kind: 'drain-batch',
    subject: names[0]!,
    title: `Drain worker batch ${c.batch}: ${names.join(', ')} (in parallel, Eviction API, PodDisruptionBudgets respected)`,
    target: { node: refs[0]! },
    params: { nodes, evictionOnly: true, ignoreDaemonSets: true, deleteEmptyDirData: true },
    expect: batchState(refs, false),
    action: {
      summary: `Evict the ${pods} pod(s) the Eviction API may move from ${names.length} node(s) together; never delete a pod, never force; wait until the evicted pods' replacements are Ready elsewhere`,
      performer: 'ferry',
      // By hand the nodes can be drained one after another, or each in its own terminal.
      commands: refs.map((n) => drainCmd(n, c.perNodeTimeoutSeconds, true)),
    },
    verify: {
      expect: drained,
      commands: refs.map((n) =>
        cmd(
          kubectl(`get pods -A --field-selector spec.nodeName=${nodeArg(n)} -o wide`),
          'only DaemonSet and mirror pods left',
        ),
      ),
    },
    timeoutSeconds,
    destructive: false,
    undo: undoWith('Uncordon the nodes; evicted pods were rescheduled elsewhere and stay there', [
      ...refs.map((n) => cmd(kubectl(`uncordon ${nodeArg(n)}`))),
    ]),
    idempotencyCheck: doneWhen(`no evictable pod left on ${names.join(', ')}`, drained, 'redo'),
    notes,
    batch: c.batch,
  });
}
