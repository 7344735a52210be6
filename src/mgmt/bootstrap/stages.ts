/**
 * The stages of `ferry mgmt bootstrap`, in order, as a discriminated union: each carries the exact
 * commands it runs (what `--dry-run` prints) and what its handler needs besides. Building the list
 * is pure; run.ts runs it, one handler per kind.
 */

import { join } from 'node:path';
import { stringify } from 'yaml';
import { names } from '../../generate/capi/objects.js';
import {
  componentsUrl,
  HA_CONTROLLER_REPLICAS,
  PROVIDERS,
  type ProviderFacts,
  type ProviderType,
  providerFacts,
} from '../../knowledge/capi-providers.js';
import { CILIUM_ON_TALOS } from '../../knowledge/talos-config.js';
import type { ToolName } from '../tools/versions.js';
import type { Chart, MgmtConfig, SecretSource } from './config.js';
import {
  CAPV_NAMESPACE,
  credentialsNamespace,
  credentialsSecretName,
  managementManifests,
  toYamlStream,
} from './manifests.js';

export const STAGE_KINDS = [
  'kind-cluster',
  'clusterctl-config',
  'clusterctl-init',
  'credentials',
  'manifests',
  'wait-control-plane',
  'fetch-secrets',
  'cni',
  'ccm',
  'wait-nodes',
  'cert-manager',
  'capi-operator',
  'pivot-export',
  'pause-source',
  'pivot-import',
  'delete-kind',
] as const;
export type StageKind = (typeof STAGE_KINDS)[number];

/** One command, as ferry runs it and as an operator could type it. */
export interface Cmd {
  tool: ToolName;
  args: string[];
  env?: Record<string, string>;
  /** Text on stdin, or the credentials Secret, which is built only when the stage runs. */
  stdin?: string | { credentialsSecret: true };
  /** What `--dry-run` prints instead, when running it needs a secret ferry reads at run time. */
  shown?: string;
  /** The command prints a secret (a kubeconfig): never journaled. */
  secretOutput?: boolean;
}

export interface StatePaths {
  dir: string;
  journal: string;
  kindKubeconfig: string;
  clusterctlConfig: string;
  xdg: string;
  manifests: string;
  mgmtKubeconfig: string;
  talosconfig: string;
  moveDir: string;
}

export function statePaths(dir: string, cluster: string): StatePaths {
  return {
    dir,
    journal: join(dir, 'bootstrap.journal.sqlite'),
    kindKubeconfig: join(dir, 'kind.kubeconfig'),
    clusterctlConfig: join(dir, 'clusterctl.yaml'),
    xdg: join(dir, 'xdg'),
    manifests: join(dir, `${cluster}.capi.yaml`),
    mgmtKubeconfig: join(dir, `${cluster}.kubeconfig`),
    talosconfig: join(dir, `${cluster}.talosconfig`),
    moveDir: join(dir, 'move'),
  };
}

interface Base {
  title: string;
  commands: Cmd[];
}

export type Stage =
  | (Base & { kind: 'kind-cluster'; name: string })
  | (Base & { kind: 'clusterctl-config'; path: string; text: string })
  | (Base & {
      kind: 'clusterctl-init';
      kindName: string;
      providers: { type: string; name: string; version: string }[];
    })
  | (Base & { kind: 'credentials'; secretName: string })
  | (Base & { kind: 'manifests'; path: string; text: string; objects: Record<string, unknown>[] })
  | (Base & {
      kind: 'wait-control-plane';
      tcp: string;
      get: Cmd;
      describe: Cmd;
      timeoutSeconds: number;
    })
  | (Base & {
      kind: 'fetch-secrets';
      files: { cmd: Cmd; path: string; what: string }[];
    })
  | (Base & { kind: 'cni' })
  | (Base & { kind: 'ccm' })
  | (Base & {
      kind: 'wait-nodes';
      tcp: string;
      replicas: number;
      get: Cmd;
      describe: Cmd;
      timeoutSeconds: number;
    })
  | (Base & { kind: 'cert-manager' })
  | (Base & { kind: 'capi-operator' })
  | (Base & {
      kind: 'pivot-export';
      listSecrets: Cmd;
      labelPrefix: string;
      labelArgs: string[];
      kubeconfig: string;
    })
  | (Base & { kind: 'pause-source' })
  | (Base & { kind: 'pivot-import'; verify: Cmd })
  | (Base & { kind: 'delete-kind' });

export const MOVE_LABEL_ARG = 'clusterctl.cluster.x-k8s.io/move=';

export type { ProviderType };

/** A provider pinned to one release: its `clusterctl init` flag and its components URL (never `latest`). */
export interface ProviderPin {
  type: ProviderType;
  flag: string;
  name: string;
  version: string;
  url: string;
}

export const PROVIDER_FLAGS: Record<ProviderType, string> = {
  CoreProvider: '--core',
  BootstrapProvider: '--bootstrap',
  ControlPlaneProvider: '--control-plane',
  InfrastructureProvider: '--infrastructure',
  IPAMProvider: '--ipam',
};

/** The pin of a provider ferry knows, or undefined (a provider ferry cannot pin is not installed blindly). */
export function pinProvider(type: string, name: string, version: string): ProviderPin | undefined {
  const p = providerFacts(type, name);
  if (!p) return undefined;
  return { type: p.type, flag: PROVIDER_FLAGS[p.type], name, version, url: componentsUrl(p, version) };
}

export const KNOWN_PROVIDERS = PROVIDERS.map((p) => `${p.type}/${p.name}`);

function providerList(c: MgmtConfig): ProviderPin[] {
  const v = c.providers;
  const pins: [ProviderType, string, string][] = [
    ['CoreProvider', 'cluster-api', v.core],
    ['BootstrapProvider', 'talos', v.bootstrapTalos],
    ['ControlPlaneProvider', 'talos', v.controlPlaneTalos],
    ['InfrastructureProvider', c.infrastructure.kind, v.infrastructure],
    ['IPAMProvider', 'in-cluster', v.ipamInCluster],
  ];
  return pins.map(([t, n, ver]) => pinProvider(t, n, ver)!);
}

/** clusterctl.yaml for pinned providers; cert-manager pinned when the version is known. */
export function clusterctlYamlFor(
  providers: ProviderPin[],
  o: {
    origin: string;
    certManager?: string | undefined;
    imageRepository?: string | undefined;
    variables?: Record<string, string>;
  },
): string {
  const doc: Record<string, unknown> = {
    ...o.variables,
    providers: providers.map((p) => ({ name: p.name, url: p.url, type: p.type })),
  };
  if (o.certManager !== undefined) doc['cert-manager'] = { version: o.certManager };
  if (o.imageRepository !== undefined) doc['images'] = { all: { repository: o.imageRepository } };
  return `# written by ${o.origin}\n${stringify(doc)}`;
}

/**
 * The variables CAPV's components and templates read (mgmt.md §5). The manager-wide fallback
 * credentials are set empty on purpose: CAPV then uses only the VSphereClusterIdentity, whose Secret
 * ferry creates from stdin, and no password sits in clusterctl.yaml or on a command line.
 */
export function vsphereVariables(c: MgmtConfig): Record<string, string> {
  const v = c.infrastructure;
  if (v.kind !== 'vsphere') return {};
  return {
    VSPHERE_SERVER: v.server,
    VSPHERE_TLS_THUMBPRINT: v.thumbprint,
    VSPHERE_DATACENTER: v.datacenter,
    VSPHERE_DATASTORE: v.datastore,
    VSPHERE_NETWORK: v.network,
    VSPHERE_TEMPLATE: v.template,
    VSPHERE_USERNAME: '',
    VSPHERE_PASSWORD: '',
  };
}

/** clusterctl.yaml: every provider pinned to a release URL (never `latest`), cert-manager pinned, images. */
export function clusterctlYaml(c: MgmtConfig): string {
  return clusterctlYamlFor(providerList(c), {
    origin: `ferry mgmt bootstrap from ${c.file}`,
    certManager: c.certManager.version,
    imageRepository: c.imageRepository,
    variables: vsphereVariables(c),
  });
}

export function kindConfig(c: MgmtConfig): string {
  return kindConfigFor(c.kind.name, c.kind.image);
}

export function kindConfigFor(name: string, image?: string): string {
  const node: Record<string, unknown> = { role: 'control-plane' };
  if (image !== undefined) node['image'] = image;
  return stringify({ kind: 'Cluster', apiVersion: 'kind.x-k8s.io/v1alpha4', name, nodes: [node] });
}

function ciliumValues(): string {
  // Talos's Cilium settings (mgmt.md §3): no kube-proxy, KubePrism on localhost:7445, cgroups mounted by Talos.
  return stringify({
    ipam: { mode: 'kubernetes' },
    kubeProxyReplacement: true,
    k8sServiceHost: 'localhost',
    k8sServicePort: 7445,
    // The same Talos-specific values ferry generates for migrated clusters.
    cgroup: CILIUM_ON_TALOS.cgroup,
    securityContext: { capabilities: CILIUM_ON_TALOS.capabilities },
  });
}

function ccmValues(): string {
  return stringify({
    enabledControllers: ['cloud-node', 'node-csr-approval'],
    replicaCount: 1,
    daemonSet: { enabled: false },
    nodeSelector: { 'node-role.kubernetes.io/control-plane': '' },
    tolerations: [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' }],
  });
}

const CONTROL_PLANE_ROLE = 'node-role.kubernetes.io/control-plane';
const HOSTNAME = 'kubernetes.io/hostname';
/** The labels the operator chart puts on its pods (release `capi-operator`, chart `cluster-api-operator`). */
export const OPERATOR_POD_LABELS = {
  'app.kubernetes.io/name': 'cluster-api-operator',
  'app.kubernetes.io/instance': 'capi-operator',
};

/**
 * Where a controller's pods go: on the control planes (they carry the taint when there are
 * workers), never two on one node. Required, not preferred: two replicas on one node is one
 * failure away from none, and with HA_CONTROLLER_REPLICAS below the control-plane count a
 * rollout's surge pod still has a node.
 */
function placement(podLabels: Record<string, string>) {
  return {
    nodeSelector: { [CONTROL_PLANE_ROLE]: '' },
    tolerations: [{ key: CONTROL_PLANE_ROLE, operator: 'Exists', effect: 'NoSchedule' }],
    affinity: {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { topologyKey: HOSTNAME, labelSelector: { matchLabels: podLabels } },
        ],
      },
    },
  };
}

/**
 * A provider's `spec.deployment` (operator.cluster.x-k8s.io/v1alpha2 DeploymentSpec): replicas,
 * placement, and its manager's leader-election flag set explicitly — the operator writes
 * `containers[].args` as FLAG=VALUE onto the named container.
 */
export function providerDeployment(p: ProviderFacts) {
  return {
    replicas: HA_CONTROLLER_REPLICAS,
    ...placement({ 'cluster.x-k8s.io/provider': p.podLabel }),
    containers: [{ name: 'manager', args: { [p.leaderElectFlag]: 'true' } }],
  };
}

function operatorValues(c: MgmtConfig): string {
  const v = c.providers;
  const entry = (type: ProviderType, name: string, version: string) => ({
    version,
    createNamespace: true,
    deployment: providerDeployment(providerFacts(type, name)!),
  });
  // bootstrap/controlPlane must be named, or the chart adds kubeadm ones (capi.md §6).
  return stringify({
    // The controllers run on the infrastructure they upgrade: never a single replica (mgmt.md §9, §10).
    replicaCount: HA_CONTROLLER_REPLICAS,
    leaderElection: { enabled: true },
    ...placement(OPERATOR_POD_LABELS),
    core: { 'cluster-api': entry('CoreProvider', 'cluster-api', v.core) },
    bootstrap: { talos: entry('BootstrapProvider', 'talos', v.bootstrapTalos) },
    controlPlane: { talos: entry('ControlPlaneProvider', 'talos', v.controlPlaneTalos) },
    // CAPV reads a VSphereClusterIdentity's Secret from its own namespace; clusterctl move brings it to capv-system.
    infrastructure: {
      [c.infrastructure.kind]:
        c.infrastructure.kind === 'vsphere'
          ? {
              ...entry('InfrastructureProvider', c.infrastructure.kind, v.infrastructure),
              namespace: CAPV_NAMESPACE,
            }
          : entry('InfrastructureProvider', c.infrastructure.kind, v.infrastructure),
    },
    ipam: { 'in-cluster': entry('IPAMProvider', 'in-cluster', v.ipamInCluster) },
  });
}

function helm(
  release: string,
  ns: string,
  chart: Chart,
  kubeconfig: string,
  extra: string[],
  values?: string,
): Cmd {
  const args = ['upgrade', '--install', release, chart.chart, '--version', chart.version];
  if (chart.repo !== undefined) args.push('--repo', chart.repo);
  args.push(
    '--namespace',
    ns,
    '--create-namespace',
    '--kubeconfig',
    kubeconfig,
    '--wait',
    '--timeout',
    '10m',
    ...extra,
  );
  if (values !== undefined) args.push('-f', '-');
  return values === undefined ? { tool: 'helm', args } : { tool: 'helm', args, stdin: values };
}

export const OPERATOR_PROVIDER_KINDS = [
  'coreproviders',
  'bootstrapproviders',
  'controlplaneproviders',
  'infrastructureproviders',
  'ipamproviders',
] as const;

export interface PlanOptions {
  waitTimeoutSeconds: number;
  providerTimeoutSeconds: number;
}

type StageOf<K extends StageKind> = Extract<Stage, { kind: K }>;

/** The ephemeral kind cluster with a private kubeconfig, Ready checked by ferry (bootstrap and restore). */
export function kindClusterStage(o: {
  name: string;
  config: string;
  kubeconfig: string;
}): StageOf<'kind-cluster'> {
  const kk = o.kubeconfig;
  return {
    kind: 'kind-cluster',
    title: `ephemeral kind cluster ${o.name}`,
    name: o.name,
    commands: [
      {
        tool: 'kind',
        // A private kubeconfig: kind would otherwise switch the operator's current context (mgmt.md §1).
        args: ['create', 'cluster', '--name', o.name, '--kubeconfig', kk, '--config', '-', '--wait', '5m'],
        stdin: o.config,
      },
      // --wait expiring still exits 0 (mgmt.md §1): check Ready ourselves.
      {
        tool: 'kubectl',
        args: ['--kubeconfig', kk, 'wait', '--for=condition=Ready', 'nodes', '--all', '--timeout=300s'],
      },
    ],
  };
}

export function clusterctlConfigStage(
  path: string,
  text: string,
  providers: ProviderPin[],
): StageOf<'clusterctl-config'> {
  return {
    kind: 'clusterctl-config',
    title: `clusterctl.yaml with pinned providers (${providers.map((p) => `${p.name} ${p.version}`).join(', ')})`,
    path,
    text,
    commands: [],
  };
}

/** The environment every clusterctl call gets: no version check, a private config directory (mgmt.md §2). */
export const clusterctlEnv = (xdg: string) => ({
  CLUSTERCTL_DISABLE_VERSIONCHECK: 'true',
  XDG_CONFIG_HOME: xdg,
});

export function clusterctlInitStage(
  providers: ProviderPin[],
  o: { kindName: string; kubeconfig: string; config: string; xdg: string; providerTimeoutSeconds: number },
): StageOf<'clusterctl-init'> {
  return {
    kind: 'clusterctl-init',
    title: `clusterctl init: ${providers.map((p) => `${p.type} ${p.name} ${p.version}`).join(', ')}`,
    kindName: o.kindName,
    providers: providers.map((p) => ({ type: p.type, name: p.name, version: p.version })),
    commands: [
      {
        tool: 'clusterctl',
        args: [
          'init',
          '--config',
          o.config,
          '--kubeconfig',
          o.kubeconfig,
          ...providers.flatMap((p) => [p.flag, `${p.name}:${p.version}`]),
          '--wait-providers',
          '--wait-provider-timeout',
          String(o.providerTimeoutSeconds),
        ],
        env: clusterctlEnv(o.xdg),
      },
    ],
  };
}

/** `<(…)` or a quoted path: where a printed command reads the secret from, never the value itself. */
function secretArg(src: SecretSource): string {
  return src.kind === 'file' ? q(src.path) : `<(printf '%s' "$${src.name}")`;
}

/** The credentials Secret, applied from stdin; what --dry-run prints builds the same one with kubectl. */
function credentialsStage(c: MgmtConfig, kk: string, secretName: string): StageOf<'credentials'> {
  const ns = c.cluster.namespace;
  const sns = credentialsNamespace(c);
  const infra = c.infrastructure;
  const create = (data: string, labels: string) =>
    `kubectl --kubeconfig ${q(kk)} --namespace ${sns} create secret generic ${secretName} ${data} --dry-run=client -o yaml | kubectl label --local -f - ${labels}-o yaml | kubectl --kubeconfig ${q(kk)} apply -f -`;
  let title: string;
  let shown: string;
  switch (infra.kind) {
    case 'proxmox':
      title = `namespace ${ns} and the credentials Secret ${secretName} (label platform.ionos.com/secret-type)`;
      shown = create(
        `--from-literal=url=${q(infra.url)} --from-literal=token=${q(infra.tokenId)} --from-file=secret=${secretArg(infra.tokenSecret)} --from-literal=insecure=${infra.insecure}`,
        `platform.ionos.com/secret-type=proxmox-credentials ${MOVE_LABEL_ARG} `,
      );
      break;
    case 'vsphere':
      title = `namespace ${ns} and the vSphere identity Secret ${sns}/${secretName} (username, password) for the VSphereClusterIdentity ${c.cluster.name}`;
      shown = create(
        `--from-literal=username=${q(infra.username)} --from-file=password=${secretArg(infra.password)}`,
        `${MOVE_LABEL_ARG} `,
      );
      break;
  }
  return {
    kind: 'credentials',
    title,
    secretName,
    commands: [
      {
        tool: 'kubectl',
        args: ['--kubeconfig', kk, 'apply', '-f', '-'],
        stdin: stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
      },
      {
        tool: 'kubectl',
        args: ['--kubeconfig', kk, 'apply', '-f', '-'],
        stdin: { credentialsSecret: true },
        shown,
      },
    ],
  };
}

export function buildStages(c: MgmtConfig, paths: StatePaths, opts: PlanOptions): Stage[] {
  const kk = paths.kindKubeconfig;
  const mk = paths.mgmtKubeconfig;
  const ns = c.cluster.namespace;
  const name = c.cluster.name;
  const ccEnv = clusterctlEnv(paths.xdg);
  const objects = managementManifests(c);
  const tcp = names(name).tcp;
  const describe: Cmd = {
    tool: 'clusterctl',
    args: [
      'describe',
      'cluster',
      name,
      '--namespace',
      ns,
      '--kubeconfig',
      kk,
      '--config',
      paths.clusterctlConfig,
    ],
    env: ccEnv,
  };
  const getTcp = (kubeconfig: string): Cmd => ({
    tool: 'kubectl',
    args: ['--kubeconfig', kubeconfig, '--namespace', ns, 'get', 'taloscontrolplane', tcp, '-o', 'json'],
  });
  const providers = providerList(c);
  const manifestsText = toYamlStream(objects);
  const secretName = credentialsSecretName(c);
  const stages: Stage[] = [
    kindClusterStage({ name: c.kind.name, config: kindConfig(c), kubeconfig: kk }),
    clusterctlConfigStage(paths.clusterctlConfig, clusterctlYaml(c), providers),
    clusterctlInitStage(providers, {
      kindName: c.kind.name,
      kubeconfig: kk,
      config: paths.clusterctlConfig,
      xdg: paths.xdg,
      providerTimeoutSeconds: opts.providerTimeoutSeconds,
    }),
    credentialsStage(c, kk, secretName),
    {
      kind: 'manifests',
      title: `the management cluster's manifests (${objects.map((o) => o.kind).join(', ')}) → ${paths.manifests}`,
      path: paths.manifests,
      text: manifestsText,
      objects,
      commands: [{ tool: 'kubectl', args: ['--kubeconfig', kk, 'apply', '-f', paths.manifests] }],
    },
    {
      kind: 'wait-control-plane',
      // Nodes cannot be Ready before the CNI (the NodeHealthy stall, mgmt.md §2): wait for the API only.
      title: `wait until the control plane ${tcp} answers (status.ready)`,
      tcp,
      get: getTcp(kk),
      describe,
      timeoutSeconds: opts.waitTimeoutSeconds,
      commands: [describe],
    },
    {
      kind: 'fetch-secrets',
      title: `fetch the kubeconfig and talosconfig Secrets → ${mk}, ${paths.talosconfig}`,
      files: [
        {
          what: 'kubeconfig',
          path: mk,
          cmd: {
            tool: 'kubectl',
            args: [
              '--kubeconfig',
              kk,
              '--namespace',
              ns,
              'get',
              'secret',
              `${name}-kubeconfig`,
              '-o',
              'jsonpath={.data.value}',
            ],
            secretOutput: true,
          },
        },
        {
          what: 'talosconfig',
          path: paths.talosconfig,
          cmd: {
            tool: 'kubectl',
            args: [
              '--kubeconfig',
              kk,
              '--namespace',
              ns,
              'get',
              'secret',
              `${name}-talosconfig`,
              '-o',
              'jsonpath={.data.talosconfig}',
            ],
            secretOutput: true,
          },
        },
      ],
      commands: [],
    },
    {
      kind: 'cni',
      title: `Cilium ${c.cni.version} (kube-proxy replacement, KubePrism)`,
      commands: [helm('cilium', 'kube-system', c.cni, mk, [], ciliumValues())],
    },
  ];
  if (c.ccm.kind === 'talos-ccm')
    stages.push({
      kind: 'ccm',
      title: `Talos cloud controller manager ${c.ccm.version}`,
      commands: [helm('talos-cloud-controller-manager', 'kube-system', c.ccm, mk, [], ccmValues())],
    });
  stages.push(
    {
      kind: 'wait-nodes',
      title: `wait until all ${c.cluster.controlPlanes} control planes are ready`,
      tcp,
      replicas: c.cluster.controlPlanes,
      get: getTcp(kk),
      describe,
      timeoutSeconds: opts.waitTimeoutSeconds,
      commands: [describe],
    },
    {
      kind: 'cert-manager',
      title: `cert-manager ${c.certManager.version} on ${name}`,
      commands: [helm('cert-manager', 'cert-manager', c.certManager, mk, ['--set', 'crds.enabled=true'])],
    },
    {
      kind: 'capi-operator',
      title: `the Cluster API operator ${c.operator.version} with the same providers on ${name}`,
      commands: [
        helm('capi-operator', 'capi-operator-system', c.operator, mk, [], operatorValues(c)),
        ...OPERATOR_PROVIDER_KINDS.map(
          (k): Cmd => ({
            tool: 'kubectl',
            args: [
              '--kubeconfig',
              mk,
              'wait',
              '--for=condition=Ready',
              `${k}.operator.cluster.x-k8s.io`,
              '--all',
              '--all-namespaces',
              `--timeout=${opts.providerTimeoutSeconds}s`,
            ],
          }),
        ),
      ],
    },
    {
      kind: 'pivot-export',
      title: `clusterctl move --to-directory ${paths.moveDir} (from kind; the operator keeps no inventory: H15)`,
      kubeconfig: kk,
      // Secrets of the cluster without an ownerRef would stay behind (H14): label them for the move.
      listSecrets: {
        tool: 'kubectl',
        args: ['--kubeconfig', kk, '--namespace', ns, 'get', 'secrets', '-o', 'name'],
      },
      labelPrefix: `secret/${name}-`,
      labelArgs: ['--kubeconfig', kk, '--namespace', ns, 'label', '--overwrite'],
      commands: [
        {
          tool: 'clusterctl',
          args: [
            'move',
            '--kubeconfig',
            kk,
            '--config',
            paths.clusterctlConfig,
            '--namespace',
            ns,
            '--to-directory',
            paths.moveDir,
          ],
          env: ccEnv,
        },
      ],
    },
    {
      kind: 'pause-source',
      // --to-directory unpauses the source (capi.md §5.1): two sets of controllers must not reconcile one cluster.
      title: `pause ${name} in kind, so that only the new cluster's controllers reconcile it`,
      commands: [
        {
          tool: 'kubectl',
          args: [
            '--kubeconfig',
            kk,
            '--namespace',
            ns,
            'patch',
            'cluster',
            name,
            '--type',
            'merge',
            '-p',
            '{"spec":{"paused":true}}',
          ],
        },
      ],
    },
    {
      kind: 'pivot-import',
      title: `clusterctl move --from-directory ${paths.moveDir} (into ${name})`,
      verify: {
        tool: 'kubectl',
        args: ['--kubeconfig', mk, '--namespace', ns, 'get', 'cluster', name, '-o', 'json'],
      },
      commands: [
        {
          tool: 'clusterctl',
          args: [
            'move',
            '--kubeconfig',
            mk,
            '--config',
            paths.clusterctlConfig,
            '--from-directory',
            paths.moveDir,
          ],
          env: ccEnv,
        },
      ],
    },
    {
      kind: 'delete-kind',
      title: `delete the kind cluster ${c.kind.name}`,
      commands: [{ tool: 'kind', args: ['delete', 'cluster', '--name', c.kind.name, '--kubeconfig', kk] }],
    },
  );
  return stages;
}

/** Shell quoting for printing: single quotes unless the word is plainly safe. */
export function q(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** A command as an operator would type it (bash). */
export function renderCmd(cmd: Cmd): string {
  if (cmd.shown !== undefined) return cmd.shown;
  const env = Object.entries(cmd.env ?? {}).map(([k, v]) => `${k}=${q(v)} `);
  const line = `${env.join('')}${cmd.tool} ${cmd.args.map(q).join(' ')}`;
  if (typeof cmd.stdin !== 'string') return line;
  return `${line} <<'EOF'\n${cmd.stdin.replace(/\n$/, '')}\nEOF`;
}
