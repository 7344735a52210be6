/**
 * Writes the example: every generator in the order that fixes resourceVersions and pod IPs, each
 * output file with its mode (key material 0600). The output directory is replaced atomically.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { usageError } from '../../src/errors.js';
import { writeDirAtomic } from '../../src/util/atomic-write.js';
import { Allocator } from './allocator.js';
import { auditLog } from './audit-log.js';
import { CONTROL_PLANES, NODES } from './cluster.js';
import { STATIC_COMPONENTS, staticManifests } from './control-plane.js';
import { etcdAlarms, etcdEndpointStatus, etcdMemberList, etcdVersion } from './etcd.js';
import { bootstrapTokenSecret, clusterInfo, encryptionConfig, randomTokenSecret } from './key-material.js';
import { kubeadmConfigFile } from './kubeadm-config.js';
import { nodeObject } from './node.js';
import { writePki } from './pki.js';
import { README_MARKER, readme } from './readme.js';
import { configMaps } from './resources/configmaps.js';
import { endpointSlices } from './resources/endpointslices.js';
import { namespaces } from './resources/namespaces.js';
import { rbac } from './resources/rbac.js';
import { services } from './resources/services.js';
import { storage } from './resources/storage.js';
import { kubectlJsonList, kubectlYamlList, multiDoc, toYaml } from './serialize.js';
import { buildWorkloads } from './workloads/all.js';

async function put(root: string, rel: string, data: string, mode = 0o644): Promise<void> {
  const path = join(root, rel);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, data, { mode });
}

/** Writes the whole example into `dir` (an existing, empty directory). */
export async function buildExample(dir: string): Promise<void> {
  const alloc = new Allocator();

  await put(dir, 'README.md', readme());
  await put(dir, 'kubeadm-config.yaml', kubeadmConfigFile());
  for (const cp of CONTROL_PLANES) {
    const manifests = staticManifests(cp);
    for (const component of STATIC_COMPONENTS) {
      await put(dir, `manifests/${cp.name}/${component}.yaml`, toYaml(manifests[component]));
    }
  }

  const caPem = await writePki(join(dir, 'pki'));
  const tokenSecret = randomTokenSecret();

  // From here on the call order is part of the output: each object takes the next resourceVersion.
  const nodes = NODES.map((n) => nodeObject(alloc, n));
  const w = buildWorkloads(alloc, new Map(nodes.map((n) => [n.metadata.name, n])));

  const r = (name: string) => `resources/${name}`;
  await put(dir, r('namespaces.yaml'), kubectlYamlList(namespaces(alloc)));
  await put(dir, r('nodes.json'), kubectlJsonList(nodes));
  await put(dir, r('pods.yaml'), kubectlYamlList(w.pods));
  await put(dir, r('deployments.yaml'), kubectlYamlList(w.deployments));
  await put(dir, r('replicasets.yaml'), kubectlYamlList(w.replicasets));
  await put(dir, r('daemonsets.yaml'), kubectlYamlList(w.daemonsets));
  await put(dir, r('statefulsets.yaml'), kubectlYamlList(w.statefulsets));
  await put(dir, r('batch.yaml'), multiDoc([...w.cronjobs, ...w.jobs]));
  await put(dir, r('pdbs.yaml'), kubectlYamlList(w.pdbs));
  await put(dir, r('services.yaml'), kubectlYamlList(services(alloc)));
  await put(dir, r('endpointslices.yaml'), kubectlYamlList(endpointSlices(alloc)));
  await put(dir, r('configmaps.yaml'), kubectlYamlList(configMaps(alloc)));
  await put(dir, r('rbac.yaml'), kubectlYamlList(rbac(alloc)));
  await put(dir, r('storage.yaml'), kubectlYamlList(storage(alloc)));
  await put(dir, r('cluster-info.yaml'), toYaml(clusterInfo(alloc, caPem, tokenSecret)));
  await put(dir, r('bootstrap-token.yaml'), toYaml(bootstrapTokenSecret(alloc, tokenSecret)), 0o600);

  await put(dir, 'etcd/member-list.json', etcdMemberList());
  await put(dir, 'etcd/endpoint-status.json', etcdEndpointStatus());
  await put(dir, 'etcd/version.json', etcdVersion());
  await put(dir, 'etcd/alarms.json', etcdAlarms());
  await put(dir, 'encryption-config.yaml', encryptionConfig(), 0o600);
  await put(dir, 'audit.log', auditLog());
}

/** Replaces `outDir` atomically; refuses to replace a directory this script did not write. */
export async function makeExample(outDir: string): Promise<void> {
  if (existsSync(outDir)) {
    const entries = await readdir(outDir);
    const ours =
      entries.length === 0 ||
      (entries.includes('README.md') &&
        (await readFile(join(outDir, 'README.md'), 'utf8')).startsWith(README_MARKER));
    if (!ours) {
      throw usageError(
        `${outDir} exists and was not written by scripts/make-example.ts`,
        'pass an empty or new directory as OUT_DIR',
      );
    }
  }
  await writeDirAtomic(outDir, buildExample, { force: true });
}

/** Relative paths of every file under `dir`, sorted, with `/` separators. */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else out.push(relative(dir, p).split('\\').join('/'));
    }
  };
  await walk(dir);
  return out.sort();
}
