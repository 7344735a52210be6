/**
 * The single entry point: Snapshot (+ operator choices) → Facts. Pure; linear in the number of
 * objects (indexes are built once in buildView).
 */
import type { Snapshot } from '../snapshot/model.js';
import { deriveApiserverFacts } from './apiserver.js';
import { deriveClusterFacts } from './cluster.js';
import { deriveCniFacts, deriveKubeProxyFacts } from './cni.js';
import { extraFlagsFact, instanceOf, instancesFact } from './components.js';
import { deriveEncryptionFacts } from './encryption.js';
import { deriveEtcdFacts } from './etcd.js';
import { controllerManagerDefaults, kubeadmContext, schedulerDefaults } from './kubeadm-defaults.js';
import { deriveKubeletFacts } from './kubelet.js';
import {
  type ControllerManagerFacts,
  FACTS_FORMAT_VERSION,
  type Facts,
  type SchedulerFacts,
} from './model.js';
import { deriveNetworkFacts } from './network.js';
import { deriveNodesFacts } from './nodes.js';
import { atField } from './sources.js';
import { resolveTarget, type TargetInput } from './target.js';
import { buildView, type SnapshotView } from './view.js';

export function deriveFacts(snapshot: Snapshot, target: TargetInput = {}): Facts {
  const v = buildView(snapshot);
  const cluster = deriveClusterFacts(v);
  const etcd = deriveEtcdFacts(v);
  const src = snapshot.manifest.source;
  return {
    formatVersion: FACTS_FORMAT_VERSION,
    snapshot: {
      createdAt: snapshot.manifest.createdAt,
      source:
        src.kind === 'live'
          ? `live ${src.server}${src.context ? ` (context ${src.context})` : ''}`
          : `files ${src.path}`,
      parts: [...snapshot.manifest.parts],
    },
    target: resolveTarget(target, cluster.kubernetesVersion.value),
    cluster,
    network: deriveNetworkFacts(v),
    apiserver: deriveApiserverFacts(v),
    controllerManager: controllerManager(v),
    scheduler: scheduler(v),
    encryption: deriveEncryptionFacts(v),
    etcd,
    nodes: deriveNodesFacts(v, etcd.members),
    kubelet: deriveKubeletFacts(v),
    cni: deriveCniFacts(v),
    kubeProxy: deriveKubeProxyFacts(v),
  };
}

function controllerManager(v: SnapshotView): ControllerManagerFacts {
  const missing =
    'the kube-controller-manager manifest(s): manifests/NODE/kube-controller-manager.yaml, or mirror pods in resources/';
  return {
    instances: instancesFact(
      'controllerManager.instances',
      'kube-controller-manager instances',
      v.controllerManagers,
      instanceOf,
      missing,
    ),
    extraFlags: extraFlagsFact({
      key: 'controllerManager.extraFlags',
      title: 'kube-controller-manager flags not set by kubeadm',
      pods: v.controllerManagers,
      declared: v.cc
        ? {
            flags: v.cc.controllerManager.extraArgs,
            source: atField(v.cc.source, 'controllerManager.extraArgs'),
          }
        : undefined,
      defaults: controllerManagerDefaults(kubeadmContext(v)),
      what: 'kube-controller-manager command lines',
      missing: `${missing}, or kubeadm-config.yaml (controllerManager.extraArgs)`,
    }),
  };
}

function scheduler(v: SnapshotView): SchedulerFacts {
  const missing =
    'the kube-scheduler manifest(s): manifests/NODE/kube-scheduler.yaml, or mirror pods in resources/';
  return {
    instances: instancesFact(
      'scheduler.instances',
      'kube-scheduler instances',
      v.schedulers,
      instanceOf,
      missing,
    ),
    extraFlags: extraFlagsFact({
      key: 'scheduler.extraFlags',
      title: 'kube-scheduler flags not set by kubeadm',
      pods: v.schedulers,
      declared: v.cc
        ? { flags: v.cc.scheduler.extraArgs, source: atField(v.cc.source, 'scheduler.extraArgs') }
        : undefined,
      defaults: schedulerDefaults(),
      what: 'kube-scheduler command lines',
      missing: `${missing}, or kubeadm-config.yaml (scheduler.extraArgs)`,
    }),
  };
}
