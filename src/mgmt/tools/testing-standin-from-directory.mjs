// The part of `clusterctl move --from-directory` a stand-in must do for real (capi.md §5.1): read
// every file of the directory (JSON objects), create the namespaces, then the objects owners first
// with ownerRef UIDs rewritten to the new owners', through the real kubectl against the lab.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const KUBECTL = '/usr/bin/kubectl';

function kubectl(kubeconfig, args, stdin) {
  const r = spawnSync(KUBECTL, ['--kubeconfig', kubeconfig, ...args], {
    input: stdin ?? '',
    encoding: 'utf8',
  });
  return r;
}

export function fromDirectory(dir, kubeconfig) {
  const objects = readdirSync(dir).map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));
  for (const ns of new Set(objects.map((o) => o.metadata.namespace).filter(Boolean)))
    kubectl(
      kubeconfig,
      ['create', '--validate=false', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
    );
  const byUid = new Map(objects.map((o) => [o.metadata.uid, o]));
  const depth = (o, seen = new Set()) => {
    if (seen.has(o)) return 0;
    seen.add(o);
    let d = 0;
    for (const r of o.metadata.ownerReferences ?? []) {
      const owner = byUid.get(r.uid);
      if (owner) d = Math.max(d, depth(owner, seen) + 1);
    }
    return d;
  };
  const levels = [];
  for (const o of objects) {
    const d = depth(o);
    levels[d] = [...(levels[d] ?? []), o];
  }
  const uids = new Map();
  for (const level of levels.filter(Boolean)) {
    const items = level.map((o) => {
      const { uid, resourceVersion, creationTimestamp, managedFields, generation, ...metadata } = o.metadata;
      const refs = (o.metadata.ownerReferences ?? []).map((r) => ({ ...r, uid: uids.get(r.uid) ?? r.uid }));
      if (refs.length > 0) metadata.ownerReferences = refs;
      return { ...o, metadata };
    });
    // One create per object: kubectl prints several created objects as concatenated JSON, not a List.
    for (const [i, item] of items.entries()) {
      const r = kubectl(
        kubeconfig,
        ['create', '--validate=false', '-o', 'json', '-f', '-'],
        JSON.stringify(item),
      );
      if (r.status !== 0) {
        process.stderr.write(`Error: action failed after 10 attempts: ${r.stderr}`);
        return 1;
      }
      uids.set(level[i].metadata.uid, JSON.parse(r.stdout).metadata.uid);
    }
  }
  return 0;
}
