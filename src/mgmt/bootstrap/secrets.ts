/**
 * Reads a secret named in mgmt.yaml (a file or an environment variable) only when a stage needs it.
 * A file others may read is refused: a token in a world-readable file has already leaked.
 */
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { FerryError } from '../../errors.js';
import type { Infrastructure, SecretSource } from './config.js';

export async function readSecret(src: SecretSource, env: NodeJS.ProcessEnv, field: string): Promise<string> {
  let value: string | undefined;
  if (src.kind === 'env') {
    value = env[src.name];
    if (value === undefined || value.trim() === '')
      throw new FerryError('input', `${field}: the environment variable ${src.name} is not set`, {
        location: { field },
        remediation: `export ${src.name} with the secret before running ferry`,
      });
  } else {
    let mode: number;
    try {
      mode = statSync(src.path).mode;
    } catch (cause) {
      throw new FerryError('input', `${field}: cannot read ${src.shown}: ${(cause as Error).message}`, {
        location: { file: src.shown, field },
        remediation: 'write the secret into that file (chmod 600), or point the field at the right file',
        cause,
      });
    }
    if ((mode & 0o077) !== 0)
      throw new FerryError(
        'input',
        `${field}: ${src.shown} may be read by others (mode ${(mode & 0o777).toString(8)})`,
        {
          location: { file: src.shown, field },
          remediation: `chmod 600 ${src.shown}`,
        },
      );
    value = (await readFile(src.path, 'utf8')).trim();
  }
  if (value.length < 8)
    throw new FerryError('input', `${field}: the secret is empty or too short to be a token`, {
      location: src.kind === 'file' ? { file: src.shown, field } : { field },
      remediation: field.includes('vsphere')
        ? "store the vSphere user's whole password"
        : 'store the whole token value (shown once by pveum user token add)',
    });
  return value.trim();
}

/** The environment variable holding the infrastructure's secret, kept out of every child's environment. */
export function secretEnv(infra: Infrastructure): string[] {
  const src = infra.kind === 'proxmox' ? infra.tokenSecret : infra.password;
  return src.kind === 'env' ? [src.name] : [];
}
