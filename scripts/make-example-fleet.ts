/**
 * Generates the snapshots of `examples/fleet`: three saved snapshots made from the committed
 * `examples/lab-cluster`, each with its own mix of traps, so `ferry fleet audit
 * examples/fleet/fleet.yaml` shows clusters at different stages and traps shared by some of them.
 *
 *   npx tsx scripts/make-example-fleet.ts [OUT_DIR]       (default examples/fleet/snapshots)
 *
 * Each variant is the example's files directory with a few files edited, loaded and saved as
 * `ferry snapshot --from` does (no private key is kept). Everything is derived from the committed
 * example and a fixed time, so the output is the same on every run: regenerate it after
 * `scripts/make-example.ts` has changed the example (test/examples/fleet.test.ts says when).
 */
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseDocument } from 'yaml';
import { describeError, FerryError } from '../src/errors.js';
import { loadSnapshot } from '../src/snapshot/load.js';
import { saveSnapshot } from '../src/snapshot/store.js';
import { writeDirAtomic } from '../src/util/atomic-write.js';
import { CLUSTER, CONTROL_PLANES } from './lab-cluster/cluster.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const EXAMPLE = join(REPO, 'examples', 'lab-cluster');
/** When the variants were "collected": fixed, so the files do not change from run to run. */
const CREATED_AT = '2026-12-01T06:00:00.000Z';

type Edit = (dir: string) => Promise<void>;

/** A cluster of the fleet: the example with these edits (what each is for: examples/fleet/fleet.yaml). */
export interface Variant {
  name: string;
  edits: Edit[];
}

async function editText(dir: string, rel: string, change: (text: string) => string): Promise<void> {
  const path = join(dir, rel);
  const before = await readFile(path, 'utf8');
  const after = change(before);
  // An edit that no longer matches the example would silently produce the example again.
  if (after === before)
    throw new Error(`${rel}: the variant's edit matched nothing; regenerate after checking it`);
  await writeFile(path, after);
}

/** Edits the items of a kubectl List file; an item `change` answers false for is dropped. */
async function editList(
  dir: string,
  rel: string,
  change: (item: Record<string, unknown>) => Record<string, unknown> | false,
): Promise<void> {
  await editText(dir, rel, (text) => {
    const doc = parseDocument(text);
    const list = doc.toJS() as { items: Record<string, unknown>[] };
    const items: Record<string, unknown>[] = [];
    for (const item of list.items) {
      const next = change(item);
      if (next !== false) items.push(next);
    }
    return parseDocument(JSON.stringify({ ...list, items })).toString();
  });
}

const named = (item: Record<string, unknown>, name: string) =>
  (item.metadata as { name?: string } | undefined)?.name === name;

/** The issuer Talos apiservers sign with: the cluster endpoint's URL. */
const TALOS_ISSUER = `https://${CLUSTER.endpointHost}:${CLUSTER.endpointPort}`;

/** The kubeadm side already prepared as the kit's scripts do: the Talos issuer first, the old one kept. */
const issuerPrepended: Edit = async (dir) => {
  const kubeadm = `    - --service-account-issuer=${CLUSTER.serviceAccountIssuer}\n`;
  for (const cp of CONTROL_PLANES)
    await editText(dir, `manifests/${cp.name}/kube-apiserver.yaml`, (t) =>
      t.replace(kubeadm, `    - --service-account-issuer=${TALOS_ISSUER}\n${kubeadm}`),
    );
};

/** The encryption key renamed to the name Talos v1.13 uses (the data re-encrypted beforehand). */
const keyRenamed: Edit = (dir) =>
  editText(dir, 'encryption-config.yaml', (t) => t.replace('name: key-2023', 'name: key1'));

/** The forgotten debugging pod deleted. */
const debugPodGone: Edit = (dir) => editList(dir, 'resources/pods.yaml', (p) => !named(p, 'netshoot') && p);

/** checkout's PDB lets one of its two pods go. */
const checkoutPdbRelaxed: Edit = (dir) =>
  editList(dir, 'resources/pdbs.yaml', (p) => {
    if (!named(p, 'checkout')) return p;
    const status = p.status as Record<string, unknown>;
    return {
      ...p,
      spec: { ...(p.spec as object), minAvailable: 1 },
      status: {
        ...status,
        conditions: [{ ...(status.conditions as object[])[0], reason: 'SufficientPods', status: 'True' }],
        desiredHealthy: 1,
        disruptionsAllowed: 1,
      },
    };
  });

/** The join token for Talos nodes created without a TTL (`kubeadm token create --ttl 0`). */
const tokenWithoutTtl: Edit = (dir) =>
  editText(dir, 'resources/bootstrap-token.yaml', (t) => t.replace(/^ {2}expiration: .*\n/m, ''));

/** etcd on cp-3 ran out of quota: etcdctl alarm list answers NOSPACE. */
const etcdNoSpace: Edit = async (dir) => {
  // Member IDs are 64-bit integers: taken from the text, never through a JS number.
  const list = await readFile(join(dir, 'etcd', 'member-list.json'), 'utf8');
  const id = /"ID":(\d+),"name":"cp-3"/.exec(list)?.[1];
  if (!id) throw new Error('etcd/member-list.json: no member cp-3');
  await editText(dir, 'etcd/alarms.json', (t) =>
    t.trimEnd().replace(/\}$/, `,"alarms":[{"memberID":${id},"alarm":"NOSPACE"}]}\n`),
  );
};

export const VARIANTS: readonly Variant[] = [
  {
    name: 'staging-eu-1',
    edits: [issuerPrepended, keyRenamed, tokenWithoutTtl, debugPodGone, checkoutPdbRelaxed],
  },
  { name: 'prod-eu-1', edits: [] },
  {
    name: 'prod-eu-2',
    edits: [etcdNoSpace],
  },
];

/** Writes every variant's saved snapshot under `outDir` (replaced atomically). */
export async function makeExampleFleet(outDir: string): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'ferry-example-fleet-'));
  try {
    await writeDirAtomic(
      outDir,
      async (tmp) => {
        for (const v of VARIANTS) {
          const files = join(work, v.name);
          await cp(EXAMPLE, files, { recursive: true });
          for (const edit of v.edits) await edit(files);
          // Loaded by its bare name, so what the snapshot records as its files reads "prod-eu-2/…".
          const snapshot = await loadSnapshot(v.name, { cwd: work });
          snapshot.manifest.createdAt = CREATED_AT;
          await saveSnapshot(snapshot, join(tmp, v.name));
        }
      },
      { force: true },
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function main(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(
      'usage: npx tsx scripts/make-example-fleet.ts [OUT_DIR]   (default examples/fleet/snapshots)\n',
    );
    return 0;
  }
  const outDir = resolve(argv[0] ?? join(REPO, 'examples', 'fleet', 'snapshots'));
  try {
    await makeExampleFleet(outDir);
  } catch (err) {
    process.stderr.write(`${describeError(err)}\n`);
    return err instanceof FerryError ? err.exitCode : 4;
  }
  process.stdout.write(`wrote ${VARIANTS.map((v) => v.name).join(', ')} to ${outDir}\n`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
