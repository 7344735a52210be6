/**
 * `ferry mgmt restore`: which of the three restore paths a request takes, and their wiring. Into a
 * cluster the operator names, ferry's own writes (restore.ts) or `clusterctl move --from-directory`
 * (via-clusterctl/restore.ts); without one, into a kind cluster ferry creates (restore-kind/run.ts).
 */
import { incurableByWaiting } from '../adapters/errors.js';
import { FerryError } from '../errors.js';
import { isKubeApiError } from '../ports/kube.js';
import { openClusterctl, openMgmtKube, openStore } from './connect.js';
import type { MgmtKube } from './kube.js';
import type { FetchedBackup, RestoreReport } from './restore.js';
import type { KindRestoreOutcome } from './restore-kind/run.js';
import { serverAnswerKind } from './restore-write.js';
import type { S3Flags, S3Location } from './s3-config.js';

export type RestoreInto =
  | {
      kind: 'cluster';
      kubeconfig: string;
      context?: string | undefined;
      writeConcurrency?: number | undefined;
    }
  | { kind: 'clusterctl'; kubeconfig: string; context?: string | undefined }
  | {
      kind: 'kind';
      stateDir: string;
      kindName: string;
      kindImage?: string | undefined;
      providerTimeoutSeconds: number;
      writeConcurrency?: number | undefined;
    };

export interface RestoreRequest {
  /** The backup: s3://BUCKET[/PREFIX], its S3 settings, a version (default the newest). */
  from: string;
  s3: S3Flags;
  versionId?: string | undefined;
  identities: string[];
  identityFile: string;
  into: RestoreInto;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
}

export type RestoreOutcome =
  | { into: 'cluster'; report: RestoreReport }
  | { into: 'kind'; outcome: KindRestoreOutcome };

export async function restoreManagement(r: RestoreRequest): Promise<RestoreOutcome> {
  try {
    return await restoreOnce(r);
  } catch (err) {
    throw serverRefusal(err) ?? err;
  }
}

/**
 * An API server's error answer that reached here unwrapped (a list of the target refused before
 * the first write, a write of an interrupted restore into kind): the server's refusal, not a fault
 * of ferry's, so exit 2 with its message (the cause) rather than 4. What failed after writes began
 * on an empty target is already wrapped by restore-write.ts.
 */
export function serverRefusal(err: unknown): FerryError | undefined {
  if (!isKubeApiError(err)) return undefined;
  const transient = serverAnswerKind(err) === 'unreachable';
  return new FerryError(
    serverAnswerKind(err),
    `restore stopped: an API server answered HTTP ${err.status}${err.reason ? ` ${err.reason}` : ''}`,
    {
      remediation:
        incurableByWaiting(err)?.remediation ??
        (transient
          ? 'restore again once the API server answers (its message is above)'
          : "remove the cause the server's message above names, then restore again"),
      cause: err,
    },
  );
}

async function restoreOnce(r: RestoreRequest): Promise<RestoreOutcome> {
  const { into } = r;
  if (into.kind === 'kind') {
    const { loc, store } = await openStore(r.from, '--from', r.s3, r.env);
    try {
      const { restoreIntoKind } = await import('./restore-kind/run.js');
      const outcome = await restoreIntoKind({
        store,
        loc,
        versionId: r.versionId,
        identities: r.identities,
        identityFile: r.identityFile,
        stateDir: into.stateDir,
        kindName: into.kindName,
        kindImage: into.kindImage,
        providerTimeoutSeconds: into.providerTimeoutSeconds,
        env: r.env,
        progress: r.log,
        kubeFor: (file) => openMgmtKube(file, undefined),
        ...(into.writeConcurrency !== undefined && { writeConcurrency: into.writeConcurrency }),
      });
      return { into: 'kind', outcome };
    } finally {
      store.destroy();
    }
  }
  // Everything that can be refused without the backup is checked before it is downloaded.
  const kube = await openMgmtKube(into.kubeconfig, into.context);
  const restore = await restorerFor(into, kube, r);
  const { loc, store } = await openStore(r.from, '--from', r.s3, r.env);
  try {
    const { fetchBackup } = await import('./restore.js');
    const backup = await fetchBackup({
      store,
      loc,
      versionId: r.versionId,
      identities: r.identities,
      identityFile: r.identityFile,
    });
    return { into: 'cluster', report: await restore(backup, loc) };
  } finally {
    store.destroy();
  }
}

type Restorer = (backup: FetchedBackup, loc: S3Location) => Promise<RestoreReport>;

async function restorerFor(
  into: Exclude<RestoreInto, { kind: 'kind' }>,
  kube: MgmtKube,
  r: RestoreRequest,
): Promise<Restorer> {
  switch (into.kind) {
    case 'cluster': {
      const { runRestore } = await import('./restore.js');
      return (backup, loc) =>
        runRestore({ kube, backup, loc, log: r.log, writeConcurrency: into.writeConcurrency });
    }
    case 'clusterctl': {
      const tools = await openClusterctl(r.env, r.log);
      const { restoreViaClusterctl } = await import('./via-clusterctl/restore.js');
      const target = { kubeconfig: into.kubeconfig, context: into.context };
      return (backup, loc) => restoreViaClusterctl({ kube, backup, loc, tools, target, log: r.log });
    }
    default: {
      const never: never = into;
      throw new FerryError('internal', `no restore path for ${JSON.stringify(never)}`);
    }
  }
}
