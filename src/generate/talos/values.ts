/**
 * Facts → TalosValues: every value a Talos machine config needs, derived from the cluster with its
 * provenance, or a MissingInput naming what to provide. Pure; the renderers only lay values out.
 */
import { mayEqualStableHostname, planControlPlaneHostnames } from '../../facts/hostnames.js';
import type { Facts } from '../../facts/model.js';
import { type Sourced, sourced } from '../../facts/sourced.js';
import { kubernetesInTalosWindow } from '../../facts/target.js';
import { splitShapes, workerGroups } from '../../facts/worker-groups.js';
import {
  CONTROLLER_MANAGER_DENIED_ARGS,
  ETCD_DENIED_ARGS,
  KUBEPRISM,
  SCHEDULER_DENIED_ARGS,
} from '../../knowledge/talos.js';
import { minEtcdMinorFor, pinnedEtcdImage, TALOS_KUBELET_IMAGE } from '../../knowledge/talos-config.js';
import type { SourceRef } from '../../snapshot/model.js';
import { compareMinor, parseVersion } from '../../util/semver.js';
import type { GenerateNote, MissingInput } from '../artifact.js';
import { need } from '../context.js';
import { deriveApiserverValues } from './apiserver.js';
import { carryArgs } from './args.js';
import { hostnamePlan } from './hostname.js';
import { deriveKubeletValues } from './kubelet.js';
import type { ControlPlaneReplacement, TalosValues } from './model.js';
import { controlPlaneScheduling } from './nodes.js';

export type ValuesResult =
  | { kind: 'ok'; values: TalosValues; notes: GenerateNote[] }
  | { kind: 'missing'; missing: MissingInput[]; notes: GenerateNote[] };

export function deriveTalosValues(facts: Facts): ValuesResult {
  const missing: MissingInput[] = [];
  const notes: GenerateNote[] = [];
  const target = facts.target;
  const release = target.talos;

  const k8s = kubernetesVersion(facts, missing, notes);
  const name = need(facts.cluster.name, 'Talos names the cluster in every config', missing);
  const ep = need(facts.cluster.controlPlaneEndpoint, 'Talos nodes join through the same endpoint', missing);
  const pods = need(facts.network.podSubnets, 'Talos must use the same pod CIDRs', missing);
  const services = need(facts.network.serviceSubnets, 'Talos must use the same service CIDRs', missing);
  const domain = need(facts.network.dnsDomain, 'Talos must use the same DNS domain', missing);
  const etcdVersion = need(
    facts.etcd.version,
    'the Talos etcd image is pinned to the cluster etcd version during the mixed period',
    missing,
  );
  const kcmFlags = need(
    facts.controllerManager.extraFlags,
    'kube-controller-manager flags must be carried or reported',
    missing,
  );
  const schedFlags = need(
    facts.scheduler.extraFlags,
    'kube-scheduler flags must be carried or reported',
    missing,
  );
  const proxyDs = need(
    facts.kubeProxy.daemonSet,
    'Talos must not start kube-proxy where the cluster runs without it',
    missing,
  );
  const cps = need(
    facts.nodes.controlPlane,
    'control-plane scheduling, labels and taints are carried as found',
    missing,
  );
  const workers = need(facts.nodes.workers, 'worker labels and taints are carried as found', missing);
  const plan = hostnamePlan(facts, missing);

  const endpoint = ep ? sourced(ep.url, facts.cluster.controlPlaneEndpoint.provenance) : undefined;
  const apiserver =
    endpoint && ep ? deriveApiserverValues(facts, release, endpoint, ep.host, missing, notes) : undefined;
  const kubeDns = facts.network.kubeDnsIPs.value
    ? sourced(facts.network.kubeDnsIPs.value, facts.network.kubeDnsIPs.provenance)
    : undefined;
  const kubelet = deriveKubeletValues(facts, release, kubeDns, domain, missing, notes);

  if (
    missing.length > 0 ||
    !k8s ||
    !name ||
    !ep ||
    !endpoint ||
    !pods ||
    !services ||
    !domain ||
    !etcdVersion ||
    !kcmFlags ||
    !schedFlags ||
    proxyDs === undefined ||
    !cps ||
    !workers ||
    !plan ||
    !apiserver ||
    !kubelet
  ) {
    return { kind: 'missing', missing, notes };
  }

  const lists = release.extraArgsLists;
  const kcm = carryArgs(kcmFlags, facts.controllerManager.extraFlags.provenance, {
    component: 'kube-controller-manager',
    deniedRule: 'apiserver.extra-arg-denied',
    denied: CONTROLLER_MANAGER_DENIED_ARGS,
    lists,
  });
  const sched = carryArgs(schedFlags, facts.scheduler.extraFlags.provenance, {
    component: 'kube-scheduler',
    deniedRule: 'apiserver.extra-arg-denied',
    denied: SCHEDULER_DENIED_ARGS,
    lists,
  });
  const etcdArgs = carryArgs(facts.etcd.extraArgs.value ?? [], facts.etcd.extraArgs.provenance, {
    component: 'etcd',
    deniedRule: 'etcd.extra-args',
    denied: ETCD_DENIED_ARGS,
    lists,
  });
  notes.push(...kcm.notes, ...sched.notes, ...etcdArgs.notes);
  if (facts.etcd.extraArgs.value === undefined) {
    notes.push({
      severity: 'info',
      message: `etcd flags were not seen (${facts.etcd.extraArgs.missing ?? 'no etcd manifests'}); none are carried`,
    });
  }

  const minEtcd = minEtcdMinorFor(release);
  const running = parseVersion(etcdVersion);
  const required = minEtcd === undefined ? undefined : parseVersion(minEtcd);
  if (running && required && compareMinor(running, required) < 0) {
    notes.push({
      severity: 'warning',
      message: `the cluster runs etcd ${etcdVersion}; Talos ${release.minor} runs etcd with ${minEtcd}-only flags, so the pinned image cannot start there — upgrade etcd to ${minEtcd} first or target an older Talos (etcd.version-too-old)`,
    });
  }
  const etcdImage = pinnedEtcdImage(release, etcdVersion);
  notes.push({
    severity: 'info',
    message: `etcd is pinned to ${etcdImage} (the cluster's version) while kubeadm members remain; drop cluster.etcd.image after the last kubeadm member is gone to return to Talos's default ${release.etcdVersion}`,
  });

  const cpSplit = splitShapes(cps);
  const workerSplit = splitShapes(workers);
  const scheduling = controlPlaneScheduling(cps, notes);
  // The same planner the audit runs (etcd.member-name-collision, nodes.name-reuse).
  const hostnames = planControlPlaneHostnames(cps, plan.forbidden);
  const replacements: ControlPlaneReplacement[] = cps.map((cp, i) => ({
    replaces: cp.name,
    hostname: sourced(hostnames[i]!.hostname, plan.forbiddenSources, `hostname rule: ${plan.rule.value}`),
    own: cpSplit.own.get(cp.name) ?? { labels: {}, taints: {} },
  }));
  const groups = workerGroups(workers, workerSplit.own);
  if (workers.some((w) => mayEqualStableHostname(w.name))) {
    notes.push({
      severity: 'warning',
      message:
        'some kubeadm nodes are already named talos-…; check that no Talos stable hostname collides with them (nodes.name-reuse)',
    });
  }

  const proxyImage = proxyDs?.image ? repoOf(proxyDs.image) : siblingRepo(facts, 'kube-proxy');
  const kubeProxyDisabled = proxyDs === null;
  if (!kubeProxyDisabled && facts.cni.ciliumKubeProxyReplacement.value === 'true') {
    notes.push({
      severity: 'warning',
      message:
        'Cilium replaces kube-proxy but a kube-proxy DaemonSet also runs; ferry keeps kube-proxy enabled as found (addons.kube-proxy-conflict)',
    });
  }
  const values: TalosValues = {
    release,
    kubernetesVersion: k8s,
    clusterName: sourced(name, facts.cluster.name.provenance),
    endpoint,
    endpointHost: ep.host,
    apiPort: apiPort(facts),
    podSubnets: sourced(pods, facts.network.podSubnets.provenance),
    serviceSubnets: sourced(services, facts.network.serviceSubnets.provenance),
    dnsDomain: sourced(domain, facts.network.dnsDomain.provenance),
    nodeCidrMaskSize: facts.network.nodeCidrMaskSize.value
      ? sourced(facts.network.nodeCidrMaskSize.value, facts.network.nodeCidrMaskSize.provenance)
      : undefined,
    images: {
      apiserver: image(facts, 'kube-apiserver', k8s),
      controllerManager: image(facts, 'kube-controller-manager', k8s),
      scheduler: image(facts, 'kube-scheduler', k8s),
      kubelet: sourced(
        `${TALOS_KUBELET_IMAGE}:${k8s.value}`,
        k8s.sources,
        'the Talos kubelet build of the Kubernetes version',
      ),
      proxy: sourced(`${proxyImage}:${k8s.value}`, k8s.sources),
    },
    apiserver,
    controllerManager: { args: kcm.args },
    scheduler: { args: sched.args },
    etcd: {
      image: sourced(
        etcdImage,
        facts.etcd.version.provenance,
        // docs/knowledge/talos.md §10.6
        'pinned to the cluster etcd version during the mixed period',
      ),
      args: etcdArgs.args,
    },
    kubeProxyDisabled: sourced(
      kubeProxyDisabled,
      facts.kubeProxy.daemonSet.provenance,
      kubeProxyDisabled
        ? 'the cluster runs without kube-proxy (Cilium replaces it): Talos must not create one'
        : 'the cluster runs kube-proxy: Talos leaves the existing DaemonSet alone',
    ),
    coreDnsDisabled: sourced(
      true,
      facts.network.kubeDnsIPs.provenance,
      "DNS is left to the cluster's existing deployment (addons.coredns-conflict)",
    ),
    cniNone: sourced(
      true,
      facts.cni.plugin.provenance,
      `the cluster's CNI (${facts.cni.plugin.value ?? 'unknown'}) stays; Talos must not deploy flannel (cni.talos-default-flannel)`,
    ),
    kubePrism: kubePrism(facts),
    kubelet,
    controlPlane: {
      allowScheduling: scheduling.allowScheduling,
      excludeFromLoadBalancers: scheduling.excludeFromLoadBalancers,
      common: cpSplit.common,
      replacements,
    },
    workers: { common: workerSplit.common, groups, nodes: workers.map((w) => w.name) },
    hostnameRule: plan.rule,
  };
  return { kind: 'ok', values, notes };
}

function kubernetesVersion(
  facts: Facts,
  missing: MissingInput[],
  notes: GenerateNote[],
): Sourced<string> | undefined {
  const t = facts.target;
  const v = t.kubernetesVersion;
  if (!v) {
    missing.push({
      what: 'the Kubernetes version for the Talos nodes',
      why: "the cluster's version could not be derived, and Talos images are tagged by it",
      provideWith: '--kubernetes-version vX.Y.Z',
    });
    return undefined;
  }
  const choice = t.choices.find((c) => c.field === 'kubernetesVersion');
  const sources: SourceRef[] =
    choice?.origin === 'cluster'
      ? facts.cluster.kubernetesVersion.provenance
      : [{ kind: 'derived', from: [], note: '--kubernetes-version' }];
  if (!kubernetesInTalosWindow(t.talos, v)) {
    notes.push({
      severity: 'warning',
      message: `Kubernetes ${v} is outside what Talos ${t.talosVersion} supports (${t.talos.kubernetesMin} – ${t.talos.kubernetesMaxMinor}.x) (version.k8s-outside-talos-window)`,
    });
  }
  return sourced(v, sources);
}

function apiPort(facts: Facts): Sourced<number> | undefined {
  const cps = facts.nodes.controlPlane.value ?? [];
  const ports = new Set(cps.map((c) => c.apiserverPort).filter((p): p is number => p !== null));
  const port = [...ports][0];
  if (ports.size !== 1 || port === undefined) return undefined;
  return sourced(port, facts.nodes.controlPlane.provenance, 'the port the kubeadm apiservers listen on');
}

function kubePrism(facts: Facts): Sourced<{ enabled: boolean; port: number }> {
  const choice = facts.target.choices.find((c) => c.field === 'kubeprism');
  const on = facts.target.kubeprism === 'on';
  return sourced(
    { enabled: on, port: KUBEPRISM.port },
    [
      {
        kind: 'derived',
        from: [],
        note:
          choice?.origin === 'flag'
            ? `--kubeprism ${facts.target.kubeprism}`
            : 'target default: KubePrism on',
      },
    ],
    on
      ? 'Talos nodes reach the apiservers through 127.0.0.1:7445; every kubeadm apiserver certificate needs 127.0.0.1 (kubeadm/10-apiserver-sans.sh)'
      : 'KubePrism off during the mixed period (--kubeprism off)',
  );
}

/** Image for a control-plane component: the repository the cluster pulls it from, tagged with the target version. */
function image(
  facts: Facts,
  component: 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler',
  k8s: Sourced<string>,
): Sourced<string> {
  const instances =
    component === 'kube-apiserver'
      ? facts.apiserver.instances
      : component === 'kube-controller-manager'
        ? facts.controllerManager.instances
        : facts.scheduler.instances;
  const running = instances.value?.find((i) => i.image)?.image;
  if (running) {
    return sourced(
      `${repoOf(running)}:${k8s.value}`,
      [...instances.provenance.slice(0, 1), ...k8s.sources],
      'the repository the cluster pulls it from',
    );
  }
  return sourced(`${siblingRepo(facts, component)}:${k8s.value}`, k8s.sources);
}

/** registry/path/name of an image reference, without tag or digest. */
export function repoOf(ref: string): string {
  const noDigest = ref.split('@')[0] ?? ref;
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  return colon > slash ? noDigest.slice(0, colon) : noDigest;
}

/** Same registry as the running apiserver image, else kubeadm's default registry.k8s.io. */
function siblingRepo(facts: Facts, name: string): string {
  const api = facts.apiserver.instances.value?.find((i) => i.image)?.image;
  if (api) {
    const repo = repoOf(api);
    return `${repo.slice(0, repo.lastIndexOf('/') + 1)}${name}`;
  }
  return `registry.k8s.io/${name}`;
}
