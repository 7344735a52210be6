import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TargetInput } from '../../facts/target.js';
import { parseEncryptionConfig } from '../../snapshot/encryption.js';
import { loadSnapshot } from '../../snapshot/load.js';
import type { Snapshot } from '../../snapshot/model.js';
import type { AuditContext } from '../rule.js';
import { editedContext, findingsWithSubject } from '../testing.js';
import { absent, ENCRYPTION_RULES, keyName, providerUnsupported, v114GeneratedDoc } from './encryption.js';

const LAB = fileURLToPath(new URL('../../../examples/lab-cluster', import.meta.url));
let lab: Snapshot;

beforeAll(async () => {
  lab = await loadSnapshot(LAB, { strictPki: false });
}, 60_000);

const ctxOf = (edit?: (s: Snapshot) => void, target: TargetInput = {}): AuditContext =>
  editedContext(lab, edit, target);
const findings = findingsWithSubject;

const key = () => randomBytes(32).toString('base64');

/** Replaces the snapshot's EncryptionConfiguration with this YAML body (the resources list). */
function config(resourcesYaml: string) {
  return (s: Snapshot) => {
    s.encryption = parseEncryptionConfig(
      `apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n${resourcesYaml}`,
      'encryption-config.yaml',
    );
  };
}

/** No encryption at all: no flag on the apiservers, none in kubeadm-config, no file. */
function plaintext(s: Snapshot): void {
  for (const p of s.staticPods) p.flags = p.flags.filter((f) => f.name !== 'encryption-provider-config');
  const cc = s.kubeadm.clusterConfiguration!;
  cc.apiServer.extraArgs = cc.apiServer.extraArgs.filter((f) => f.name !== 'encryption-provider-config');
  delete s.encryption;
  s.manifest.parts = s.manifest.parts.filter((p) => p !== 'encryption');
}

describe('encryption.absent', () => {
  it('passes on the example cluster (it encrypts Secrets)', () => {
    expect(absent.check(ctxOf())).toEqual([]);
  });

  it('fires when the apiservers run without --encryption-provider-config, per target', () => {
    const [f] = findings(absent.check(ctxOf(plaintext)));
    expect(f!.severity).toBeUndefined();
    expect(f!.message).toMatch(/without --encryption-provider-config/);
    expect(f!.evidence[0]).toMatchObject({ kind: 'file', path: `${LAB}/manifests/cp-1/kube-apiserver.yaml` });
    expect(f!.evidence.at(-1)).toMatchObject({
      kind: 'target',
      field: 'cluster.secretboxEncryptionSecret',
      expected: 'absent',
    });
    expect(f!.artifacts).toEqual(['secrets.yaml']);
    const [g] = findings(absent.check(ctxOf(plaintext, { talosVersion: '1.14' })));
    expect(g!.remediation).toContain('delete the `KubeEtcdEncryptionConfig` document');
  });

  it('fires when the configuration writes Secrets with identity first', () => {
    const ctx = ctxOf(
      config(
        `- resources: [secrets]\n  providers:\n  - identity: {}\n  - aescbc:\n      keys:\n      - name: key1\n        secret: ${key()}\n`,
      ),
    );
    const [f] = findings(absent.check(ctx));
    expect(f!.message).toMatch(/writes Secrets with identity/);
  });

  it('is skipped without the apiserver flags', () => {
    const ctx = ctxOf((s) => {
      s.staticPods = [];
      s.manifest.parts = s.manifest.parts.filter((p) => p !== 'flags');
      delete s.kubeadm.clusterConfiguration;
    });
    expect(absent.check(ctx)).toMatchObject({ kind: 'skipped' });
  });
});

describe('encryption.key-name', () => {
  it('fires on the example cluster: aescbc write key "key-2023", Talos ≤v1.13 uses "key1"', () => {
    const [f, ...rest] = findings(keyName.check(ctxOf()));
    expect(rest).toEqual([]);
    expect(f!.severity).toBe('blocker');
    expect(f!.field).toBe('resources[0].providers[0].aescbc.keys[0].name');
    expect(f!.evidence[0]).toMatchObject({
      kind: 'file',
      path: `${LAB}/encryption-config.yaml`,
      line: 2,
      observed: 'key-2023',
      expected: 'key1',
    });
    expect(f!.artifacts).toContain('kubeadm/30-encryption-phase1.sh');
    expect(JSON.stringify(f)).not.toMatch(/secret:/);
  });

  it('does not apply to Talos v1.14 (the configuration is copied verbatim)', () => {
    expect(keyName.notApplicable?.(ctxOf(undefined, { talosVersion: '1.14' }).target)).toMatch(/verbatim/);
    expect(keyName.notApplicable?.(ctxOf().target)).toBeUndefined();
  });

  it('passes with the Talos names, and reports a misnamed read key as a risk', () => {
    expect(
      keyName.check(
        ctxOf(
          config(
            `- resources: [secrets]\n  providers:\n  - aescbc:\n      keys:\n      - name: key1\n        secret: ${key()}\n  - identity: {}\n`,
          ),
        ),
      ),
    ).toEqual([]);
    const ctx = ctxOf(
      config(
        `- resources: [secrets]\n  providers:\n  - secretbox:\n      keys:\n      - name: key2\n        secret: ${key()}\n  - aescbc:\n      keys:\n      - name: legacy\n        secret: ${key()}\n  - identity: {}\n`,
      ),
    );
    const [f] = findings(keyName.check(ctx));
    expect(f!.severity).toBe('risk');
    expect(f!.field).toBe('resources[0].providers[1].aescbc.keys[0].name');
  });

  it('is not applicable without encryption, and skipped when the file is named but not supplied', () => {
    expect(keyName.check(ctxOf(plaintext))).toMatchObject({ kind: 'not-applicable' });
    const ctx = ctxOf((s) => {
      delete s.encryption;
      s.manifest.parts = s.manifest.parts.filter((p) => p !== 'encryption');
    });
    expect(keyName.check(ctx)).toMatchObject({
      kind: 'skipped',
      missing: ['encryption'],
      howToProvide: expect.stringContaining('/etc/kubernetes/encryption/config.yaml'),
    });
  });
});

describe('encryption.provider-unsupported', () => {
  it('passes on the example cluster', () => {
    expect(providerUnsupported.check(ctxOf())).toEqual([]);
  });

  it('fires for kms, aesgcm, several keys per provider and resources other than secrets', () => {
    const ctx = ctxOf(
      config(
        [
          '- resources: [secrets]',
          '  providers:',
          '  - kms:',
          '      apiVersion: v2',
          '      name: vault',
          '      endpoint: unix:///var/run/kms.sock',
          '  - aescbc:',
          '      keys:',
          `      - {name: new, secret: ${key()}}`,
          `      - {name: old, secret: ${key()}}`,
          '- resources: [configmaps]',
          '  providers:',
          '  - aesgcm:',
          '      keys:',
          // AES-128: aesgcm takes 16, 24 or 32 bytes.
          `      - {name: k, secret: ${randomBytes(16).toString('base64')}}`,
          '- resources: [events]',
          '  providers:',
          '  - identity: {}',
          '',
        ].join('\n'),
      ),
    );
    const fields = findings(providerUnsupported.check(ctx)).map((f) => f.field);
    expect(fields).toEqual([
      'resources[0].providers[0].kms',
      'resources[0].providers[1].aescbc.keys',
      'resources[1].resources',
      'resources[1].providers[0].aesgcm',
    ]);
  });

  it('does not apply to Talos v1.14', () => {
    expect(
      providerUnsupported.notApplicable?.(ctxOf(undefined, { talosVersion: '1.14' }).target),
    ).toBeDefined();
  });
});

describe('encryption.v114-generated-doc', () => {
  it('is a risk on v1.14 for an encrypting cluster, naming the AES-CBC conversion bug', () => {
    const [f] = findings(v114GeneratedDoc.check(ctxOf(undefined, { talosVersion: '1.14' })));
    expect(f!.message).toContain('secretbox "key1"');
    expect(f!.evidence[1]).toMatchObject({ kind: 'target', field: 'KubeEtcdEncryptionConfig' });
  });

  it('does not apply below v1.14 and leaves plaintext clusters to encryption.absent', () => {
    expect(v114GeneratedDoc.notApplicable?.(ctxOf().target)).toBeDefined();
    expect(v114GeneratedDoc.check(ctxOf(plaintext, { talosVersion: '1.14' }))).toMatchObject({
      kind: 'not-applicable',
    });
  });
});

describe('the encryption family', () => {
  it('reports each problem once across its rules (example cluster, default target)', () => {
    const ctx = ctxOf();
    const ids = ENCRYPTION_RULES.filter((r) => !r.notApplicable?.(ctx.target)).flatMap((r) => {
      const res = r.check(ctx);
      return Array.isArray(res) ? res.map(() => r.id) : [];
    });
    expect(ids).toEqual(['encryption.key-name']);
  });
});
