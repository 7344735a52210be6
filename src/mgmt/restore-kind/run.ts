/**
 * `ferry mgmt restore` into kind (docs/mgmt-bootstrap.md's disaster recovery: kind → Cluster API → the backup): picks
 * and verifies the backup before anything is created, then runs the journaled stages. A run that
 * finds a journal continues it with the backup version it pinned; a restore cut short by a crash is
 * completed (restore-kind/resume.ts), never started over on top of what it created.
 */
import { mkdirSync } from 'node:fs';
import { FerryError, inputError } from '../../errors.js';
import { acquireLocalLock } from '../../run/lock.js';
import { preflightTools } from '../bootstrap/preflight.js';
import { KIND_HANDLERS, runJournaled, type StageContext } from '../bootstrap/run.js';
import type { MgmtKube } from '../kube.js';
import {
  type FetchedBackup,
  fetchBackup,
  type RestoreReport,
  runRestore,
  verifyRestore,
} from '../restore.js';
import type { S3Location } from '../s3-config.js';
import type { BackupStore } from '../s3-store.js';
import { StageJournal } from '../stage-journal.js';
import { Tools } from '../tools/adapter.js';
import { completeRestore, countPresent } from './resume.js';
import {
  buildRestoreStages,
  pinsFromManifest,
  type RestoreStage,
  type RestoreStageKind,
  restorePaths,
} from './stages.js';

export const RESTORE_AGAIN =
  'fix the cause, then run the same ferry mgmt restore command again: it continues at this stage';

export interface KindRestoreOptions {
  store: BackupStore;
  loc: S3Location;
  versionId?: string | undefined;
  identities: string[];
  identityFile: string;
  stateDir: string;
  kindName: string;
  kindImage?: string | undefined;
  providerTimeoutSeconds: number;
  env: NodeJS.ProcessEnv;
  progress: (line: string) => void;
  /** The API client for a kubeconfig file (the kind cluster's, once kind wrote it). */
  kubeFor: (kubeconfig: string) => Promise<MgmtKube>;
  /** Restore writes in flight at most (--write-concurrency; default as a restore's). */
  writeConcurrency?: number;
}

export type KindRestoreOutcome =
  | { kind: 'no-backup'; url: string }
  | {
      kind: 'restored';
      report: RestoreReport;
      kubeconfig: string;
      kindName: string;
      /** Stages an earlier run had finished. */
      skipped: RestoreStageKind[];
      /** The restore completed one an earlier run started. */
      resumed: boolean;
    };

interface Pin {
  url: string;
  versionId: string;
}

function readPin(journal: string): Pin | undefined {
  const d = StageJournal.peekDigest(journal);
  if (d === undefined) return undefined;
  try {
    return JSON.parse(d) as Pin;
  } catch (cause) {
    throw new FerryError('input', `${journal} is not a restore journal`, {
      location: { file: journal },
      remediation: 'name another --state-dir',
      cause,
    });
  }
}

/** The backup this run restores: the one the journal pinned, else --version, else the newest. */
async function pickBackup(o: KindRestoreOptions, journal: string): Promise<FetchedBackup | undefined> {
  const pin = readPin(journal);
  if (pin && pin.url !== o.loc.url)
    throw inputError(
      `${o.stateDir} holds a restore of ${pin.url}, not ${o.loc.url}`,
      { file: o.stateDir, field: '--state-dir' },
      `continue it with --from ${pin.url}, or name another --state-dir`,
    );
  if (pin && o.versionId !== undefined && pin.versionId !== o.versionId)
    throw inputError(
      `${o.stateDir} holds a restore of version ${pin.versionId}, not ${o.versionId}`,
      { file: o.stateDir, field: '--version' },
      `continue it with --version ${pin.versionId} (or without --version), or name another --state-dir`,
    );
  const versionId = o.versionId ?? pin?.versionId;
  if (versionId === undefined && (await o.store.versions()).length === 0) return undefined;
  return await fetchBackup({
    store: o.store,
    loc: o.loc,
    versionId,
    identities: o.identities,
    identityFile: o.identityFile,
  });
}

export async function restoreIntoKind(o: KindRestoreOptions): Promise<KindRestoreOutcome> {
  const paths = restorePaths(o.stateDir);
  mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  const backup = await pickBackup(o, paths.journal);
  if (!backup) return { kind: 'no-backup', url: o.loc.url };
  const where = `${o.loc.url} version ${backup.versionId}`;
  const pins = pinsFromManifest(backup.archive.manifest.providers, where);
  const digest = JSON.stringify({ url: o.loc.url, versionId: backup.versionId } satisfies Pin);
  const lock = await acquireLocalLock(paths.lock, { lineage: digest, runId: String(process.pid) });
  const journal = StageJournal.open<RestoreStageKind>(paths.journal, digest);
  try {
    let current: RestoreStageKind | 'preflight' = 'preflight';
    const tools = new Tools({
      env: o.env,
      sink: (tool, stream, line) => journal.line(current, tool, stream, line),
    });
    const core = pins.find((p) => p.type === 'CoreProvider')!;
    await preflightTools(tools, {
      need: ['kind', 'kubectl'],
      core: core.version,
      coreSource: "the backup's core provider",
      progress: o.progress,
    });
    const stages = buildRestoreStages({
      providers: pins,
      paths,
      kindName: o.kindName,
      kindImage: o.kindImage,
      source: where,
      providerTimeoutSeconds: o.providerTimeoutSeconds,
      objects: backup.archive.objects.length,
    });
    const before = journal.lastStates().get('restore');
    const ctx: StageContext = { paths, tools, progress: o.progress, again: RESTORE_AGAIN };
    let report: RestoreReport | undefined;
    const wc = o.writeConcurrency !== undefined ? { writeConcurrency: o.writeConcurrency } : {};
    let resumed = false;
    const restoreStage = async (s: Extract<RestoreStage, { kind: 'restore' }>) => {
      const kube = await o.kubeFor(s.kubeconfig);
      // Only a restore this journal started may find its objects there; anything else is refused by runRestore.
      if (before !== undefined && (await countPresent(kube, backup.archive)) > 0) {
        resumed = true;
        report = await completeRestore({ kube, backup, loc: o.loc, log: o.progress, ...wc });
      } else report = await runRestore({ kube, backup, loc: o.loc, log: o.progress, ...wc });
    };
    const outcome = await runJournaled<RestoreStageKind, RestoreStage>(
      stages,
      {
        journal,
        tools,
        progress: o.progress,
        onStage: (k) => {
          current = k;
        },
      },
      async (s) => {
        switch (s.kind) {
          case 'kind-cluster':
            return KIND_HANDLERS['kind-cluster'](s, ctx);
          case 'clusterctl-config':
            return KIND_HANDLERS['clusterctl-config'](s, ctx);
          case 'clusterctl-init':
            return KIND_HANDLERS['clusterctl-init'](s, ctx);
          case 'restore':
            return restoreStage(s);
          default: {
            const never: never = s;
            throw new FerryError('internal', `no handler for ${JSON.stringify(never)}`);
          }
        }
      },
    );
    if (!report) {
      // Every stage was done by earlier runs: verify what kind holds now.
      const kube = await o.kubeFor(paths.kindKubeconfig);
      await kube.discoverKinds();
      report = {
        url: o.loc.url,
        versionId: backup.versionId,
        created: 0,
        statuses: 0,
        namespaces: [],
        uids: {},
        droppedOwners: [],
        verify: await verifyRestore(kube, backup.archive),
      };
    }
    return {
      kind: 'restored',
      report,
      kubeconfig: paths.kindKubeconfig,
      kindName: o.kindName,
      skipped: outcome.skipped,
      resumed,
    };
  } finally {
    journal.close();
    await lock.release();
  }
}
