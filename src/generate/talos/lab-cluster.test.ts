/** End to end on examples/lab-cluster: snapshot → facts → context (with the secrets bundle) → Talos kit files. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { prepareContext } from '../inputs.js';
import { validateTalosDocuments } from '../schema/talos.js';
import { generateTalos } from './generator.js';

const EXAMPLE = join(import.meta.dirname, '../../../examples/lab-cluster');
const TOKEN = 'q1w2e3.a1s2d3f4g5h6j7k8';

describe('Talos generator on examples/lab-cluster', () => {
  for (const talosVersion of ['v1.13.9', 'v1.14.0-rc.1']) {
    it(`Talos ${talosVersion}: valid patches and complete configs, the example's traps handled`, async () => {
      const { ctx, missing } = await prepareContext({
        snapshotPath: EXAMPLE,
        pkiDir: join(EXAMPLE, 'pki'),
        outDir: '/nonexistent',
        target: { talosVersion },
        bootstrapToken: TOKEN,
        full: true,
      });
      expect(missing).toEqual([]);
      const r = generateTalos(ctx);
      expect(r.kind).toBe('ok');
      if (r.kind !== 'ok') return;
      const paths = r.artifacts.map((a) => a.path);
      expect(paths).toContain('talos/controlplane-patch.yaml');
      expect(paths).toContain('talos/worker-patch.yaml');
      expect(paths.filter((p) => p.startsWith('talos/nodes/'))).toEqual([
        'talos/nodes/talos-cp-1.yaml',
        'talos/nodes/talos-cp-2.yaml',
        'talos/nodes/talos-cp-3.yaml',
      ]);
      // Every planned node's complete config; --full adds the per-role and per-group worker configs.
      expect(paths.filter((p) => p.startsWith('talos/full/'))).toEqual([
        'talos/full/talos-cp-1.yaml',
        'talos/full/talos-cp-2.yaml',
        'talos/full/talos-cp-3.yaml',
        ...[1, 2, 3, 4, 5].map((i) => `talos/full/replacing-worker-${i}.yaml`),
        'talos/full/worker.yaml',
        'talos/full/worker-pool-general-1.yaml',
        'talos/full/worker-pool-data-2.yaml',
      ]);
      // Every Talos file carries the schema generate checks it against: patches, complete configs.
      const talos = r.artifacts.filter((a) => a.schema?.kind === 'talos');
      expect(talos.map((a) => a.path).sort()).toEqual(paths.filter((p) => p.endsWith('.yaml')).sort());
      for (const a of talos) {
        const docs = parseAllDocuments(a.content).map((d) => d.toJS());
        expect(a.schema).toEqual({ kind: 'talos', mode: a.secret ? 'full' : 'patch', talosVersion });
        expect(validateTalosDocuments(docs, talosVersion, a.secret ? 'full' : 'patch'), a.path).toEqual([]);
        if (!a.secret) {
          expect(a.content, a.path).not.toMatch(/PRIVATE KEY/);
          expect(a.content, a.path).not.toContain(TOKEN.split('.')[1]);
        }
      }
      const text = r.notes.map((n) => n.message).join('\n');
      // The example's traps: encryption config, audit policy file and untainted control planes.
      expect(text).toMatch(
        /--encryption-provider-config=\/etc\/kubernetes\/encryption\/config.yaml is not carried/,
      );
      expect(text).toMatch(/--audit-policy-file=.* is not carried/);
      const cp = r.artifacts.find((a) => a.path === 'talos/controlplane-patch.yaml')!.content;
      expect(cp).toMatch(
        talosVersion === 'v1.13.9'
          ? /allowSchedulingOnControlPlanes: true/
          : /node-role.kubernetes.io\/control-plane:\n\s+\$patch: delete/,
      );
    });
  }
});
