import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { thrown } from '../testing-errors.js';
import { parseEncryptionConfig } from './encryption.js';

const KEY_A = Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');
const KEY_B = Buffer.from('fedcba9876543210fedcba9876543210').toString('base64');
const sha = (b64: string) => createHash('sha256').update(Buffer.from(b64, 'base64')).digest('hex');

describe('parseEncryptionConfig', () => {
  it('keeps key names and fingerprints of every provider, never the secret', () => {
    const text = `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets, configmaps]
  providers:
  - aescbc:
      keys:
      - {name: k2024, secret: ${KEY_A}}
      - {name: k2023, secret: ${KEY_B}}
  - secretbox:
      keys:
      - {name: sb, secret: ${KEY_B}}
  - kms:
      apiVersion: v2
      name: vault
      endpoint: unix:///var/run/kms.sock
  - identity: {}
`;
    const c = parseEncryptionConfig(text, 'enc.yaml');
    expect(c).toEqual({
      source: { kind: 'file', path: 'enc.yaml', line: 1 },
      resources: [
        {
          resources: ['secrets', 'configmaps'],
          providers: [
            { type: 'aescbc', keyNames: ['k2024', 'k2023'], keyFingerprints: [sha(KEY_A), sha(KEY_B)] },
            { type: 'secretbox', keyNames: ['sb'], keyFingerprints: [sha(KEY_B)] },
            {
              type: 'kms',
              keyNames: ['vault'],
              keyFingerprints: [],
              kms: { name: 'vault', apiVersion: 'v2', endpoint: 'unix:///var/run/kms.sock' },
            },
            { type: 'identity', keyNames: [], keyFingerprints: [] },
          ],
        },
      ],
    });
    expect(JSON.stringify(c)).not.toContain(KEY_A);
    expect(JSON.stringify(c)).not.toContain(KEY_B);
  });

  it('accepts the older apiserver.k8s.io/v1 group', () => {
    const c = parseEncryptionConfig(
      'apiVersion: apiserver.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - identity: {}\n',
      'e.yaml',
    );
    expect(c.resources[0]?.providers[0]?.type).toBe('identity');
  });

  it('refuses an unknown provider, naming it, the line and the known ones', () => {
    const e = thrown(() =>
      parseEncryptionConfig(
        `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aesctr:\n      keys: [{name: a, secret: ${KEY_A}}]\n`,
        'enc.yaml',
      ),
    );
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain('unknown encryption provider aesctr');
    expect(e.message).toContain('aescbc, aesgcm, secretbox, kms, identity');
    expect(e.location).toMatchObject({
      file: 'enc.yaml',
      line: 7,
      field: 'resources[0].providers[0].aesctr',
    });
  });

  it('refuses a wrong kind, bad base64 (without quoting it) and keyless providers', () => {
    const wrong = thrown(() => parseEncryptionConfig('apiVersion: v1\nkind: ConfigMap\n', 'enc.yaml'));
    expect(wrong.message).toContain('expected kind EncryptionConfiguration');
    expect(wrong.location?.field).toBe('kind');
    const secret = 'not*base64!';
    const bad = thrown(() =>
      parseEncryptionConfig(
        `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys:\n      - name: a\n        secret: "${secret}"\n`,
        'enc.yaml',
      ),
    );
    expect(bad.message).toContain('not valid base64');
    expect(bad.message).not.toContain(secret);
    expect(bad.location).toMatchObject({ line: 9, field: 'resources[0].providers[0].aesgcm.keys[0].secret' });
    const none = thrown(() =>
      parseEncryptionConfig(
        'apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aescbc: {keys: []}\n',
        'enc.yaml',
      ),
    );
    expect(none.message).toContain('non-empty list of keys');
    expect(() => parseEncryptionConfig('', 'enc.yaml')).toThrow(/empty/);
  });
});
