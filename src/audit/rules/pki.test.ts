import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCA, generateKeyPairPem, issueCertificate, loadIssued } from '../../pki/forge.js';
import type { PkiInventory } from '../../snapshot/model.js';
import { certificateInfoFromPem } from '../../snapshot/pki.js';
import {
  inventory,
  makePkiFixture,
  type PkiFixture,
  pkiContext,
  put,
  remove,
  staticPod,
} from '../../snapshot/testing-pki.js';
import type { Subject } from '../findings.js';
import type { RuleFinding, RuleResult } from '../rule.js';
import {
  caBundleMultiple,
  caInvalid,
  caKeyMissing,
  certKeyMismatch,
  etcdCaMissing,
  frontProxyCaMissing,
  intermediateCa,
  keyTypeUnsupported,
  leafExpiry,
  PKI_RULES,
  saExtraVerifyKeys,
  saKeyMissing,
} from './pki.js';

const DAY = 86_400_000;
let fx: PkiFixture;
let base: PkiInventory;

beforeAll(async () => {
  fx = await makePkiFixture();
  base = await inventory(fx.base);
}, 60_000);

afterAll(async () => {
  await fx?.cleanup();
});

/** The findings of a result that must be findings; every rule of these families names its subject. */
function findings(r: RuleResult): (RuleFinding & { subject: Subject })[] {
  expect(Array.isArray(r), JSON.stringify(r)).toBe(true);
  const list = r as RuleFinding[];
  for (const f of list) expect(f.subject, f.message).toBeDefined();
  return list as (RuleFinding & { subject: Subject })[];
}

async function changed(edit: (dir: string) => Promise<void>): Promise<PkiInventory> {
  const dir = await fx.copy();
  await edit(dir);
  return inventory(dir);
}

const read = (dir: string, rel: string) => readFile(join(dir, rel), 'utf8');

describe('a healthy kubeadm PKI', () => {
  it('passes every PKI rule', () => {
    const ctx = pkiContext(base);
    for (const rule of PKI_RULES) expect(rule.check(ctx), rule.id).toEqual([]);
  });

  it('is skipped by every rule when the snapshot has no PKI (and no flags)', () => {
    const ctx = pkiContext(undefined);
    for (const rule of PKI_RULES) expect(rule.check(ctx), rule.id).toMatchObject({ kind: 'skipped' });
  });
});

describe('pki.*-missing', () => {
  it('ca-key-missing fires for an absent ca.key (kubeadm external-CA mode), naming the file', async () => {
    const inv = await changed((d) => remove(d, 'ca.key'));
    const [f, ...rest] = findings(caKeyMissing.check(pkiContext(inv)));
    expect(rest).toEqual([]);
    expect(f!.subject).toEqual({ kind: 'PkiFile', name: 'ca.key' });
    expect(f!.evidence[0]).toMatchObject({
      kind: 'file',
      path: `${inv.root}/ca.key`,
      observed: 'absent from the PKI copy',
    });
    expect(f!.remediation).toMatch(/external-CA mode/);
  });

  it('ca-key-missing fires for a ca.crt that is not PEM, quoting the parse problem', async () => {
    const inv = await changed((d) => put(d, 'ca.crt', 'this is not a certificate\n'));
    const [f] = findings(caKeyMissing.check(pkiContext(inv)));
    expect(f!.subject.name).toBe('ca.crt');
    expect(f!.evidence[0]).toMatchObject({
      observed: expect.stringMatching(/^present but unusable: not a PEM file/),
    });
  });

  it('etcd-ca-missing fires without etcd/ca.key and explains external etcd when kubeadm uses it', async () => {
    const inv = await changed((d) => remove(d, 'etcd/ca.key'));
    expect(findings(etcdCaMissing.check(pkiContext(inv)))).toHaveLength(1);
    const ctx = pkiContext(inv, {
      edit: (s) => {
        s.kubeadm.clusterConfiguration = {
          sourceApiVersion: 'kubeadm.k8s.io/v1beta3',
          source: { kind: 'file', path: 'kubeadm-config.yaml', line: 1 },
          featureGates: {},
          networking: {},
          apiServer: { extraArgs: [], extraVolumes: [], certSANs: [] },
          controllerManager: { extraArgs: [], extraVolumes: [] },
          scheduler: { extraArgs: [], extraVolumes: [] },
          etcd: { external: { endpoints: ['https://etcd-1:2379'], caFile: '/etc/etcd/ca.crt' } },
          dns: {},
          unknownFields: [],
        };
      },
    });
    const [f] = findings(etcdCaMissing.check(ctx));
    expect(f!.message).toMatch(/external etcd \(https:\/\/etcd-1:2379\)/);
    expect(f!.evidence[1]).toMatchObject({
      kind: 'file',
      path: 'kubeadm-config.yaml',
      field: 'etcd.external',
    });
  });

  it('front-proxy-ca-missing fires without front-proxy-ca.crt', async () => {
    const inv = await changed((d) => remove(d, 'front-proxy-ca.crt'));
    const [f] = findings(frontProxyCaMissing.check(pkiContext(inv)));
    expect(f!.subject.name).toBe('front-proxy-ca.crt');
    expect(f!.field).toBe('certificate');
  });

  it('sa-key-missing fires without sa.key', async () => {
    const inv = await changed((d) => remove(d, 'sa.key'));
    expect(findings(saKeyMissing.check(pkiContext(inv)))).toHaveLength(1);
  });
});

describe('pki.key-type-unsupported', () => {
  it('fires for a passphrase-encrypted CA key and never quotes the key', async () => {
    let pem = '';
    const inv = await changed(async (d) => {
      pem = await read(d, 'ca.key');
      const enc = createPrivateKey(pem).export({
        type: 'pkcs8',
        format: 'pem',
        cipher: 'aes-256-cbc',
        passphrase: 'secret',
      });
      await put(d, 'ca.key', enc as string);
    });
    const [f, ...rest] = findings(keyTypeUnsupported.check(pkiContext(inv)));
    expect(rest).toEqual([]);
    expect(f!.subject.name).toBe('ca.key');
    expect(f!.evidence[0]).toMatchObject({ observed: expect.stringMatching(/encrypted/) });
    expect(f!.remediation).toMatch(/openssl pkey/);
    expect(JSON.stringify(f)).not.toContain(pem.split('\n')[1]!.slice(0, 20));
    // The missing-file rule leaves encrypted keys to this rule.
    expect(caKeyMissing.check(pkiContext(inv))).toEqual([]);
  });

  it('fires for a DSA service-account key (PKCS#8, parseable, not RSA/ECDSA/Ed25519)', async () => {
    const dsa = generateKeyPairSync('dsa', { modulusLength: 1024, divisorLength: 160 });
    const inv = await changed((d) =>
      put(d, 'sa.key', dsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string),
    );
    const [f] = findings(keyTypeUnsupported.check(pkiContext(inv)));
    expect(f!.subject.name).toBe('sa.key');
    expect(f!.evidence[0]).toMatchObject({ observed: 'a key type other than RSA, ECDSA or Ed25519' });
  });

  it('ignores leaf keys Talos does not import', async () => {
    const inv = await changed(async (d) => {
      const enc = createPrivateKey(await read(d, 'apiserver.key')).export({
        type: 'pkcs8',
        format: 'pem',
        cipher: 'aes-256-cbc',
        passphrase: 'secret',
      });
      await put(d, 'apiserver.key', enc as string);
    });
    expect(keyTypeUnsupported.check(pkiContext(inv))).toEqual([]);
  });
});

describe('pki.cert-key-mismatch', () => {
  it('fires when ca.key belongs to another certificate', async () => {
    const inv = await changed(async (d) => put(d, 'ca.key', await read(d, 'front-proxy-ca.key')));
    const [f] = findings(certKeyMismatch.check(pkiContext(inv)));
    expect(f!.subject.name).toBe('ca.key');
    expect(f!.evidence[1]).toMatchObject({ note: 'the key belongs to front-proxy-ca.crt' });
  });

  it('fires when sa.pub is not the public half of sa.key', async () => {
    const other = await generateKeyPairPem({ algorithm: 'ECDSA' });
    const inv = await changed((d) => put(d, 'sa.pub', other.publicKeyPem));
    const [f] = findings(certKeyMismatch.check(pkiContext(inv)));
    expect(f!.subject.name).toBe('sa.key');
    expect(f!.message).toMatch(/sa\.pub does not hold the public half/);
  });
});

describe('pki.ca-invalid', () => {
  it('is a blocker when a CA expired before the snapshot, judged at snapshot time', async () => {
    const caCert = certificateInfoFromPem(await read(fx.base, 'ca.crt'), 'ca.crt')[0]!;
    const after = new Date(Date.parse(caCert.notAfter) + DAY);
    const result = findings(caInvalid.check(pkiContext(base, { createdAt: after })));
    expect(result.map((f) => f.subject.name).sort()).toEqual(['ca.crt', 'etcd/ca.crt', 'front-proxy-ca.crt']);
    expect(result.every((f) => f.severity === 'blocker')).toBe(true);
    expect(result[0]!.evidence[0]).toMatchObject({ field: 'notAfter', observed: caCert.notAfter });
  });

  it('is a risk when a CA expires within the migration window', async () => {
    const inv = await changed(async (d) => {
      const ca = await createCA({ commonName: 'kubernetes', key: { algorithm: 'ECDSA' }, validityDays: 20 });
      await put(d, 'ca.crt', ca.certPem);
      await put(d, 'ca.key', ca.keyPem);
    });
    const [f, ...rest] = findings(caInvalid.check(pkiContext(inv)));
    expect(rest).toEqual([]);
    expect(f!.severity).toBe('risk');
    expect(f!.subject.name).toBe('ca.crt');
  });

  it('is a blocker when ca.crt is not a CA', async () => {
    const inv = await changed(async (d) => {
      await put(d, 'ca.crt', await read(d, 'apiserver.crt'));
      await put(d, 'ca.key', await read(d, 'apiserver.key'));
    });
    const [f] = findings(caInvalid.check(pkiContext(inv)));
    expect(f!.severity).toBe('blocker');
    expect(f!.evidence.map((e) => ('field' in e ? e.field : ''))).toContain('basicConstraints');
  });
});

describe('pki.intermediate-ca', () => {
  it('fires for an intermediate CA issued by a root, naming the issuer', async () => {
    const inv = await changed(async (d) => {
      const root = await createCA({ commonName: 'corp-root', key: { algorithm: 'ECDSA' } });
      const mid = await issueCertificate({
        issuer: root,
        commonName: 'kubernetes',
        usage: 'ca',
        key: { algorithm: 'ECDSA' },
      });
      await put(d, 'ca.crt', mid.certPem);
      await put(d, 'ca.key', mid.keyPem);
      await put(d, 'corp-root.crt', root.certPem);
    });
    const [f, ...rest] = findings(intermediateCa.check(pkiContext(inv)));
    expect(rest).toEqual([]);
    expect(f!.message).toMatch(/issued by CN=corp-root/);
    expect(f!.evidence[0]).toMatchObject({
      field: 'issuer',
      observed: 'CN=corp-root',
      expected: 'CN=kubernetes',
    });
    expect(f!.evidence.some((e) => e.kind === 'file' && e.path.endsWith('/corp-root.crt'))).toBe(true);
  });

  it('fires for a controller-manager signing with another CA file', () => {
    const kcm = (node: string, rootCa: string) =>
      staticPod('kube-controller-manager', node, [
        ['cluster-signing-cert-file', '/etc/kubernetes/pki/ca.crt'],
        ['root-ca-file', rootCa],
      ]);
    const bad = pkiContext(base, {
      staticPods: [
        kcm('cp-1', '/etc/kubernetes/pki/corp-bundle.crt'),
        kcm('cp-2', '/etc/kubernetes/pki/corp-bundle.crt'),
      ],
    });
    const [f, ...rest] = findings(intermediateCa.check(bad));
    expect(rest).toEqual([]);
    expect(f!.subject).toEqual({ kind: 'Component', name: 'kube-controller-manager' });
    expect(f!.field).toBe('--root-ca-file');
    expect(f!.evidence.map((e) => (e.kind === 'flag' ? [e.node, e.flag, e.observed] : e.kind))).toEqual([
      ['cp-1', 'root-ca-file', '/etc/kubernetes/pki/corp-bundle.crt'],
      ['cp-2', 'root-ca-file', '/etc/kubernetes/pki/corp-bundle.crt'],
    ]);
    const fine = pkiContext(base, { staticPods: [kcm('cp-1', '/etc/kubernetes/pki/ca.crt')] });
    expect(intermediateCa.check(fine)).toEqual([]);
  });
});

describe('pki.ca-bundle-multiple', () => {
  it('fires when ca.crt holds two CAs, with the Talos field for the target', async () => {
    const inv = await changed(async (d) => {
      const next = await createCA({ commonName: 'kubernetes-next', key: { algorithm: 'ECDSA' } });
      await put(d, 'ca.crt', (await read(d, 'ca.crt')) + next.certPem);
    });
    const [f] = findings(caBundleMultiple.check(pkiContext(inv)));
    expect(f!.severity).toBeUndefined();
    expect(f!.message).toMatch(/drops CN=kubernetes-next/);
    expect(f!.evidence).toHaveLength(2);
    expect(f!.remediation).toContain('`cluster.acceptedCAs`');
    const [g] = findings(caBundleMultiple.check(pkiContext(inv, { target: { talosVersion: '1.14' } })));
    expect(g!.remediation).toContain('`KubeAPIServerCAConfig.acceptedCAs`');
  });
});

describe('pki.sa-extra-verify-keys', () => {
  const apiserver = (node: string, files: string[]) =>
    staticPod(
      'kube-apiserver',
      node,
      files.map((f) => ['service-account-key-file', f] as [string, string]),
    );

  it('fires for two --service-account-key-file flags, with target-specific advice', () => {
    const pods = [apiserver('cp-1', ['/etc/kubernetes/pki/sa.pub', '/etc/kubernetes/pki/sa-old.pub'])];
    const [f] = findings(saExtraVerifyKeys.check(pkiContext(base, { staticPods: pods })));
    expect(f!.field).toBe('--service-account-key-file');
    expect(f!.remediation).toMatch(/≤v1\.13 accepts only/);
    const [g] = findings(
      saExtraVerifyKeys.check(pkiContext(base, { staticPods: pods, target: { talosVersion: '1.14' } })),
    );
    expect(g!.remediation).toMatch(/accepted\.publicKeys/);
  });

  it('fires for an sa.pub holding two public keys', async () => {
    const old = await generateKeyPairPem({ algorithm: 'ECDSA' });
    const inv = await changed(async (d) => put(d, 'sa.pub', (await read(d, 'sa.pub')) + old.publicKeyPem));
    const [f] = findings(saExtraVerifyKeys.check(pkiContext(inv)));
    expect(f!.subject.name).toBe('sa.pub');
    // One of the two is sa.key's: not a mismatch.
    expect(certKeyMismatch.check(pkiContext(inv))).toEqual([]);
  });

  it('does not fire for a single key file', () => {
    expect(
      saExtraVerifyKeys.check(
        pkiContext(base, { staticPods: [apiserver('cp-1', ['/etc/kubernetes/pki/sa.pub'])] }),
      ),
    ).toEqual([]);
  });
});

describe('pki.leaf-expiry', () => {
  it('fires for kubeadm leaves that expire within the window after the snapshot, not for CAs', async () => {
    const leaf = certificateInfoFromPem(await read(fx.base, 'apiserver.crt'), 'apiserver.crt')[0]!;
    const createdAt = new Date(Date.parse(leaf.notAfter) - 10 * DAY);
    const result = findings(leafExpiry.check(pkiContext(base, { createdAt })));
    const names = result.map((f) => f.subject.name).sort();
    expect(names).toContain('apiserver.crt');
    expect(names).toContain('etcd/server.crt');
    expect(names.some((n) => n.endsWith('ca.crt'))).toBe(false);
    expect(result[0]!.remediation).toMatch(/kubeadm certs renew/);
    expect(caInvalid.check(pkiContext(base, { createdAt }))).toEqual([]);
  });

  it('fires for a served certificate that has expired', async () => {
    const ca = await loadIssued(await read(fx.base, 'ca.crt'), await read(fx.base, 'ca.key'));
    const old = await issueCertificate({
      issuer: ca,
      commonName: 'kube-apiserver',
      usage: 'server',
      key: { algorithm: 'ECDSA' },
      notBefore: new Date(Date.now() - 400 * DAY),
      notAfter: new Date(Date.now() - DAY),
    });
    const served = certificateInfoFromPem(old.certPem, 'served-certs/10.0.0.12_6443.pem')[0]!;
    const ctx = pkiContext(base, {
      edit: (s) => {
        s.servedCertificates = [
          { address: '10.0.0.12:6443', role: 'control-plane', node: 'cp-2', certificate: served },
        ];
      },
    });
    const [f, ...rest] = findings(leafExpiry.check(ctx));
    expect(rest).toEqual([]);
    expect(f!.subject).toEqual({ kind: 'Endpoint', name: '10.0.0.12:6443', node: 'cp-2' });
    expect(f!.message).toMatch(/has expired/);
  });
});
