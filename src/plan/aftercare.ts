/**
 * Phase 5: after-care, once no kubeadm node remains. Remove what the migration needed and nothing
 * else will: the never-expiring bootstrap token, kube-proxy's kubeadm selector (Talos's
 * `upgrade-k8s` fails on it, siderolabs/talos#11973), the copies of the CA keys; hand over to
 * Cluster API when it manages the nodes; and offer the drill that proves a node can be replaced.
 */
import type { DaemonSetFact } from '../facts/model.js';
import type { Provisioner } from '../facts/target.js';
import type { CapiNames } from '../kit/capi-names.js';
import { capiHandoverStep } from './capi-steps.js';
import { addressArg, cmd, kubectl, nodeArg, sq, talosctl } from './commands.js';
import type { ExpectedState, ObjectExpectation, TalosNodeRef } from './expected-state.js';
import { type DraftStep, nodeLabel } from './model.js';
import { confirmed, doneWhen, draft, noUndo, TIMEOUTS } from './steps.js';

export interface AfterCareContext {
  provisioner: Provisioner;
  /** Ids of bootstrap tokens without expiry seen in the snapshot (the one Talos nodes join with is among them once created). */
  tokenIds: string[];
  kubeProxy: DaemonSetFact | null;
  copies: { where: string; path: string; why: string }[];
  /** Cluster etcd minor vs the target Talos release's default etcd minor, when both are known. */
  etcdPin: { cluster: string; talos: string } | null;
  talosControlPlanes: number;
  /** The kit directory and its Cluster API names (capi plans). */
  kit: string | null;
  capi: CapiNames | null;
  drillNode: TalosNodeRef | null;
}

export function afterCareSteps(ctx: AfterCareContext): DraftStep[] {
  const steps: DraftStep[] = [tokenStep(ctx.tokenIds)];
  if (ctx.kubeProxy && ctx.kubeProxy.selector['tier'] !== 'node') steps.push(kubeProxyStep(ctx.kubeProxy));
  steps.push(wipeStep(ctx.copies));
  if (ctx.provisioner === 'capi') steps.push(capiHandoverStep(ctx.kit, ctx.capi, ctx.talosControlPlanes));
  if (ctx.etcdPin) steps.push(etcdUnpin(ctx.etcdPin));
  steps.push(drill(ctx.drillNode));
  return steps;
}

function tokenStep(ids: string[]): DraftStep {
  const shown = ids.length > 0 ? ids : ['<TOKEN_ID>'];
  const objects = (present: boolean): ObjectExpectation[] =>
    shown.map((id) => ({ kind: 'Secret', namespace: 'kube-system', name: `bootstrap-token-${id}`, present }));
  const gone: ExpectedState = { objects: objects(false) };
  return draft<'delete-bootstrap-token'>({
    kind: 'delete-bootstrap-token',
    subject: 'cluster',
    title: `Delete the never-expiring bootstrap token${ids.length === 1 ? ` ${ids[0]}` : 's'}`,
    target: {},
    params: { tokenIds: ids },
    expect: { objects: objects(true) },
    action: {
      summary:
        'The token made with kubeadm token create --ttl 0 for the Talos nodes is a standing credential: delete it once no node needs to join',
      performer: 'operator',
      commands: shown.map((id) =>
        cmd(
          kubectl(`-n kube-system delete secret bootstrap-token-${id}`),
          ids.length === 0
            ? 'TOKEN_ID: the part before the dot of the token given to ferry generate'
            : undefined,
        ),
      ),
    },
    verify: {
      expect: gone,
      commands: [
        cmd(kubectl('-n kube-system get secrets --field-selector type=bootstrap.kubernetes.io/token')),
      ],
    },
    timeoutSeconds: TIMEOUTS.afterCare,
    destructive: true,
    undo: noUndo(
      'a deleted token is not restored: nodes that join later need a new token in cluster.token of their machine config',
    ),
    idempotencyCheck: doneWhen('the token Secret is absent', gone, 'redo'),
    notes: [
      'Talos nodes that join later authenticate with cluster.token from their machine config: create a new token then, and update the configs',
    ],
  });
}

function kubeProxyStep(ds: DaemonSetFact): DraftStep {
  const labels = { 'k8s-app': 'kube-proxy', tier: 'node' };
  const ns = ds.namespace;
  const done: ExpectedState = {
    objects: [
      {
        kind: 'DaemonSet',
        namespace: ns,
        name: ds.name,
        present: true,
        fields: {
          'spec.selector.matchLabels.tier': 'node',
          'spec.selector.matchLabels.k8s-app': 'kube-proxy',
        },
      },
    ],
  };
  const jq =
    `'.spec.selector.matchLabels = {"k8s-app": "kube-proxy", "tier": "node"} | .spec.template.metadata.labels += {"k8s-app": "kube-proxy", "tier": "node"} | ` +
    `.metadata.labels += {"k8s-app": "kube-proxy", "tier": "node"} | del(.metadata.uid, .metadata.resourceVersion, .metadata.creationTimestamp, .metadata.generation, .status)'`;
  return draft<'relabel-kube-proxy'>({
    kind: 'relabel-kube-proxy',
    subject: 'cluster',
    title: `Re-create DaemonSet ${ns}/${ds.name} with the labels Talos expects (tier: node)`,
    target: {},
    params: { namespace: ns, name: ds.name, labels },
    expect: { objects: [{ kind: 'DaemonSet', namespace: ns, name: ds.name, present: true }] },
    action: {
      summary:
        "A DaemonSet's selector is immutable: save it, delete it, create it again with k8s-app=kube-proxy, tier=node (docs/rules.md#addons.kube-proxy-selector). Running proxies keep their rules during the swap",
      performer: 'operator',
      commands: [
        cmd(
          kubectl(`-n ${ns} get ds ${sq(ds.name)} -o json > kube-proxy.json`),
          'keep it: the undo needs it',
        ),
        cmd(`jq ${jq} kube-proxy.json > kube-proxy-node.json`),
        cmd(kubectl(`-n ${ns} delete ds ${sq(ds.name)}`)),
        cmd(kubectl('apply -f kube-proxy-node.json')),
      ],
    },
    verify: {
      expect: done,
      commands: [cmd(kubectl(`-n ${ns} rollout status ds/${ds.name} --timeout=300s`))],
    },
    timeoutSeconds: TIMEOUTS.afterCare,
    destructive: true,
    undo: noUndo(
      'the old DaemonSet object is gone; to go back, delete the new one and create it from kube-proxy.json',
    ),
    idempotencyCheck: doneWhen('the DaemonSet selector carries tier=node', done, 'redo'),
  });
}

function wipeStep(copies: AfterCareContext['copies']): DraftStep {
  const files = copies.filter((c) => c.where === 'workstation');
  const gone: ExpectedState = {
    files: files.map((c) => ({ path: c.path, where: { kind: 'workstation' }, exists: false })),
  };
  return draft<'wipe-pki-copies'>({
    kind: 'wipe-pki-copies',
    subject: 'cluster',
    title: 'Wipe the copies of the cluster keys the migration made',
    target: {},
    params: { copies },
    expect: {},
    action: {
      summary:
        'The CA keys, the etcd client certificate, the secrets bundle and etcd snapshots were copied around for the migration: shred every copy the cluster does not need',
      performer: 'operator',
      commands: [
        ...files.map((c) => cmd(shredCmd(c.path), c.why)),
        cmd(
          kubectl('-n kube-system delete secret kubeadm-certs --ignore-not-found'),
          'certificates kubeadm init --upload-certs left in the cluster',
        ),
        ...copies
          .filter((c) => c.where !== 'workstation')
          .map((c) => cmd(`# ${c.where}: ${c.path} (${c.why})`)),
      ],
    },
    verify: { expect: gone, commands: files.map((c) => cmd(`test ! -e ${sq(c.path)} && echo gone`)) },
    timeoutSeconds: TIMEOUTS.afterCare,
    destructive: true,
    undo: noUndo('shredded files are gone; the keys still live on the Talos control planes'),
    idempotencyCheck: doneWhen('none of the listed paths exists', gone, 'redo'),
  });
}

/** Shreds a file, or every file under a directory, then removes it; nothing when it is gone. */
function shredCmd(path: string): string {
  const p = sq(path);
  return `if [ -d ${p} ]; then find ${p} -type f -exec shred -u {} + && rm -rf ${p}; elif [ -e ${p} ]; then shred -u ${p}; fi`;
}

function etcdUnpin(pin: { cluster: string; talos: string }): DraftStep {
  return draft<'manual'>({
    kind: 'manual',
    subject: 'cluster',
    title: `etcd: move from the pinned ${pin.cluster} image to Talos's ${pin.talos} (one-way door)`,
    target: {},
    params: {
      instructions: [
        `The Talos members run the cluster's etcd ${pin.cluster} image, pinned for the mixed period (cluster.etcd.image). Removing the pin moves them to ${pin.talos}.`,
        // docs/knowledge/etcd.md §4
        'One-way door: once every member runs the newer minor the cluster version upgrades and cannot be rolled back. Take an etcd snapshot first; check the upgrade preconditions (3.5 → 3.6 needs 3.5.26+ everywhere); one node at a time, waiting for all members healthy in between.',
      ],
    },
    expect: {},
    action: {
      summary: 'Remove the etcd image pin node by node, after a snapshot',
      performer: 'operator',
      commands: [
        cmd(talosctl('<TALOS_CP>', 'etcd snapshot etcd-before-unpin.db')),
        cmd(talosctl('<TALOS_CP>', 'edit machineconfig   # drop cluster.etcd.image')),
      ],
    },
    verify: {
      expect: { operator: { confirms: 'every Talos member runs the Talos etcd image, all healthy' } },
      commands: [cmd(talosctl('<TALOS_CP>', 'etcd status'))],
    },
    timeoutSeconds: TIMEOUTS.afterCare,
    destructive: true,
    undo: noUndo(
      'a completed etcd minor upgrade cannot be rolled back; restore the snapshot into a new cluster instead',
    ),
    idempotencyCheck: confirmed('every Talos member runs the Talos etcd image, all healthy', 'stop'),
    optional: true,
  });
}

function drill(node: TalosNodeRef | null): DraftStep {
  const n = node ? nodeArg(node) : '<TALOS_CP>';
  const addr = node ? addressArg(node) : '<TALOS_CP_ADDRESS>';
  return draft<'drill'>({
    kind: 'drill',
    subject: 'cluster',
    title: `Drill: replace ${node ? nodeLabel(node) : 'a Talos control plane'} for no reason`,
    target: node ? { node } : {},
    params: { node },
    expect: {},
    action: {
      summary:
        'Prove on a quiet day that a Talos control plane can be replaced: snapshot, plan and run again on the migrated cluster, or by hand as below',
      performer: 'operator',
      commands: [
        cmd('ferry snapshot --kubeconfig "$KUBECONFIG" -o snapshot-drill'),
        cmd(
          '# provision a fresh Talos control plane; wait until its member is a caught-up voter and its Node is Ready',
        ),
        cmd(talosctl(addr, 'etcd forfeit-leadership')),
        cmd(talosctl(addr, 'reset --graceful'), 'leaves etcd and wipes the node'),
        cmd(kubectl(`delete node ${n}`)),
      ],
    },
    verify: {
      expect: { operator: { confirms: 'the drill node was replaced and the cluster is healthy' } },
      commands: [cmd(kubectl('get nodes -o wide')), cmd(talosctl('<ANY_TALOS_CP>', 'etcd members'))],
    },
    timeoutSeconds: TIMEOUTS.afterCare,
    destructive: true,
    undo: noUndo('the drill replaces a node; there is nothing to go back to'),
    idempotencyCheck: confirmed('the drill node was replaced and the cluster is healthy', 'stop'),
    optional: true,
  });
}
