/**
 * The stages of `ferry mgmt restore` without `--to-kubeconfig`: a kind cluster, clusterctl.yaml
 * pinning the provider versions the backup's manifest recorded, `clusterctl init` (waiting for the
 * providers), then the restore itself into kind. The first three are bootstrap's own stage builders.
 */
import { join } from 'node:path';
import { inputError } from '../../errors.js';
import {
  clusterctlConfigStage,
  clusterctlInitStage,
  clusterctlYamlFor,
  KNOWN_PROVIDERS,
  kindClusterStage,
  kindConfigFor,
  type ProviderPin,
  pinProvider,
  type Stage,
} from '../bootstrap/stages.js';
import type { ProviderEntry } from '../model.js';

export const RESTORE_STAGE_KINDS = [
  'kind-cluster',
  'clusterctl-config',
  'clusterctl-init',
  'restore',
] as const;
export type RestoreStageKind = (typeof RESTORE_STAGE_KINDS)[number];

export type RestoreStage =
  | Extract<Stage, { kind: 'kind-cluster' | 'clusterctl-config' | 'clusterctl-init' }>
  | { kind: 'restore'; title: string; kubeconfig: string };

export interface RestorePaths {
  dir: string;
  journal: string;
  lock: string;
  kindKubeconfig: string;
  clusterctlConfig: string;
  xdg: string;
}

export function restorePaths(dir: string): RestorePaths {
  return {
    dir,
    journal: join(dir, 'restore.journal.sqlite'),
    lock: join(dir, 'restore.lock'),
    kindKubeconfig: join(dir, 'kind.kubeconfig'),
    clusterctlConfig: join(dir, 'clusterctl.yaml'),
    xdg: join(dir, 'xdg'),
  };
}

// clusterctl init installs the core first; the order of its flags is the order shown.
const ORDER = [
  'CoreProvider',
  'BootstrapProvider',
  'ControlPlaneProvider',
  'InfrastructureProvider',
  'IPAMProvider',
];

/** The backup's inventory as pins; a provider ferry cannot pin, or no core, is refused (nothing installed blindly). */
export function pinsFromManifest(providers: ProviderEntry[], where: string): ProviderPin[] {
  if (!providers.some((p) => p.type === 'CoreProvider'))
    throw inputError(
      `${where} records no core provider (its manifest has no clusterctl inventory): ferry cannot tell which Cluster API to install into kind`,
      { object: where, field: 'manifest.providers' },
      'restore into a management cluster you prepared yourself: --to-kubeconfig FILE',
    );
  const pins: ProviderPin[] = [];
  for (const p of [...providers].sort((a, b) => ORDER.indexOf(a.type) - ORDER.indexOf(b.type))) {
    const pin = pinProvider(p.type, p.providerName, p.version);
    if (!pin)
      throw inputError(
        `${where} records the provider ${p.type} ${p.providerName} ${p.version}, which ferry cannot install into kind (it pins ${KNOWN_PROVIDERS.join(', ')})`,
        { object: where, field: 'manifest.providers' },
        'install Cluster API with that provider into a cluster yourself and restore into it: --to-kubeconfig FILE',
      );
    pins.push(pin);
  }
  return pins;
}

export function buildRestoreStages(o: {
  providers: ProviderPin[];
  paths: RestorePaths;
  kindName: string;
  kindImage?: string | undefined;
  source: string;
  providerTimeoutSeconds: number;
  objects: number;
}): RestoreStage[] {
  const p = o.paths;
  return [
    kindClusterStage({
      name: o.kindName,
      config: kindConfigFor(o.kindName, o.kindImage),
      kubeconfig: p.kindKubeconfig,
    }),
    clusterctlConfigStage(
      p.clusterctlConfig,
      // cert-manager is not in the inventory: clusterctl installs the one its release names.
      clusterctlYamlFor(o.providers, { origin: `ferry mgmt restore from ${o.source}` }),
      o.providers,
    ),
    clusterctlInitStage(o.providers, {
      kindName: o.kindName,
      kubeconfig: p.kindKubeconfig,
      config: p.clusterctlConfig,
      xdg: p.xdg,
      providerTimeoutSeconds: o.providerTimeoutSeconds,
    }),
    {
      kind: 'restore',
      title: `restore ${o.objects} object(s) from ${o.source} into kind cluster ${o.kindName}, statuses back, unpause, verify`,
      kubeconfig: p.kindKubeconfig,
    },
  ];
}
