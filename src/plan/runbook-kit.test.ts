/**
 * The runbook's machine configs are real, complete and valid: from the kit `ferry generate` writes
 * for examples/lab-cluster, the file each provision step applies is the node's complete config
 * (valid against the repository's schema, with the bundle's secrets and the cluster's identity,
 * the worker's pool labels), every kit path the runbook names exists where the runbook says to
 * run it, and the talosconfig the talosctl commands use is the bundle's: its CA is the OS CA and
 * its admin client certificate verifies against it.
 */
import { createPublicKey, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { generateKit } from '../generate/kit.js';
import { validateTalosDocuments } from '../generate/schema/talos.js';
import type { TalosSecretsBundle } from '../generate/secrets/bundle.js';
import { readTalosSecretsBundle } from '../generate/secrets/read.js';
import { readKit } from '../kit/read.js';
import { parsePrivateKeyPem } from '../pki/pem.js';
import { EXAMPLE_DIR, exampleSnapshot } from '../snapshot/testing-example.js';
import { buildPlan } from './build.js';
import { allSteps, type Plan, type Step } from './model.js';
import { inputsFor, provisioningOf } from './testing-example.js';

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML is walked freely in assertions
type Doc = Record<string, any>;

const TOKEN = 'q1w2e3.a1s2d3f4g5h6j7k8';
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ferry-runbook-kit-'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const runs = (s: Step) => s.action.commands.map((c) => c.run);
const legacy = (docs: Doc[]) => docs.find((d) => d['version'] === 'v1alpha1')!;
const byKind = (docs: Doc[], kind: string) => docs.find((d) => d['kind'] === kind);

for (const talosVersion of ['v1.13.9', 'v1.14.0-rc.1']) {
  describe(`the runbook of the example cluster's kit, Talos ${talosVersion}`, () => {
    // As an operator works: the kit and the plan in one directory, the runbook's paths relative to it.
    let dir: string;
    let plan: Plan;
    let bundle: TalosSecretsBundle;

    beforeAll(async () => {
      dir = join(root, talosVersion);
      await generateKit({
        snapshotPath: EXAMPLE_DIR,
        pkiDir: join(EXAMPLE_DIR, 'pki'),
        outDir: join(dir, 'kit'),
        target: { talosVersion },
        bootstrapToken: TOKEN,
      });
      const kit = await readKit(join(dir, 'kit'), 'kit');
      plan = buildPlan(inputsFor(await exampleSnapshot(), { kit, target: { talosVersion } }));
      bundle = readTalosSecretsBundle(await readFile(join(dir, 'kit', 'secrets.yaml'), 'utf8'));
    });

    const provision = (subject: string) => provisioningOf(plan, subject)!;

    /** The file the provision step of `subject` applies, read as the operator's shell would. */
    async function applied(subject: string): Promise<{ path: string; docs: Doc[] }> {
      const file = provision(subject).machine.machineConfig;
      expect(file, subject).not.toBeNull();
      const docs = parseAllDocuments(await readFile(join(dir, file!), 'utf8')).map((d) => d.toJS() as Doc);
      expect(validateTalosDocuments(docs, talosVersion, 'full'), file!).toEqual([]);
      return { path: file!, docs };
    }

    it("the provision step applies that file as written, 0600, with the kit's talosconfig", async () => {
      for (const subject of ['cp-1', 'worker-1']) {
        const { step, machine } = provision(subject);
        const file = machine.machineConfig;
        expect((await stat(join(dir, file!))).mode & 0o777, file!).toBe(0o600);
        const apply = runs(step).find((r) => r.includes('apply-config') && r.includes(`--file ${file}`))!;
        expect(apply).toBe(
          `talosctl --talosconfig "$TALOSCONFIG" apply-config --insecure -n ${/-n (\S+)/.exec(apply)?.[1]} --file ${file}`,
        );
      }
    });

    it('a control plane boots its complete config: the bundle, the cluster, its own hostname', async () => {
      const { path, docs } = await applied('cp-1');
      expect(path).toBe('kit/talos/full/talos-cp-1.yaml');
      const c = legacy(docs);
      expect(c['machine'].type).toBe('controlplane');
      expect(c['machine'].token).toBe(bundle.trustdInfo.token);
      expect(Buffer.from(c['machine'].ca.crt, 'base64').toString()).toBe(bundle.certs.os.crt);
      expect(c['machine'].ca.key).not.toBe('');
      expect(c['cluster'].token).toBe(TOKEN);
      expect(Buffer.from(c['cluster'].etcd.ca.crt, 'base64').toString()).toBe(bundle.certs.etcd.crt);
      expect(byKind(docs, 'HostnameConfig')).toMatchObject({ hostname: 'talos-cp-1' });
      if (talosVersion === 'v1.13.9') {
        expect(Buffer.from(c['cluster'].ca.crt, 'base64').toString()).toBe(bundle.certs.k8s.crt);
        expect(c['cluster'].id).toMatch(/^[A-Za-z0-9_-]{43}=$/);
        expect(c['cluster'].secret).toBe(bundle.cluster.secret);
        expect(c['cluster'].controlPlane.endpoint).toBe('https://k8s-api.lab.example:6443');
        expect(c['cluster'].network.cni).toEqual({ name: 'none' });
      } else {
        expect(byKind(docs, 'KubeAPIServerCAConfig')?.['issuingCA'].cert).toBe(bundle.certs.k8s.crt);
        expect(byKind(docs, 'DiscoveryIdentityConfig')?.['clusterSecret']).toBe(bundle.cluster.secret);
        expect(byKind(docs, 'KubeClusterConfig')?.['endpoint']).toBe('https://k8s-api.lab.example:6443');
        expect(byKind(docs, 'KubeFlannelCNIConfig')).toBeUndefined();
      }
    });

    it("a worker boots its complete config with its pool's labels and Talos's own hostname", async () => {
      for (const [subject, pool] of [
        ['worker-1', 'general'],
        ['worker-3', 'data'],
      ] as const) {
        const { path, docs } = await applied(subject);
        expect(path).toBe(`kit/talos/full/replacing-${subject}.yaml`);
        const c = legacy(docs);
        expect(c['machine'].type).toBe('worker');
        expect(c['machine'].token).toBe(bundle.trustdInfo.token);
        expect(c['machine'].ca.key ?? '').toBe('');
        const labels =
          talosVersion === 'v1.13.9' ? c['machine'].nodeLabels : byKind(docs, 'KubeNodeConfig')?.['labels'];
        expect(labels?.['lab.example/pool'], subject).toBe(pool);
        expect(byKind(docs, 'HostnameConfig')).toEqual({
          apiVersion: 'v1alpha1',
          kind: 'HostnameConfig',
          auto: 'stable',
        });
        expect(JSON.stringify(docs)).not.toMatch(/PRIVATE KEY/);
      }
    });

    it('every kit path the runbook names exists where the runbook says to run it', () => {
      const all = [
        ...plan.setup,
        ...allSteps(plan).flatMap((s) => [
          ...s.action.commands,
          ...s.verify.commands,
          ...(s.undo.possible ? s.undo.commands : []),
        ]),
      ].map((c) => c.run);
      const paths = new Set(all.flatMap((r) => [...r.matchAll(/@?(kit\/[^\s'"):;]+)/g)].map((m) => m[1]!)));
      expect([...paths].filter((p) => p.startsWith('kit/talos/full/')).length).toBe(8);
      expect(paths).toContain('kit/talos/talosconfig');
      for (const p of paths) expect(existsSync(join(dir, p)), p).toBe(true);
      expect(plan.setup.map((c) => c.run)).toContain('export TALOSCONFIG=kit/talos/talosconfig');
      for (const r of all.filter((x) => /^talosctl (?!gen config)/.test(x)))
        expect(r).toMatch(/^talosctl --talosconfig "\$TALOSCONFIG" /);
    });

    it("the talosconfig: 0600, context named after the cluster, the bundle's OS CA, an admin cert it signed", async () => {
      const file = join(dir, 'kit', 'talos', 'talosconfig');
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const cfg = parse(await readFile(file, 'utf8')) as Doc;
      expect(cfg['context']).toBe('lab');
      const ctx = cfg['contexts']['lab'];
      expect(ctx.endpoints).toEqual([]);
      const pem = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
      expect(pem(ctx.ca)).toBe(bundle.certs.os.crt);
      const ca = new X509Certificate(pem(ctx.ca));
      const client = new X509Certificate(pem(ctx.crt));
      expect(client.verify(ca.publicKey)).toBe(true);
      expect(client.checkIssued(ca)).toBe(true);
      expect(client.ca).toBe(false);
      expect(client.subject).toMatch(/^O=os:admin$/m);
      expect(client.keyUsage).toContain(CLIENT_AUTH);
      expect(new Date(client.validTo).getTime()).toBeGreaterThan(Date.now());
      // The key is the certificate's, in the label talosctl writes.
      expect(pem(ctx.key)).toMatch(/^-----BEGIN ED25519 PRIVATE KEY-----/);
      const pub = createPublicKey(parsePrivateKeyPem(pem(ctx.key)));
      expect(
        pub
          .export({ type: 'spki', format: 'der' })
          .equals(client.publicKey.export({ type: 'spki', format: 'der' })),
      ).toBe(true);
    });
  });
}
