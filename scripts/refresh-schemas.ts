/**
 * Refreshes the repository's copies of the upstream schemas (schemas/) and of the upstream golden
 * files the tests use (fixtures beside those tests) from the shared specs directory, and rewrites
 * schemas/README.md from the list below. It reads only the directory given with --from, and only
 * when a developer runs it: ferry and its tests read the copies in the repository.
 *
 *   npx tsx scripts/refresh-schemas.ts --from DIR [--check]
 *
 * --from DIR  a directory holding the upstream files at the paths listed below (required)
 * --check     write nothing; exit 1 when a copy differs from its source
 *
 * Files are copied byte for byte (no edits). The README records each file's git blob id
 * (`git hash-object`), so a copy can be checked against the upstream commit named beside it.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface Upstream {
  repo: string;
  path: string;
  ref: string;
}

interface Copy {
  /** Path under the shared specs directory. */
  from: string;
  /** Path in this repository. */
  to: string;
  what: string;
  upstream: Upstream;
}

const TALOS = 'siderolabs/talos';
const TALOS_SCHEMA = 'pkg/machinery/config/schemas/config.schema.json';
const CAPI = 'kubernetes-sigs/cluster-api';
const CAPI_REF = 'v1.14.0 / 560d4acf507bc7cac34b2da449fa5cd53eaeb149';
const CACPPT = 'siderolabs/cluster-api-control-plane-provider-talos';
const CABPT = 'siderolabs/cluster-api-bootstrap-provider-talos';
const CAPMOX = 'ionos-cloud/cluster-api-provider-proxmox';
const CAPMOX_REF = 'v0.9.0 / eb2360a723105450003fd7095616e3dd8cbe2b39';
const CABPT_REF = 'v0.6.12 / 065b6843501a9b9fad01133b30f98b891aa5aceb';
const CAPV = 'kubernetes-sigs/cluster-api-provider-vsphere';
const CAPV_REF = 'v1.16.1 / 5b57d1db50a72f8d7ac605f9860f18d517215b4d';
const IPAM = 'kubernetes-sigs/cluster-api-ipam-provider-in-cluster';
const IPAM_REF = 'v1.0.3 / cd1bebe8bc29ba7170c80575a975eca60475d648';

/** The Talos releases ferry targets (knowledge/talos.ts), one schema per minor. */
const TALOS_SCHEMAS: [version: string, ref: string][] = [
  ['v1.10.9', 'v1.10.9 / c48f7ede0334'],
  ['v1.11.6', 'v1.11.6 / 6dd14300ecad'],
  ['v1.12.11', 'v1.12.11 / 2e80771bade5'],
  ['v1.13.9', 'v1.13.9 / 3ebd10a7c1bd'],
  ['v1.14.0-rc.1', 'v1.14.0-rc.1 / 7a84d742b3d5'],
];

const crd = (file: string, kind: string, repo: string, path: string, ref: string): Copy => ({
  from: `capi/${file}`,
  to: `schemas/capi/${file}`,
  what: `CRD ${kind}`,
  upstream: { repo, path, ref },
});

/** Every copy: the schemas generate validates against, then the goldens the tests compare with. */
export const COPIES: Copy[] = [
  ...TALOS_SCHEMAS.map(([version, ref]) => ({
    from: `talos/${version}/config.schema.json`,
    to: `schemas/talos/${version}/config.schema.json`,
    what: `Talos ${version} machine-config JSON schema (draft 2020-12)`,
    upstream: { repo: TALOS, path: TALOS_SCHEMA, ref },
  })),
  crd(
    'cluster.x-k8s.io_clusters.yaml',
    'Cluster',
    CAPI,
    'core/config/crd/bases/cluster.x-k8s.io_clusters.yaml',
    CAPI_REF,
  ),
  crd(
    'cluster.x-k8s.io_machines.yaml',
    'Machine',
    CAPI,
    'core/config/crd/bases/cluster.x-k8s.io_machines.yaml',
    CAPI_REF,
  ),
  crd(
    'cluster.x-k8s.io_machinedeployments.yaml',
    'MachineDeployment',
    CAPI,
    'core/config/crd/bases/cluster.x-k8s.io_machinedeployments.yaml',
    CAPI_REF,
  ),
  crd(
    'controlplane.cluster.x-k8s.io_taloscontrolplanes.yaml',
    'TalosControlPlane',
    CACPPT,
    'config/crd/bases/controlplane.cluster.x-k8s.io_taloscontrolplanes.yaml',
    'v0.5.12 / 97b33e78ff1091bd143db6c428b8ed53ec3e0931',
  ),
  crd(
    'bootstrap.cluster.x-k8s.io_talosconfigtemplates.yaml',
    'TalosConfigTemplate',
    CABPT,
    'config/crd/bases/bootstrap.cluster.x-k8s.io_talosconfigtemplates.yaml',
    CABPT_REF,
  ),
  crd(
    'infrastructure.cluster.x-k8s.io_proxmoxclusters.yaml',
    'ProxmoxCluster',
    CAPMOX,
    'config/crd/bases/infrastructure.cluster.x-k8s.io_proxmoxclusters.yaml',
    CAPMOX_REF,
  ),
  crd(
    'infrastructure.cluster.x-k8s.io_proxmoxmachinetemplates.yaml',
    'ProxmoxMachineTemplate',
    CAPMOX,
    'config/crd/bases/infrastructure.cluster.x-k8s.io_proxmoxmachinetemplates.yaml',
    CAPMOX_REF,
  ),
  crd(
    'infrastructure.cluster.x-k8s.io_proxmoxmachines.yaml',
    'ProxmoxMachine',
    CAPMOX,
    'config/crd/bases/infrastructure.cluster.x-k8s.io_proxmoxmachines.yaml',
    CAPMOX_REF,
  ),
  crd(
    'infrastructure.cluster.x-k8s.io_proxmoxclustertemplates.yaml',
    'ProxmoxClusterTemplate',
    CAPMOX,
    'config/crd/bases/infrastructure.cluster.x-k8s.io_proxmoxclustertemplates.yaml',
    CAPMOX_REF,
  ),
  crd(
    'cluster.x-k8s.io_machinesets.yaml',
    'MachineSet',
    CAPI,
    'core/config/crd/bases/cluster.x-k8s.io_machinesets.yaml',
    CAPI_REF,
  ),
  crd(
    'cluster.x-k8s.io_machinehealthchecks.yaml',
    'MachineHealthCheck',
    CAPI,
    'core/config/crd/bases/cluster.x-k8s.io_machinehealthchecks.yaml',
    CAPI_REF,
  ),
  crd(
    'clusterctl.cluster.x-k8s.io_providers.yaml',
    'Provider (clusterctl inventory)',
    CAPI,
    'cmd/clusterctl/config/crd/bases/clusterctl.cluster.x-k8s.io_providers.yaml',
    CAPI_REF,
  ),
  crd(
    'bootstrap.cluster.x-k8s.io_talosconfigs.yaml',
    'TalosConfig',
    CABPT,
    'config/crd/bases/bootstrap.cluster.x-k8s.io_talosconfigs.yaml',
    CABPT_REF,
  ),
  ...(
    [
      ['vsphereclusters', 'VSphereCluster'],
      ['vspheremachinetemplates', 'VSphereMachineTemplate'],
      ['vspheremachines', 'VSphereMachine'],
      ['vsphereclusteridentities', 'VSphereClusterIdentity'],
    ] as const
  ).map(([plural, kind]) =>
    crd(
      `infrastructure.cluster.x-k8s.io_${plural}.yaml`,
      kind,
      CAPV,
      `config/default/crd/bases/infrastructure.cluster.x-k8s.io_${plural}.yaml`,
      CAPV_REF,
    ),
  ),
  ...(
    [
      ['inclusterippools', 'InClusterIPPool'],
      ['globalinclusterippools', 'GlobalInClusterIPPool'],
    ] as const
  ).map(([plural, kind]) =>
    crd(
      `ipam.cluster.x-k8s.io_${plural}.yaml`,
      kind,
      IPAM,
      `config/crd/bases/ipam.cluster.x-k8s.io_${plural}.yaml`,
      IPAM_REF,
    ),
  ),
  ...(['v1.13.9', 'v1.14.0-rc.1'] as const).flatMap((version) =>
    ['base-controlplane.yaml', 'base-worker.yaml'].map((file) => ({
      from: `talos/examples/${version}/generated-config/${file}`,
      to: `src/generate/schema/fixtures/talos/${version}/${file}`,
      what: `golden: talosctl gen config output (test fixture)`,
      upstream: {
        repo: TALOS,
        path: `pkg/machinery/config/types/v1alpha1/testdata/stability/${version.slice(0, 5)}/${file}`,
        ref: version,
      },
    })),
  ),
  {
    from: 'talos/examples/secrets-bundle-example.yaml',
    to: 'src/generate/secrets/fixtures/secrets-bundle-example.yaml',
    what: 'golden: a talosctl gen secrets bundle, test keys (test fixture)',
    upstream: {
      repo: TALOS,
      path: 'pkg/machinery/config/generate/secrets/testdata/secrets.yaml',
      ref: 'main / ad8823176e75b9cd07647ddde13c34f2ab77c663',
    },
  },
  {
    from: 'talos/examples/stability-secrets-bundle.yaml',
    to: 'src/generate/secrets/fixtures/stability-secrets-bundle.yaml',
    what: 'golden: the bundle the stability goldens were made with (test fixture)',
    upstream: {
      repo: TALOS,
      path: 'pkg/machinery/config/types/v1alpha1/testdata/stability/secrets.yaml',
      ref: 'v1.14.0-rc.1',
    },
  },
];

/** `git hash-object` of a file's bytes. */
export function gitBlobId(bytes: Buffer): string {
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

export function renderReadme(blobs: Map<string, string>): string {
  const row = (c: Copy) =>
    `| \`${c.to}\` | ${c.what} | ${c.upstream.repo} | \`${c.upstream.path}\` | ${c.upstream.ref} | \`${blobs.get(c.to) ?? '?'}\` |`;
  return [
    '# schemas/',
    '',
    'The upstream schemas `ferry generate` validates every Talos document and every Cluster API object',
    'against, at run time (src/generate/schema/). Copied byte for byte, no edits; the git blob id',
    '(`git hash-object`) equals the blob of the file at the upstream commit named.',
    '',
    'Do not edit these files. Refresh them with `npx tsx scripts/refresh-schemas.ts --from DIR`, DIR',
    'holding the upstream files at the paths below; it also rewrites this README.',
    'Licenses: Talos files MPL-2.0, Cluster API and provider CRDs Apache-2.0 (their repositories).',
    '',
    '| file | what | upstream repository | upstream path | ref / commit | git blob |',
    '|---|---|---|---|---|---|',
    ...COPIES.map(row),
    '',
    'The Talos schema of a release validates every release of its minor (src/generate/schema/specs.ts',
    'picks by minor). The golden files (test fixtures) live beside the tests that read them.',
    '',
  ].join('\n');
}

async function writeAtomic(file: string, bytes: Buffer | string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, bytes, { mode: 0o644 });
  await rename(tmp, file);
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write('usage: npx tsx scripts/refresh-schemas.ts --from DIR [--check]\n');
    return 0;
  }
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const at = argv.indexOf('--from');
  if (at < 0 || !argv[at + 1]) {
    process.stderr.write(
      'error: no --from DIR\n  fix: pass the directory holding the upstream files (the paths in schemas/README.md)\n',
    );
    return 2;
  }
  const from = resolve(argv[at + 1]!);
  const check = argv.includes('--check');
  if (!existsSync(from)) {
    process.stderr.write(`error: no specs directory at ${from}\n  fix: pass --from DIR\n`);
    return 2;
  }
  const blobs = new Map<string, string>();
  let differ = 0;
  for (const c of COPIES) {
    const bytes = await readFile(join(from, c.from));
    blobs.set(c.to, gitBlobId(bytes));
    const dest = join(repo, c.to);
    const same = existsSync(dest) && (await readFile(dest)).equals(bytes);
    if (same) continue;
    differ++;
    process.stdout.write(`${check ? 'differs' : 'updated'}: ${c.to}\n`);
    if (!check) await writeAtomic(dest, bytes);
  }
  const readme = renderReadme(blobs);
  const readmeFile = join(repo, 'schemas', 'README.md');
  const readmeSame = existsSync(readmeFile) && (await readFile(readmeFile, 'utf8')) === readme;
  if (!readmeSame) {
    differ++;
    process.stdout.write(`${check ? 'differs' : 'updated'}: schemas/README.md\n`);
    if (!check) await writeAtomic(readmeFile, readme);
  }
  process.stdout.write(
    `${COPIES.length} files from ${from}: ${differ === 0 ? 'all current' : `${differ} changed`}\n`,
  );
  return check && differ > 0 ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(4);
    },
  );
}
