/**
 * `ferry mgmt restore` without `--to-kubeconfig`: into a kind cluster ferry creates, with Cluster
 * API at the versions the backup recorded. With no backup at all it says how to build a new
 * management cluster, or builds it when `--bootstrap-config` names its mgmt.yaml.
 */
import { resolve } from 'node:path';
import { type ExitCode, inputError, usageError } from '../errors.js';
import type { MgmtKube } from '../mgmt/kube.js';
import type { S3Location } from '../mgmt/s3-config.js';
import type { BackupStore } from '../mgmt/s3-store.js';
import type { Io } from './io.js';

export interface KindRestoreFlags {
  version?: string | undefined;
  'state-dir'?: string | undefined;
  'kind-name'?: string | undefined;
  'kind-image'?: string | undefined;
  'bootstrap-config'?: string | undefined;
  'provider-timeout'?: string | undefined;
}

export async function restoreIntoKindCli(
  values: KindRestoreFlags,
  io: Io,
  o: {
    loc: S3Location;
    store: BackupStore;
    identities: string[];
    identityFile: string;
    format: 'text' | 'json';
    kubeFor: (kubeconfig: string) => Promise<MgmtKube>;
    writeConcurrency?: number | undefined;
  },
): Promise<ExitCode> {
  const timeout = values['provider-timeout'] ?? '600';
  if (!/^\d+$/.test(timeout) || Number(timeout) < 1)
    throw usageError(`--provider-timeout must be a whole number of seconds ≥ 1; got "${timeout}"`);
  const kindName = values['kind-name'] ?? 'ferry-restore';
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(kindName))
    throw usageError(`--kind-name must be a DNS label (lowercase letters, digits, -); got "${kindName}"`);
  const stateDir = resolve(io.cwd, values['state-dir'] ?? '.ferry-mgmt-restore');
  const { restoreIntoKind } = await import('../mgmt/restore-kind/run.js');
  const out = await restoreIntoKind({
    store: o.store,
    loc: o.loc,
    versionId: values.version,
    identities: o.identities,
    identityFile: o.identityFile,
    stateDir,
    kindName,
    kindImage: values['kind-image'],
    providerTimeoutSeconds: Number(timeout),
    env: io.env,
    progress: (l) => io.stderr(`${l}\n`),
    kubeFor: o.kubeFor,
    ...(o.writeConcurrency !== undefined && { writeConcurrency: o.writeConcurrency }),
  });
  if (out.kind === 'no-backup') {
    const config = values['bootstrap-config'];
    if (config === undefined)
      throw inputError(
        `no backup at ${out.url}: the bucket holds no version of it, so there is nothing to restore`,
        { object: out.url, field: '--from' },
        `check the bucket and prefix; to build a new management cluster instead: ferry mgmt bootstrap --config mgmt.yaml (or run this restore again with --bootstrap-config mgmt.yaml)`,
      );
    io.stderr(`no backup at ${out.url}: building a new management cluster from ${config}\n`);
    const { runMgmtBootstrap } = await import('./mgmt-bootstrap.js');
    return runMgmtBootstrap(['--config', config], io);
  }
  const { renderRestore } = await import('../mgmt/render.js');
  if (o.format === 'json') io.stdout(`${JSON.stringify(out, null, 2)}\n`);
  else
    io.stdout(
      `${renderRestore(out.report)}kind cluster ${out.kindName} is the management cluster now; kubeconfig ${out.kubeconfig}` +
        `${out.resumed ? ' (the restore an earlier run started was completed)' : ''}` +
        `${out.skipped.length > 0 ? ` (${out.skipped.length} stage(s) were done by an earlier run)` : ''}\n`,
    );
  return out.report.verify.ok ? 0 : 1;
}
