/**
 * Generates `examples/lab-cluster`: an offline "files directory" (docs/snapshot-layout.md §1) of a
 * realistic kubeadm cluster that carries the traps real kubeadm→Talos migrations hit, plus a README
 * that lists each trap, where it lives and which audit rule finds it.
 *
 *   npx tsx scripts/make-example.ts [OUT_DIR]        (default examples/lab-cluster)
 *
 * Everything is deterministic (names, UIDs, IPs, timestamps come from fixed seeds) except key
 * material: the PKI, the encryption key, the bootstrap-token secret and what is derived from them
 * (kube-public/cluster-info). Those live only in the files listed in KEY_MATERIAL_FILES, so a test
 * can compare every other file byte for byte with the committed copy. The output is built in a
 * temporary sibling directory and renamed into place. The generators live in scripts/lab-cluster/.
 */
import { stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describeError, FerryError } from '../src/errors.js';
import { listFiles, makeExample } from './lab-cluster/build.js';

export { buildExample, listFiles, makeExample } from './lab-cluster/build.js';
export { CLUSTER, CONTROL_PLANES, NODES, type NodeDef, type NodeRole } from './lab-cluster/cluster.js';
export { STATIC_COMPONENTS } from './lab-cluster/control-plane.js';
export { KEY_MATERIAL_FILES } from './lab-cluster/key-material.js';
export { etcdIdFor, uidFor } from './lab-cluster/seed.js';
export { TRAPS, type Trap } from './lab-cluster/traps.js';

async function main(argv: string[]): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(
      'usage: npx tsx scripts/make-example.ts [OUT_DIR]   (default examples/lab-cluster)\n',
    );
    return 0;
  }
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const outDir = resolve(argv[0] ?? join(repo, 'examples', 'lab-cluster'));
  try {
    await makeExample(outDir);
  } catch (err) {
    process.stderr.write(`${describeError(err)}\n`);
    return err instanceof FerryError ? err.exitCode : 4;
  }
  let total = 0;
  const files = await listFiles(outDir);
  for (const f of files) total += (await stat(join(outDir, f))).size;
  process.stdout.write(`wrote ${files.length} files (${Math.round(total / 1024)} KiB) to ${outDir}\n`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
