import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { schemaPath } from '../../generate/schema/specs.js';
import { RESOURCE_TYPES } from '../../ports/kube-kinds.js';
import { KIND_API_VERSION } from '../../run/observe.js';
import { gitopsCrds } from './crds.js';

const blob = (bytes: Buffer) =>
  createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');

it('carries the upstream files byte for byte, as schemas/gitops/README.md records them', () => {
  const readme = readFileSync(schemaPath('gitops', 'README.md'), 'utf8');
  const files = readdirSync(schemaPath('gitops')).filter((f) => f.endsWith('.yaml'));
  expect(files).toHaveLength(3);
  for (const f of files) {
    const row = readme.split('\n').find((l) => l.startsWith(`| \`${f}\` |`));
    expect(row, f).toBeDefined();
    expect(row).toContain(`\`${blob(readFileSync(schemaPath('gitops', f)))}\``);
  }
});

it('serves the group, version and plural ferry lists and patches, for each kind', () => {
  type Crd = {
    spec: {
      group: string;
      names: { kind: string; plural: string };
      versions: { name: string; served: boolean }[];
    };
  };
  const crds = gitopsCrds() as unknown as Crd[];
  for (const key of ['argocd-applications', 'flux-kustomizations', 'flux-helmreleases'] as const) {
    const t = RESOURCE_TYPES[key];
    const crd = crds.find((c) => c.spec.names.kind === t.kind);
    expect(crd, key).toBeDefined();
    expect(crd!.spec.group).toBe(t.group);
    expect(crd!.spec.names.plural).toBe(t.plural);
    expect(crd!.spec.versions.filter((v) => v.served).map((v) => v.name)).toContain(t.version);
    expect(KIND_API_VERSION[t.kind]).toBe(`${t.group}/${t.version}`);
  }
});
