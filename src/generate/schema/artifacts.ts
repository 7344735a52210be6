/**
 * The kit's last gate before anything is written: every artifact that carries a schema tag is
 * parsed and validated against the schemas the package carries (specs.ts). An invalid document
 * is ferry's bug, never the operator's input, so the kit writer turns a finding here into an
 * internal error and writes nothing. Messages name the file, document and field, never a value:
 * complete configs hold keys.
 */
import { parseAllDocuments } from 'yaml';
import type { Artifact } from '../artifact.js';
import { CrdValidator } from './crd.js';
import { type SchemaError, validateTalosDocuments } from './talos.js';

export interface ArtifactSchemaError extends SchemaError {
  file: string;
}

let crds: CrdValidator | undefined;

function documentsOf(a: Artifact): { docs: unknown[]; errors: ArtifactSchemaError[] } {
  const parsed = parseAllDocuments(a.content);
  const errors = parsed.flatMap((d, i) =>
    d.errors.map((e) => ({ file: a.path, document: `#${i + 1}`, path: '', message: `not YAML: ${e.code}` })),
  );
  return { docs: parsed.map((d) => d.toJS()).filter((d) => d !== null && d !== undefined), errors };
}

/** Every `strategicPatches` string under an object (TalosControlPlane, TalosConfigTemplate). */
function embeddedPatches(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const x of node) embeddedPatches(x, out);
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
      if (k === 'strategicPatches' && Array.isArray(v))
        out.push(...v.filter((x): x is string => typeof x === 'string'));
      else embeddedPatches(v, out);
    }
  }
  return out;
}

export function validateArtifact(a: Artifact): ArtifactSchemaError[] {
  const schema = a.schema;
  if (!schema) return [];
  const { docs, errors } = documentsOf(a);
  if (errors.length > 0) return errors;
  const at = (es: SchemaError[], where = '') =>
    es.map((e) => ({ ...e, file: a.path, document: `${where}${e.document}` }));
  switch (schema.kind) {
    case 'talos':
      return at(validateTalosDocuments(docs, schema.talosVersion, schema.mode));
    case 'capi': {
      crds ??= CrdValidator.fromSchemas();
      const validator = crds;
      return docs.flatMap((obj) => {
        const o = obj as Record<string, unknown>;
        const patches = embeddedPatches(o['spec']).flatMap((text, i) =>
          at(
            validateTalosDocuments(
              parseAllDocuments(text).map((d) => d.toJS()),
              schema.talosVersion,
              'patch',
            ),
            `${String(o['kind'])} strategicPatches[${i}] `,
          ),
        );
        return [...at(validator.validate(o)), ...patches];
      });
    }
  }
}

export function validateArtifacts(artifacts: Artifact[]): ArtifactSchemaError[] {
  return artifacts.flatMap(validateArtifact);
}
