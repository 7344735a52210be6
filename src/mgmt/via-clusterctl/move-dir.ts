/**
 * Runs `clusterctl move` with a directory (`--via clusterctl`): the real binary through the tool
 * adapter, in a private 0700 temporary directory that is removed on every way out, because the
 * files move writes are the Cluster API objects with their Secrets in plain text. Files are named
 * `<Kind>_<Namespace>_<Name>.yaml` and hold JSON (capi.md §5.1); every file is read.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FerryError } from '../../errors.js';
import { describeObject, type KubeObject } from '../model.js';
import type { Tools } from '../tools/adapter.js';

export interface MoveTarget {
  kubeconfig: string;
  context?: string | undefined;
}

/** clusterctl, checked; a missing one names the flag to drop. */
export async function requireClusterctl(tools: Tools): Promise<void> {
  try {
    await tools.version('clusterctl');
  } catch (err) {
    if (!(err instanceof FerryError)) throw err;
    throw new FerryError('input', `--via clusterctl needs clusterctl: ${err.message}`, {
      remediation: `${err.remediation ? `${err.remediation}; ` : ''}or drop --via clusterctl: ferry's own export (the default, --via api) needs no clusterctl`,
      cause: err,
    });
  }
}

/** A private directory for move's files and clusterctl's config dir; `fn` runs with it, then it is gone. */
export async function withMoveDir<T>(fn: (dir: { objects: string; xdg: string }) => Promise<T>): Promise<T> {
  // mkdtemp creates the directory 0700; the umask cannot widen it.
  const root = mkdtempSync(join(tmpdir(), 'ferry-move-'));
  try {
    const objects = mkdtempSync(join(root, 'objects-'));
    const xdg = mkdtempSync(join(root, 'xdg-'));
    return await fn({ objects, xdg });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const env = (xdg: string) => ({ CLUSTERCTL_DISABLE_VERSIONCHECK: 'true', XDG_CONFIG_HOME: xdg });
const ctxArgs = (t: MoveTarget) => [
  '--kubeconfig',
  t.kubeconfig,
  ...(t.context ? ['--kubeconfig-context', t.context] : []),
];

/** `clusterctl move --to-directory` once per namespace (move takes one per run); the objects it wrote. */
export async function moveToDirectory(
  tools: Tools,
  target: MoveTarget,
  namespaces: string[],
): Promise<KubeObject[]> {
  return withMoveDir(async (dir) => {
    for (const ns of namespaces)
      await tools.ok(
        {
          tool: 'clusterctl',
          args: ['move', ...ctxArgs(target), '--namespace', ns, '--to-directory', dir.objects],
          env: env(dir.xdg),
        },
        `clusterctl move --to-directory refused the namespace ${ns}`,
        'clusterctl refuses paused Clusters and waits for block-move annotations: fix what it says, then back up again (or drop --via clusterctl)',
      );
    const out: KubeObject[] = [];
    for (const f of readdirSync(dir.objects).sort()) {
      try {
        out.push(JSON.parse(readFileSync(join(dir.objects, f), 'utf8')) as KubeObject);
      } catch (cause) {
        throw new FerryError('gate', `clusterctl move wrote ${f}, which is not a JSON object`, {
          remediation:
            'check the clusterctl on PATH (ferry reads the files clusterctl v1.10 or newer writes), or drop --via clusterctl',
          cause,
        });
      }
    }
    return out;
  });
}

/** Writes objects as move's files and runs `clusterctl move --from-directory` into the target. */
export async function moveFromDirectory(
  tools: Tools,
  target: MoveTarget,
  objects: KubeObject[],
): Promise<void> {
  await withMoveDir(async (dir) => {
    for (const o of objects)
      writeFileSync(
        join(dir.objects, `${o.kind}_${o.metadata.namespace ?? ''}_${o.metadata.name}.yaml`),
        JSON.stringify(o),
        { mode: 0o600 },
      );
    await tools.ok(
      {
        tool: 'clusterctl',
        args: ['move', ...ctxArgs(target), '--from-directory', dir.objects],
        env: env(dir.xdg),
      },
      `clusterctl move --from-directory could not restore ${objects.length} object(s) (${objects.slice(0, 3).map(describeObject).join(', ')}…)`,
      'fix what clusterctl says; it skips objects that exist, so the same restore can run again',
    );
  });
}
