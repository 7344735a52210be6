/**
 * The traps the example carries: what each is, where its evidence lives, which audit rule finds it and
 * what fixes it. The README table is rendered from this list; the tests check each one's evidence in
 * the generated files and that the audit reports it.
 */

export interface Trap {
  key: string;
  title: string;
  /** file · object · field, one per place the evidence lives. */
  where: string[];
  ruleIds: string[];
  fix: string;
}

export const TRAPS: readonly Trap[] = [
  {
    key: 'san-loopback',
    title: 'apiserver serving certificate without `127.0.0.1` / `localhost`',
    where: ['`pki/apiserver.crt` · subjectAltName (kubeadm defaults + `k8s-api.lab.example`, `10.20.0.10`)'],
    ruleIds: ['apiserver.san-loopback'],
    fix: 'Re-issue each kubeadm apiserver certificate with `127.0.0.1` and `localhost` in `apiServer.certSANs` (`kubeadm init phase certs apiserver`, one control plane at a time), or disable KubePrism while old and new control planes coexist.',
  },
  {
    key: 'oidc',
    title: 'OIDC login configured through apiserver flags',
    where: [
      '`kubeadm-config.yaml` · ClusterConfiguration · `apiServer.extraArgs[oidc-issuer-url, oidc-client-id, oidc-username-claim, oidc-groups-claim]`',
      '`manifests/cp-*/kube-apiserver.yaml` · `--oidc-*` flags',
    ],
    ruleIds: ['apiserver.oidc'],
    fix: 'Carry the `oidc-*` flags into the Talos apiserver extraArgs (≤ v1.13); for v1.14 express them as a `jwt` authenticator in `KubeAuthenticationConfig`.',
  },
  {
    key: 'extra-args',
    title: 'Component flags that Talos defaults would silently drop, several pointing at host files',
    where: [
      '`kubeadm-config.yaml` · ClusterConfiguration · `apiServer.extraArgs[audit-*, encryption-provider-config]` + `extraVolumes`',
      '`kubeadm-config.yaml` · `controllerManager.extraArgs`, `scheduler.extraArgs` (`bind-address=0.0.0.0`), `etcd.local.extraArgs` (`listen-metrics-urls`)',
    ],
    ruleIds: ['apiserver.extra-args-carryover', 'etcd.extra-args'],
    fix: 'Generate the matching extraArgs (and the audit policy file) for Talos; list every flag that is dropped.',
  },
  {
    key: 'sa-issuer',
    title: "kubeadm's default service-account issuer",
    where: [
      '`manifests/cp-*/kube-apiserver.yaml` · `--service-account-issuer=https://kubernetes.default.svc.cluster.local`',
    ],
    ruleIds: ['apiserver.sa-issuer'],
    fix: 'Before the first Talos control plane, prepend the Talos issuer (`https://k8s-api.lab.example:6443`) on every kubeadm apiserver and keep the old one accepted (v1.13 extraArgs lists, v1.14 `KubeServiceAccountConfig.accepted`); restart pods afterwards.',
  },
  {
    key: 'encryption-key-name',
    title: 'aescbc encryption key named `key-2023` (Talos ≤ v1.13 fixes the name `key1`)',
    where: [
      '`encryption-config.yaml` · EncryptionConfiguration · `resources[0].providers[0].aescbc.keys[0].name` (then `identity`)',
      '`manifests/cp-*/kube-apiserver.yaml` · `--encryption-provider-config`',
    ],
    ruleIds: ['encryption.key-name'],
    fix: "Rotate the kubeadm side to secretbox `key2`, as the kit's rotation does (add as read key, make it the write key, rewrite all Secrets: `kubeadm/30-encryption-phase1.sh`, `31-encryption-phase2.sh`, `32-reencrypt.sh`), before bundling it; on v1.14 copy the configuration verbatim into `KubeEtcdEncryptionConfig`.",
  },
  {
    key: 'anonymous-health',
    title: 'External load-balancer health check depends on anonymous `/healthz`',
    where: [
      '`resources/rbac.yaml` · ClusterRoleBinding `lb-healthcheck` · `subjects` (`system:anonymous`, `system:unauthenticated`); ClusterRoleBinding `system:public-info-viewer`',
      '`audit.log` · `user.username=system:anonymous`, `userAgent=haproxy-healthcheck`, `requestURI=/healthz` from 10.20.0.5 / 10.20.0.6',
      '`manifests/cp-*/kube-apiserver.yaml` · no `--anonymous-auth` (defaults to true)',
    ],
    ruleIds: ['apiserver.anonymous-auth-dependents'],
    fix: 'Switch the haproxy checks to TCP or to an authenticated check; on ≤ v1.13 set `anonymous-auth: "true"` in the Talos apiserver extraArgs; on v1.14 keep the generated `KubeAuthenticationConfig` (anonymous on health paths only).',
  },
  {
    key: 'hostpath-cacert',
    title: 'CSI node plugin mounts hostPath `/etc/cacert`',
    where: [
      '`resources/daemonsets.yaml` · DaemonSet `kube-system/csi-cinder-nodeplugin` · `spec.template.spec.volumes[cacert].hostPath.path`',
    ],
    ruleIds: ['workload.hostpath-absent', 'workload.csi-driver'],
    fix: 'Ship the OpenStack CA as a Secret/ConfigMap mounted into the plugin (or place it under `/var` with a machine-config file and mount that); verify the driver on a canary Talos node.',
  },
  {
    key: 'hostpath-cloud-conf',
    title: 'Workload reads `/etc/kubernetes/cloud.conf` from the host',
    where: [
      '`resources/deployments.yaml` · Deployment `kube-system/csi-cinder-controllerplugin` · `spec.template.spec.volumes[cloud-config].hostPath.path`',
    ],
    ruleIds: ['workload.hostpath-absent'],
    fix: 'Move `cloud.conf` into a Secret (the chart supports it) before any Talos control plane runs this pod: `/etc/kubernetes` on Talos is managed by Talos and has no `cloud.conf`.',
  },
  {
    key: 'cp-schedulable',
    title: 'Control planes are schedulable (taint removed) and run application pods',
    where: [
      '`resources/nodes.json` · Node `cp-1`..`cp-3` · `spec.taints` absent',
      '`kubeadm-config.yaml` · InitConfiguration · `nodeRegistration.taints: []`',
      '`resources/pods.yaml` · e.g. `shop/frontend-*` on `cp-1`, `apps/wiki-*` on `cp-3`',
    ],
    ruleIds: ['nodes.cp-schedulable'],
    fix: 'Decide explicitly: `cluster.allowSchedulingOnControlPlanes: true` (v1.13) / no taint in `KubeNodeConfig` (v1.14), or plan for the lost capacity.',
  },
  {
    key: 'single-replica',
    title: 'One-replica Deployment without a PodDisruptionBudget',
    where: ['`resources/deployments.yaml` · Deployment `apps/wiki` · `spec.replicas: 1`; no PDB in `apps`'],
    ruleIds: ['workload.pdb-missing'],
    fix: 'Scale to 2 and add a PDB, or accept (and announce) the outage when its node drains. The audit also lists the add-ons kubeadm and the Cilium chart install without PDBs (coredns, cilium-operator, csi-cinder-controllerplugin).',
  },
  {
    key: 'pdb-blocking',
    title: 'PodDisruptionBudget that allows no disruption',
    where: [
      '`resources/pdbs.yaml` · PodDisruptionBudget `shop/checkout` · `spec.minAvailable: 2` = Deployment replicas, `status.disruptionsAllowed: 0`',
    ],
    ruleIds: ['workload.pdb-blocking'],
    fix: 'Scale `shop/checkout` to 3 (or use `maxUnavailable: 1`) before the roll; drains of `worker-1` and `worker-4` otherwise hang.',
  },
  {
    key: 'cilium-update-strategy',
    title: 'Cilium agent on RollingUpdate with `maxUnavailable: 2`',
    where: ['`resources/daemonsets.yaml` · DaemonSet `kube-system/cilium` · `spec.updateStrategy`'],
    ruleIds: ['cni.cilium-update-strategy'],
    fix: 'Change Cilium values as a deliberate pre-step with `maxUnavailable: 1`, gating on agent readiness: every values change restarts every agent.',
  },
  {
    key: 'cilium-values',
    title: 'Cilium values that differ from what Talos needs',
    where: [
      '`resources/daemonsets.yaml` · DaemonSet `kube-system/cilium` · agent `securityContext.capabilities.add` includes `SYS_MODULE`; init container `mount-cgroup`',
      '`resources/configmaps.yaml` · ConfigMap `kube-system/cilium-config` · `cgroup-root=/run/cilium/cgroupv2`, `k8s-service-host=k8s-api.lab.example`, `k8s-service-port=6443`',
    ],
    ruleIds: ['cni.cilium-values'],
    fix: 'Before migrating, roll out values that work on both node types: drop `SYS_MODULE`, `cgroup.autoMount.enabled=false` with `cgroup.hostRoot=/sys/fs/cgroup`, keep `k8sServiceHost` on the load-balancer endpoint (not KubePrism).',
  },
  {
    key: 'kube-proxy-replacement',
    title: 'No kube-proxy: Cilium kube-proxy replacement, and Cilium is the CNI',
    where: [
      '`kubeadm-config.yaml` · ClusterConfiguration · `proxy.disabled: true`',
      '`resources/configmaps.yaml` · ConfigMap `kube-system/cilium-config` · `kube-proxy-replacement: "true"`; no DaemonSet `kube-system/kube-proxy`',
    ],
    ruleIds: ['addons.kube-proxy-conflict', 'cni.talos-default-flannel'],
    fix: 'Disable kube-proxy (`cluster.proxy.disabled: true` / `KubeProxyConfig.enabled: false`) and set the CNI to none (`cluster.network.cni.name: none` / no `KubeFlannelCNIConfig`).',
  },
  {
    key: 'coredns-custom',
    title: 'Customised CoreDNS Corefile (stub domain `lab.example`)',
    where: ['`resources/configmaps.yaml` · ConfigMap `kube-system/coredns` · `data.Corefile`'],
    ruleIds: ['addons.coredns-conflict'],
    fix: 'Disable Talos-managed CoreDNS (`cluster.coreDNS.disabled: true` / `KubeCoreDNSConfig.enabled: false`) so the next `upgrade-k8s` does not overwrite the Corefile.',
  },
  {
    key: 'etcd-version',
    title:
      'etcd 3.5.16: below 3.5.26 (learner bug once Talos ≥ v1.11 adds a 3.6 member), two minors behind Talos v1.14 (3.7)',
    where: [
      '`etcd/version.json` · `etcdserver`; `etcd/endpoint-status.json` · `Status.version`',
      '`manifests/cp-*/etcd.yaml` · image `registry.k8s.io/etcd:3.5.16-0`',
    ],
    ruleIds: ['etcd.version-learner-bug', 'etcd.version-skew'],
    fix: 'Patch the kubeadm etcd to 3.5.26+ first, and pin `cluster.etcd.image` to a 3.5 image on Talos until every kubeadm member is gone.',
  },
  {
    key: 'bootstrap-token',
    title: 'The only bootstrap token expires after 24 h and carries kubeadm groups',
    where: [
      '`resources/bootstrap-token.yaml` · Secret `kube-system/bootstrap-token-abcdef` · `data.expiration`, `data.auth-extra-groups`',
    ],
    ruleIds: ['bootstrap.token-ttl', 'bootstrap.token-groups'],
    fix: 'Create the token for Talos with `kubeadm token create --ttl 0` and keep the kubeadm bootstrap RBAC until the last node is migrated.',
  },
  {
    key: 'kubelet-config',
    title: 'Kubelet settings that Talos defaults would replace',
    where: [
      '`resources/configmaps.yaml` · ConfigMap `kube-system/kubelet-config` · `maxPods`, `systemReserved`, `kubeReserved`, `evictionHard`, `shutdownGracePeriod*`',
    ],
    ruleIds: ['kubelet.config-carryover'],
    fix: 'Carry them into `machine.kubelet.extraConfig` (v1.14 `KubeletConfig.config`).',
  },
  {
    key: 'node-labels',
    title: 'Workload pinned by a custom node label',
    where: [
      '`resources/statefulsets.yaml` · StatefulSet `shop/postgres` · `spec.template.spec.nodeSelector[lab.example/pool]=data`',
      '`resources/nodes.json` · Node `worker-3`..`worker-5` · `metadata.labels[lab.example/pool]`',
    ],
    ruleIds: ['nodes.labels-taints-carryover'],
    fix: "Put `lab.example/pool` into the replacement nodes' labels (`machine.nodeLabels` / `KubeNodeConfig.labels`).",
  },
  {
    key: 'bare-pod',
    title: 'Bare pod with `NET_ADMIN` in an unlabelled namespace',
    where: [
      '`resources/pods.yaml` · Pod `default/netshoot` · no `ownerReferences`; `capabilities.add: [NET_ADMIN, NET_RAW]`',
    ],
    ruleIds: ['workload.undrainable-pods', 'apiserver.podsecurity-default'],
    fix: 'Delete it or turn it into a Deployment; label `default` with a PodSecurity level (Talos enforces `baseline` cluster-wide, which rejects `NET_ADMIN`).',
  },
];
