/**
 * age encryption of backups (mgmt.md §7, npm age-encryption): recipients from flags and files,
 * identities from an age-keygen file. Errors never quote a key line: an identity is key material.
 */
import { Decrypter, Encrypter } from 'age-encryption';
import { inputError, usageError } from '../errors.js';
import { readTextFile } from '../util/input-file.js';

const RECIPIENT = /^age1[0-9a-z]+$/;

/** Lines of an age recipients file: `age1…` each, `#` comments and blank lines ignored. */
export function parseRecipients(text: string, file: string): string[] {
  const out: string[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    if (!RECIPIENT.test(line))
      throw inputError(
        line.startsWith('AGE-SECRET-KEY-')
          ? 'the recipients file holds an age identity (a secret key), not a recipient'
          : 'not an age X25519 recipient (age1…)',
        { file, line: i + 1 },
        line.startsWith('AGE-SECRET-KEY-')
          ? 'give the public key instead: `age-keygen -y KEYFILE` prints it; keep the identity away from the backup host'
          : 'one recipient per line, as `age-keygen -y KEYFILE` prints it',
      );
    out.push(line);
  });
  return out;
}

export async function loadRecipients(
  flags: string[],
  files: string[],
  names: { flag: string; file: string; why: string } = {
    flag: '--recipient',
    file: '--recipients-file',
    why: 'a backup is always encrypted',
  },
): Promise<string[]> {
  const out: string[] = [];
  for (const r of flags) {
    if (!RECIPIENT.test(r))
      throw usageError(
        `${names.flag} must be an age X25519 recipient (age1…)${r.startsWith('AGE-SECRET-KEY-') ? '; it was given a secret key, which must never be on a command line' : ''}`,
        'pass the public key `age-keygen -y KEYFILE` prints',
      );
    out.push(r);
  }
  for (const f of files)
    out.push(
      ...parseRecipients(
        await readTextFile(f, {
          flag: names.file,
          provide: `pass ${names.file} a file of age1… recipients, one a line`,
        }),
        f,
      ),
    );
  if (out.length === 0)
    throw usageError(`no age recipient: ${names.why}`, `pass ${names.flag} age1… or ${names.file} FILE`);
  return [...new Set(out)];
}

/** The identity lines of an age-keygen file (its comments dropped: addIdentity rejects them, mgmt.md §7). */
export async function loadIdentities(file: string): Promise<string[]> {
  const text = await readTextFile(file, {
    flag: '--identity',
    provide: 'pass --identity the age key file (age-keygen -o FILE)',
  });
  const ids = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('AGE-SECRET-KEY-'));
  if (ids.length === 0)
    throw inputError(
      'no age identity (a line AGE-SECRET-KEY-1…) in the file',
      { file, field: '--identity' },
      'pass --identity the file age-keygen -o wrote',
    );
  return ids;
}

export async function encrypt(plain: Uint8Array, recipients: string[]): Promise<Uint8Array> {
  const e = new Encrypter();
  for (const r of recipients) e.addRecipient(r);
  return e.encrypt(plain);
}

export async function decrypt(
  cipher: Uint8Array,
  identities: string[],
  where: string,
  identityFile: string,
): Promise<Uint8Array> {
  const d = new Decrypter();
  try {
    for (const id of identities) d.addIdentity(id);
  } catch (err) {
    throw inputError(
      'the age identity cannot be used',
      { file: identityFile },
      'pass --identity an X25519 key file written by age-keygen',
      scrub(err),
    );
  }
  try {
    return await d.decrypt(cipher);
  } catch (err) {
    const msg = (err as Error).message ?? '';
    if (/no identity matched/.test(msg))
      throw inputError(
        `backup ${where} cannot be decrypted with the identity in ${identityFile}: it was encrypted to other recipients`,
        { file: identityFile, field: '--identity' },
        'pass --identity the key whose recipient (age-keygen -y) the backup was made for; nothing was applied',
      );
    throw inputError(
      `backup ${where} is not a valid age file: ${msg}`,
      { file: where },
      'the object is damaged: restore another version (`ferry mgmt status` lists them); nothing was applied',
      scrub(err),
    );
  }
}

/** The library's message only: its cause chain could carry the key it was parsing. */
function scrub(err: unknown): Error {
  return new Error(
    String((err as Error)?.message ?? err).replace(/AGE-SECRET-KEY-[0-9A-Z-]+/g, 'AGE-SECRET-KEY-…'),
  );
}
