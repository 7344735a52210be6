/**
 * The SARIF 2.1.0 schema (the copy @microsoft/jest-sarif ships) as a validator for the reports'
 * tests. The schema is draft-04; ajv 8 reads it once `id` is spelled `$id` and the meta-schema is
 * dropped.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';

export function sarifValidator(): ValidateFunction {
  const schemaPath = createRequire(import.meta.url).resolve(
    '@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json',
  );
  const { $schema: _ignored, id, ...schema } = JSON.parse(readFileSync(schemaPath, 'utf8'));
  const ajv = new Ajv({ strict: false, allErrors: true, unicodeRegExp: false });
  // ajv-formats is CommonJS: under NodeNext its default export is the module object.
  type Plugin = (a: Ajv) => Ajv;
  const mod = addFormatsPlugin as unknown as Plugin & { default?: Plugin };
  (mod.default ?? mod)(ajv);
  return ajv.compile({ $id: id, ...schema });
}
