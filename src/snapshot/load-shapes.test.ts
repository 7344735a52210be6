/**
 * Objects whose fields ferry reads have the wrong type are refused when the snapshot is loaded
 * (exit 2 naming file, object and field; the line when the file is YAML), never met later as a
 * TypeError in facts, a rule or a generator (exit 4). Built on edited copies of the example.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryIo } from '../cli/io.js';
import { runCli } from '../cli/run-cli.js';
import { loadSnapshot } from './load.js';
import { saveSnapshot } from './store.js';
import { copyExample, type ExampleCopy, loadError } from './testing-example-copy.js';

let ex: ExampleCopy;
beforeEach(async () => {
  ex = await copyExample();
});
afterEach(async () => {
  await ex.cleanup();
});

describe('object shapes at load', () => {
  it('a Node whose status.addresses is a string (it crashed facts, audit, generate and plan: exit 4)', async () => {
    await ex.editJson('resources/nodes.json', (d) => {
      d.items[0].status.addresses = '10.20.0.11';
    });
    const err = await loadError(ex.dir);
    expect(err.message).toBe('expected a list, found the string "10.20.0.11"');
    expect(err.location).toEqual({
      file: ex.path('resources/nodes.json'),
      object: 'Node cp-1',
      field: 'status.addresses',
    });
    for (const cmd of [['facts'], ['audit'], ['plan', '--allow-blockers']]) {
      const io = memoryIo();
      const [name, ...rest] = cmd as [string, ...string[]];
      expect(await runCli([name, ex.dir, ...rest], io), `${cmd.join(' ')}: ${io.err}`).toBe(2);
      expect(io.err).toContain('Node cp-1, field status.addresses: expected a list');
    }
  });

  it('a YAML object names the line of the field', async () => {
    await ex.replace('resources/pdbs.yaml', /(name: checkout[\s\S]*?)minAvailable: 2/, '$1minAvailable: [2]');
    const err = await loadError(ex.dir);
    expect(err.message).toBe('expected a whole number or a string, found an array');
    const lines = (await ex.read('resources/pdbs.yaml')).split('\n');
    expect(err.location).toMatchObject({
      file: ex.path('resources/pdbs.yaml'),
      object: 'PodDisruptionBudget shop/checkout',
      field: 'spec.minAvailable',
    });
    expect(lines[(err.location?.line ?? 0) - 1]).toContain('minAvailable: [2]');
  });

  it('a pod whose ownerReferences is a number (it crashed twelve rules: exit 4)', async () => {
    await ex.write(
      'resources/extra-pod.yaml',
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: odd\n  namespace: shop\n  ownerReferences: 5\nspec:\n  nodeName: worker-1\n  containers: [{name: c, image: x}]\n',
    );
    const err = await loadError(ex.dir);
    expect(err.message).toBe('expected a list, found number 5');
    expect(err.location).toEqual({
      file: ex.path('resources/extra-pod.yaml'),
      line: 6,
      column: 20,
      object: 'Pod shop/odd',
      field: 'metadata.ownerReferences',
    });
  });

  it('a bootstrap-token Secret value that is not base64 is refused without quoting it', async () => {
    const text = await ex.read('resources/bootstrap-token.yaml');
    const m = /token-secret: (\S+)/.exec(text);
    expect(m).not.toBeNull();
    await ex.replace('resources/bootstrap-token.yaml', /token-secret: \S+/, 'token-secret: "not base64!"');
    const err = await loadError(ex.dir);
    expect(err.location).toMatchObject({
      object: 'Secret kube-system/bootstrap-token-abcdef',
      field: 'data.token-secret',
    });
    expect(err.message).toBe('expected base64, found a value that is not (not shown)');
    expect(err.message).not.toContain('not base64!');
  });

  it('objects ferry does not keep are not its business', async () => {
    await ex.write(
      'resources/other.yaml',
      'apiVersion: v1\nkind: Secret\nmetadata: {name: app, namespace: shop, labels: {a: 1}}\ndata: {x: "!!"}\n',
    );
    await expect(loadSnapshot(ex.dir, { strictPki: false })).resolves.toBeDefined();
  });

  it('a saved snapshot whose resources were edited is refused the same way', async () => {
    const saved = ex.path('../saved');
    await saveSnapshot(await loadSnapshot(ex.dir, { strictPki: false }), saved);
    const { readFile, writeFile } = await import('node:fs/promises');
    const file = `${saved}/resources/nodes.json`;
    const nodes = JSON.parse(await readFile(file, 'utf8'));
    nodes[1].spec.taints = 'NoSchedule';
    await writeFile(file, JSON.stringify(nodes));
    const err = await loadError(saved);
    expect(err.location).toMatchObject({ file, object: 'Node cp-2', field: 'spec.taints' });
  });
});
