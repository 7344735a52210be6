/**
 * `ferry generate`: snapshot + facts + kubeadm PKI → the migration kit. Generators are pure and
 * return artifacts; this module gathers their results, refuses (exit 2, nothing written) when any
 * input is missing, validates every Talos document and Cluster API object against the schemas the
 * package carries (an invalid one is ferry's bug: exit 4, nothing written), and writes the kit
 * atomically (a temporary directory renamed into place).
 * To add a generator, append it to GENERATORS.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FerryError, usageError } from '../errors.js';
import type { Facts } from '../facts/model.js';
import { refuseExternalEtcd } from '../plan/topology.js';
import { writeDirAtomic } from '../util/atomic-write.js';
import type { Artifact, GenerateNote, MissingInput } from './artifact.js';
import { capiGenerator } from './capi/generator.js';
import { ciliumGenerator } from './cilium.js';
import type { GenerateContext, Generator } from './context.js';
import { gitopsGenerator } from './gitops.js';
import { type GenerateOptions, prepareContext } from './inputs.js';
import { kubeadmPrepGenerator } from './kubeadm-prep.js';
import { probeRbacGenerator } from './probe-rbac.js';
import { renderProvenance } from './provenance.js';
import { type KitNote, renderKitReadme } from './readme.js';
import { type ArtifactSchemaError, validateArtifacts } from './schema/artifacts.js';
import { secretsGenerator } from './secrets/generator.js';
import { talosGenerator } from './talos/generator.js';
import { talosconfigGenerator } from './talosconfig.js';
import { tofuGenerator } from './tofu.js';

/** Every generator of the kit, in order. */
export const GENERATORS: Generator[] = [
  secretsGenerator,
  talosGenerator,
  talosconfigGenerator,
  ciliumGenerator,
  probeRbacGenerator,
  kubeadmPrepGenerator,
  capiGenerator,
  tofuGenerator,
  gitopsGenerator,
];

export interface KitResult {
  outDir: string;
  files: { path: string; mode: number; secret: boolean; purpose: string }[];
  notes: KitNote[];
  facts: Facts;
}

export async function generateKit(opts: GenerateOptions): Promise<KitResult> {
  // Refuse early: no point building a kit that cannot be written.
  if (existsSync(opts.outDir) && !opts.force) {
    throw usageError(
      `${opts.outDir} already exists`,
      'choose another output directory or pass --force to replace it',
    );
  }
  const { ctx, missing, notes } = await prepareContext(opts);
  // Before the missing inputs: no input the operator could add makes this kit safe.
  refuseExternalEtcd(ctx.facts, 'generate');
  const result = await runGenerators(ctx, opts.generators ?? GENERATORS);
  const allMissing = [...missing, ...result.missing];
  if (allMissing.length > 0) throw missingInputsError(allMissing);
  const invalid = validateArtifacts(result.artifacts);
  if (invalid.length > 0) throw invalidKitError(invalid);
  const allNotes = [...notes, ...result.notes];
  const files = withKitFiles(ctx, result.artifacts, allNotes);
  await writeKit(opts.outDir, files, { force: opts.force === true });
  return {
    outDir: opts.outDir,
    files: files.map((a) => ({ path: a.path, mode: a.mode, secret: a.secret, purpose: a.purpose })),
    notes: allNotes,
    facts: ctx.facts,
  };
}

export async function runGenerators(
  ctx: GenerateContext,
  generators: Generator[],
): Promise<{ artifacts: Artifact[]; notes: KitNote[]; missing: MissingInput[] }> {
  const artifacts: Artifact[] = [];
  const notes: KitNote[] = [];
  const missing: MissingInput[] = [];
  for (const g of generators) {
    const r = await g.generate(ctx);
    notes.push(...r.notes.map((n: GenerateNote) => ({ ...n, generator: g.name })));
    if (r.kind === 'missing') missing.push(...r.missing);
    else artifacts.push(...r.artifacts);
  }
  const seen = new Set<string>();
  for (const a of artifacts) {
    if (seen.has(a.path)) throw new FerryError('internal', `two generators wrote ${a.path}`);
    seen.add(a.path);
  }
  return { artifacts, notes, missing };
}

/** One message for everything ferry needs, so the operator fixes all of it in one go (exit 2). */
export function missingInputsError(missing: MissingInput[]): FerryError {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const m of missing) {
    const key = `${m.what}|${m.provideWith}`;
    if (seen.has(key)) continue;
    seen.add(key);
    lines.push(`  - ${m.what}: ${m.why}\n    provide: ${m.provideWith}`);
  }
  return new FerryError(
    'input',
    `cannot generate the kit; nothing was written. ferry needs:\n${lines.join('\n')}`,
    {
      remediation: 'provide the inputs above and run ferry generate again',
    },
  );
}

/** Most schema errors listed in the message; the count says how many more. */
const MAX_SCHEMA_ERRORS = 12;

/** A generated document that fails its schema: ferry's bug, not the operator's (exit 4). */
export function invalidKitError(errors: ArtifactSchemaError[]): FerryError {
  const files = [...new Set(errors.map((e) => e.file))];
  const lines = errors
    .slice(0, MAX_SCHEMA_ERRORS)
    .map((e) => `  - ${e.file}: ${e.document} ${e.path}: ${e.message}`);
  if (errors.length > MAX_SCHEMA_ERRORS) lines.push(`  (+${errors.length - MAX_SCHEMA_ERRORS} more)`);
  return new FerryError(
    'internal',
    `ferry generated documents that fail their schema, in ${files.join(', ')}; nothing was written:\n${lines.join('\n')}`,
    { remediation: 'this is a bug in ferry: report it with this message (it holds no key material)' },
  );
}

/** The generators' artifacts plus the kit's own README.md and provenance.json. */
export function withKitFiles(ctx: GenerateContext, artifacts: Artifact[], notes: KitNote[]): Artifact[] {
  const readme: Artifact = {
    path: 'README.md',
    content: '',
    mode: 0o644,
    purpose: 'this overview: what each file is for and in which order to use it',
    step: 0,
    provenance: {},
    secret: false,
  };
  const provenance: Artifact = {
    path: 'provenance.json',
    content: '',
    mode: 0o644,
    purpose: 'where every generated value came from, per file',
    step: 0,
    provenance: {},
    secret: false,
  };
  const all = [readme, provenance, ...artifacts];
  readme.content = renderKitReadme(ctx, all, notes);
  provenance.content = renderProvenance(ctx, artifacts, notes);
  return all;
}

/** Writes every artifact with its exact mode into a temporary directory renamed into place. */
export async function writeKit(
  outDir: string,
  artifacts: Artifact[],
  opts: { force: boolean },
): Promise<void> {
  for (const a of artifacts) {
    if (a.path.startsWith('/') || a.path.split('/').includes('..')) {
      throw new FerryError('internal', `artifact path escapes the kit: ${a.path}`);
    }
  }
  await writeDirAtomic(
    outDir,
    async (tmp) => {
      for (const a of artifacts) {
        const file = join(tmp, a.path);
        await mkdir(dirname(file), { recursive: true, mode: 0o700 });
        await writeFile(file, a.content, { mode: a.mode, flag: 'wx' });
        // The umask may have narrowed the mode; set it exactly.
        await chmod(file, a.mode);
      }
    },
    { force: opts.force, origin: { flag: '--output' } },
  );
}
