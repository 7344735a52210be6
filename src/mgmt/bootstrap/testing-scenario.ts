/**
 * The recorded happy path of a bootstrap, as stand-in rules: each tool answers what the real one
 * prints (fixtures/), the kind cluster and the provider inventory appear once created, the
 * TalosControlPlane goes from provisioning to initialized to ready. Tests put failure rules in front.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixture, type Rule } from '../tools/testing-standins.js';

export const TOKEN_SECRET = 'c0ffee00-aaaa-4bbb-8ccc-proxmoxsecret1';
export const KUBECONFIG_KEY = 'TEST-CLIENT-KEY-LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t';
export const TALOS_KEY = 'TEST-TALOS-KEY-LS0tLS1CRUdJTiBFRDI1NTE5IFBSSVZBVEUgS0VZLS0tLS0';

const b64 = (s: string) => Buffer.from(s).toString('base64');

const tcp = (status: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: 'controlplane.cluster.x-k8s.io/v1alpha3', kind: 'TalosControlPlane', status });

const inventoryOf = (infra: [string, string]) =>
  JSON.stringify({
    items: [
      ['cluster-api', 'CoreProvider', 'v1.14.0'],
      ['talos', 'BootstrapProvider', 'v0.6.12'],
      ['talos', 'ControlPlaneProvider', 'v0.5.13'],
      [infra[0], 'InfrastructureProvider', infra[1]],
      ['in-cluster', 'IPAMProvider', 'v1.1.0'],
    ].map(([providerName, type, version]) => ({ kind: 'Provider', providerName, type, version })),
  });

/** The happy path; `infrastructure` names the provider clusterctl init installs (CAPMOX by default). */
export function happyRules(infrastructure: [name: string, version: string] = ['proxmox', 'v0.9.0']): Rule[] {
  const inventory = inventoryOf(infrastructure);
  return [
    { tool: 'docker', match: '^-v$', stdout: 'Docker version 27.3.1, build ce12230\n' },
    { tool: 'kind', match: '^version$', stdout: 'kind v0.32.0 go1.24.4 linux/amd64\n' },
    {
      tool: 'kubectl',
      match: '^version --client -o json$',
      stdout:
        '{"clientVersion":{"major":"1","minor":"36","gitVersion":"v1.36.1","platform":"linux/amd64"}}\n',
    },
    { tool: 'helm', match: '^version --short$', stdout: 'v3.21.4+g5e2f4a1\n' },
    { tool: 'clusterctl', match: '^version -o short$', stdout: 'v1.14.0\n' },
    { tool: 'kind', match: '^get clusters$', unless: 'kind-created', stderr: 'No kind clusters found.\n' },
    { tool: 'kind', match: '^get clusters$', stdout: 'ferry-bootstrap\n' },
    {
      tool: 'kind',
      match: '^get kubeconfig --name ferry-bootstrap$',
      stdout: 'apiVersion: v1\nkind: Config\n',
    },
    {
      tool: 'kind',
      match: '^create cluster --name ferry-bootstrap ',
      mark: 'kind-created',
      stderr: fixture('kind-create.txt'),
      writeFiles: [{ afterArg: '--kubeconfig', content: 'apiVersion: v1\nkind: Config\n' }],
    },
    {
      tool: 'kubectl',
      match: ' wait --for=condition=Ready nodes ',
      stdout: 'node/ferry-bootstrap-control-plane condition met\n',
    },
    {
      tool: 'kubectl',
      match: ' get providers.clusterctl.cluster.x-k8s.io ',
      unless: 'init-done',
      code: 1,
      stderr: 'error: the server doesn\'t have a resource type "providers"\n',
    },
    { tool: 'kubectl', match: ' get providers.clusterctl.cluster.x-k8s.io ', stdout: inventory },
    { tool: 'clusterctl', match: '^init ', mark: 'init-done', stdout: fixture('clusterctl-init.txt') },
    { tool: 'kubectl', match: ' apply -f -$', stdout: 'applied\n' },
    {
      tool: 'kubectl',
      match: ' apply -f \\S+\\.capi\\.yaml$',
      stdout: 'cluster.cluster.x-k8s.io/kmgt created\n',
    },
    { tool: 'kubectl', match: ' get taloscontrolplane kmgt-control-plane ', times: 1, stdout: tcp({}) },
    {
      tool: 'kubectl',
      match: ' get taloscontrolplane kmgt-control-plane ',
      times: 2,
      stdout: tcp({ initialized: true, ready: true, readyReplicas: 1, replicas: 1 }),
    },
    {
      tool: 'kubectl',
      match: ' get taloscontrolplane kmgt-control-plane ',
      stdout: tcp({ initialized: true, ready: true, readyReplicas: 3, replicas: 3 }),
    },
    {
      tool: 'clusterctl',
      match: '^describe cluster kmgt ',
      times: 1,
      stdout: fixture('describe-provisioning.txt'),
    },
    {
      tool: 'clusterctl',
      match: '^describe cluster kmgt ',
      times: 2,
      stdout: fixture('describe-initialized.txt'),
    },
    { tool: 'clusterctl', match: '^describe cluster kmgt ', stdout: fixture('describe-ready.txt') },
    {
      tool: 'kubectl',
      match: ' get secret kmgt-kubeconfig -o jsonpath=\\{\\.data\\.value\\}$',
      stdout: b64(fixture('kubeconfig.yaml')),
    },
    {
      tool: 'kubectl',
      match: ' get secret kmgt-talosconfig -o jsonpath=\\{\\.data\\.talosconfig\\}$',
      stdout: b64(fixture('talosconfig.yaml')),
    },
    {
      tool: 'helm',
      match: '^upgrade --install ',
      stdout: 'Release has been upgraded. Happy Helming!\nSTATUS: deployed\n',
    },
    {
      tool: 'kubectl',
      match: ' wait --for=condition=Ready \\w+providers\\.operator',
      stdout: 'condition met\n',
    },
    {
      tool: 'kubectl',
      match: ' get secrets -o name$',
      stdout:
        'secret/kmgt-ca\nsecret/kmgt-kubeconfig\nsecret/kmgt-talos\nsecret/kmgt-proxmox-credentials\nsecret/unrelated\n',
    },
    { tool: 'kubectl', match: ' label --overwrite ', stdout: 'secret/kmgt-talos labeled\n' },
    {
      tool: 'clusterctl',
      match: '^move .*--to-directory ',
      stdout: 'Performing move...\nDiscovering Cluster API objects\nMoving Cluster API objects Clusters=1\n',
      writeFiles: [
        { afterArg: '--to-directory', name: 'Cluster_kmgt_kmgt.yaml', content: '{"kind":"Cluster"}' },
        {
          afterArg: '--to-directory',
          name: 'Secret_kmgt_kmgt-kubeconfig.yaml',
          content: '{"kind":"Secret"}',
        },
      ],
    },
    {
      tool: 'kubectl',
      match: ' patch cluster kmgt --type merge ',
      stdout: 'cluster.cluster.x-k8s.io/kmgt patched\n',
    },
    {
      tool: 'clusterctl',
      match: '^move .*--from-directory ',
      stdout: 'Moving Cluster API objects from directory\n',
    },
    {
      tool: 'kubectl',
      match: ' get cluster kmgt -o json$',
      stdout: '{"kind":"Cluster","spec":{"paused":false}}',
    },
    {
      tool: 'kind',
      match: '^delete cluster --name ferry-bootstrap ',
      stderr: 'Deleting cluster "ferry-bootstrap" ...\n',
    },
  ];
}

/** mgmt.yaml and its 0600 token file in `dir`; returns the config path. */
export function writeConfig(dir: string, edit: (text: string) => string = (t) => t): string {
  writeFileSync(join(dir, 'proxmox-token'), `${TOKEN_SECRET}\n`, { mode: 0o600 });
  const path = join(dir, 'mgmt.yaml');
  writeFileSync(path, edit(fixture('minimal.yaml')));
  return path;
}

export const VSPHERE_PASSWORD = 'vsphere-Pa55word-for-capv-7f3a';

/** A vSphere mgmt.yaml in `dir` whose password comes from the environment variable VSPHERE_PW. */
export function writeVsphereConfig(dir: string, edit: (text: string) => string = (t) => t): string {
  const path = join(dir, 'mgmt.yaml');
  writeFileSync(path, edit(fixture('vsphere.yaml')));
  return path;
}
