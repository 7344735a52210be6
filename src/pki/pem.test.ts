import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  isEncryptedKeyBlock,
  parsePem,
  parsePrivateKeyPem,
  privateKeyFromBlock,
  publicKeySha256,
  spkiDer,
  toTalosEd25519Pem,
} from './pem.js';

const ed = generateKeyPairSync('ed25519');
const edPem = ed.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ecPem = ec.privateKey.export({ type: 'sec1', format: 'pem' }) as string;

describe('parsePem', () => {
  it('splits blocks in order, keeping each DER and RFC 1421 headers', () => {
    const legacy = [
      '-----BEGIN RSA PRIVATE KEY-----',
      'Proc-Type: 4,ENCRYPTED',
      'DEK-Info: AES-256-CBC,00112233445566778899AABBCCDDEEFF',
      '',
      'AAAA',
      '-----END RSA PRIVATE KEY-----',
    ].join('\n');
    const { blocks, errors } = parsePem(`${ecPem}${legacy}\n`);
    expect(errors).toEqual([]);
    expect(blocks.map((b) => b.label)).toEqual(['EC PRIVATE KEY', 'RSA PRIVATE KEY']);
    expect(blocks[0]!.der.equals(ec.privateKey.export({ type: 'sec1', format: 'der' }))).toBe(true);
    expect(blocks[1]!.headers).toEqual({
      'Proc-Type': '4,ENCRYPTED',
      'DEK-Info': 'AES-256-CBC,00112233445566778899AABBCCDDEEFF',
    });
    expect(blocks.map(isEncryptedKeyBlock)).toEqual([false, true]);
  });

  it('reports cut-off, mislabelled and non-base64 blocks without naming key labels', () => {
    const cut = ecPem.slice(0, ecPem.indexOf('-----END'));
    expect(parsePem(cut)).toEqual({
      blocks: [],
      errors: ['1 PEM block(s) have no END line: the file is truncated'],
    });
    const mislabelled = ecPem.replace('END EC PRIVATE KEY', 'END CERTIFICATE');
    expect(parsePem(mislabelled).errors).toEqual(['block 1: BEGIN private key closed by END certificate']);
    const bad = '-----BEGIN CERTIFICATE-----\nnot*base64\n-----END CERTIFICATE-----\n';
    expect(parsePem(bad).errors).toEqual(['block 1 (certificate): body is not valid base64']);
  });
});

describe('keys', () => {
  it("reads Talos's ED25519 PRIVATE KEY label both as text and as a block", () => {
    const talos = toTalosEd25519Pem(edPem);
    expect(talos).toMatch(/^-----BEGIN ED25519 PRIVATE KEY-----\n/);
    expect(talos).toMatch(/-----END ED25519 PRIVATE KEY-----\n$/);
    const fromText = parsePrivateKeyPem(talos);
    const fromBlock = privateKeyFromBlock(parsePem(talos).blocks[0]!);
    expect(spkiDer(fromText).equals(spkiDer(ed.publicKey))).toBe(true);
    expect(spkiDer(fromBlock).equals(spkiDer(ed.publicKey))).toBe(true);
  });

  it('matches a private key and its public half by SPKI hash', () => {
    const pub = createPublicKey(ec.privateKey);
    expect(publicKeySha256(ec.privateKey)).toBe(publicKeySha256(pub));
    expect(publicKeySha256(ec.privateKey)).toMatch(/^[0-9a-f]{64}$/);
    expect(publicKeySha256(ec.privateKey)).not.toBe(publicKeySha256(ed.privateKey));
  });
});
