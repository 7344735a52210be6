/**
 * `ferry mgmt restore` without `--to-kubeconfig`: the flags of a restore into a kind cluster ferry
 * creates, and its outcome. With no backup at all it says how to build a new management cluster,
 * or builds it when `--bootstrap-config` names its mgmt.yaml.
 */
import { resolve } from 'node:path';
import { type ExitCode, inputError, usageError } from '../errors.js';
import type { RestoreInto } from '../mgmt/restore-into.js';
import type { KindRestoreOutcome } from '../mgmt/restore-kind/run.js';
import type { Io } from './io.js';
import { providerTimeoutSeconds } from './mgmt-flags.js';

export interface KindRestoreFlags {
  'state-dir'?: string | undefined;
  'kind-name'?: string | undefined;
  'kind-image'?: string | undefined;
  'provider-timeout'?: string | undefined;
}

export function kindTarget(
  values: KindRestoreFlags,
  io: Io,
  writeConcurrency: number | undefined,
): Extract<RestoreInto, { kind: 'kind' }> {
  const providerTimeout = providerTimeoutSeconds(values['provider-timeout']);
  const kindName = values['kind-name'] ?? 'ferry-restore';
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(kindName))
    throw usageError(`--kind-name must be a DNS label (lowercase letters, digits, -); got "${kindName}"`);
  return {
    kind: 'kind',
    stateDir: resolve(io.cwd, values['state-dir'] ?? '.ferry-mgmt-restore'),
    kindName,
    kindImage: values['kind-image'],
    providerTimeoutSeconds: providerTimeout,
    writeConcurrency,
  };
}

export async function kindOutcome(
  out: KindRestoreOutcome,
  io: Io,
  o: { bootstrapConfig: string | undefined; format: 'text' | 'json' },
): Promise<ExitCode> {
  if (out.kind === 'no-backup') {
    const config = o.bootstrapConfig;
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
  const { renderKindRestore } = await import('../mgmt/render.js');
  io.stdout(o.format === 'json' ? `${JSON.stringify(out, null, 2)}\n` : renderKindRestore(out));
  return out.report.verify.ok ? 0 : 1;
}
