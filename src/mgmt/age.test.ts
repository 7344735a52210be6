import { generateIdentity, identityToRecipient } from 'age-encryption';
import { describe, expect, it } from 'vitest';
import { decrypt, encrypt, loadRecipients, parseRecipients } from './age.js';

describe('age', () => {
  it('reads recipients files with comments and refuses an identity in one without quoting it', async () => {
    const id = await generateIdentity();
    const r = await identityToRecipient(id);
    expect(parseRecipients(`# team\n\n${r}\n`, 'f')).toEqual([r]);
    expect(() => parseRecipients(`${id}\n`, 'f')).toThrow(/holds an age identity/);
    try {
      parseRecipients(`${id}\n`, 'f');
    } catch (err) {
      expect(String((err as Error).message)).not.toContain(id);
    }
    await expect(loadRecipients([], [])).rejects.toThrow(/no age recipient/);
  });

  it('encrypts to every recipient and says when a key is not one of them', async () => {
    const [a, b, c] = await Promise.all([generateIdentity(), generateIdentity(), generateIdentity()]);
    const cipher = await encrypt(new TextEncoder().encode('graph'), [
      await identityToRecipient(a),
      await identityToRecipient(b),
    ]);
    expect(new TextDecoder().decode(await decrypt(cipher, [b], 'w', 'b.key'))).toBe('graph');
    await expect(decrypt(cipher, [c], 'w', 'c.key')).rejects.toThrow(
      /cannot be decrypted with the identity in c.key/,
    );
    await expect(decrypt(new Uint8Array([1, 2, 3]), [a], 'w', 'a.key')).rejects.toThrow(
      /not a valid age file/,
    );
  });
});
