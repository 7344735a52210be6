/**
 * `ferry snapshot` with credentials the server authenticates but does not authorise, against the
 * lab API server holding examples/lab-cluster and answering 403 per resource for one user, as
 * kube-apiserver's RBAC does. A refused list is not an empty list: the snapshot exits 2 naming
 * what to grant, with the RBAC on stdout; with --allow-partial it is kept, marked partial, and
 * the audit skips the rules that need what was refused (never a pass, never an absence).
 *
 * The served-certificate dialer is wrapped as in collect-lab.real.test.ts: the control planes
 * advertise 10.20.0.x, which must never be dialled from a test.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { AuditReport } from '../audit/engine.js';
import { memoryIo } from '../cli/io.js';
import { runCli } from '../cli/run-cli.js';
import { issueClientCert, writeKubeconfig } from '../lab/apiserver/credentials.js';
import { type LabFilesCluster, startLabFilesCluster } from '../lab/testing-files-cluster.js';
import { RESOURCE_TYPES } from '../ports/kube-kinds.js';
import type { CollectDeps } from './collect.js';
import type { KubeObject } from './model.js';
import { COLLECTION_LISTS } from './reads.js';
import { readSavedSnapshot } from './store.js';

const injected = vi.hoisted(() => ({ deps: {} as Partial<CollectDeps> }));

vi.mock('./collect.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('./collect.js')>();
  return {
    ...real,
    collectSnapshot: vi.fn((deps: CollectDeps) => real.collectSnapshot({ ...deps, ...injected.deps })),
  };
});

/** A ServiceAccount token's user, as the server names it in its refusals. */
const USER = 'system:serviceaccount:ops:snapshotter';

let lab: LabFilesCluster;
let kubeconfig: string;

beforeAll(async () => {
  lab = await startLabFilesCluster();
  injected.deps = { fetchPeerCertificate: lab.fetchPeerCertificate };
  expect(vi.isMockFunction((await import('./collect.js')).collectSnapshot)).toBe(true);
  const cert = await issueClientCert(lab.ca, USER);
  kubeconfig = join(lab.dir, 'snapshotter.conf');
  await writeKubeconfig(kubeconfig, {
    server: lab.server.url,
    caPem: lab.ca.certPem,
    certPem: cert.certPem,
    keyPem: cert.keyPem,
    userName: 'snapshotter',
  });
});
afterAll(async () => lab?.close());
beforeEach(() => lab.server.setForbidden([]));

const gr = (kind: keyof typeof RESOURCE_TYPES) => ({
  group: RESOURCE_TYPES[kind].group,
  resource: RESOURCE_TYPES[kind].plural,
});

async function cli(...argv: string[]) {
  const io = memoryIo({ cwd: lab.dir });
  const code = await runCli(argv, io);
  return { code, out: io.out, err: io.err };
}

/** What `view` does not let a user read: nodes, Secrets, RBAC, storage (cluster-scoped). */
const NOT_IN_VIEW = [
  gr('nodes'),
  gr('secrets'),
  gr('clusterrolebindings'),
  gr('rolebindings'),
  gr('persistentvolumes'),
  gr('storageclasses'),
  gr('csidrivers'),
];

describe('ferry snapshot with a user the server does not authorise', () => {
  it('every list forbidden: exit 2, nothing written, the RBAC to grant on stdout, bound to that user', async () => {
    lab.server.setForbidden([...COLLECTION_LISTS.map((l) => gr(l.kind)), gr('configmaps')], { user: USER });
    const r = await cli('snapshot', '--kubeconfig', kubeconfig, '-o', 'all-forbidden');
    expect(r.code, r.err).toBe(2);
    expect(existsSync(join(lab.dir, 'all-forbidden'))).toBe(false);
    expect(r.err).toContain('the API server refused (HTTP 403) list namespaces, list nodes, list pods');
    expect(r.err).toContain('list secrets in kube-system');
    expect(r.err).toContain('get configmaps kubeadm-config in kube-system');
    expect(r.err).toContain('no snapshot was written');
    expect(r.err).toContain('--allow-partial');
    // One true thing per object: refused, never also "not found".
    expect(r.err).not.toContain('not found');
    const docs = parseAllDocuments(r.out).map((d) => d.toJS() as KubeObject);
    expect(docs.map((d) => d.kind)).toEqual([
      'ClusterRole',
      'Role',
      'Role',
      'ClusterRoleBinding',
      'RoleBinding',
      'RoleBinding',
    ]);
    expect(docs[3]!['subjects']).toEqual([{ kind: 'ServiceAccount', namespace: 'ops', name: 'snapshotter' }]);
    const listed = (docs[0]!['rules'] as { resources?: string[] }[]).flatMap((x) => x.resources ?? []);
    expect(listed).toEqual(expect.arrayContaining(['nodes', 'pods', 'poddisruptionbudgets', 'daemonsets']));
  });

  it('the admin still reads everything: the refusal is per user, as RBAC is', async () => {
    lab.server.setForbidden(NOT_IN_VIEW, { user: USER });
    const r = await cli('snapshot', '--kubeconfig', lab.kubeconfig, '-o', 'admin');
    expect(r.code, r.err).toBe(0);
    const s = await readSavedSnapshot(join(lab.dir, 'admin'));
    expect(s.manifest.unobserved).toEqual([]);
    expect(s.manifest.partial).toBeUndefined();
    expect(s.resources.nodes.length).toBeGreaterThan(0);
  });

  it('view-like (pods readable; nodes, Secrets, RBAC, storage forbidden): exit 2 naming those', async () => {
    lab.server.setForbidden(NOT_IN_VIEW, { user: USER });
    const r = await cli('snapshot', '--kubeconfig', kubeconfig, '-o', 'view');
    expect(r.code, r.err).toBe(2);
    expect(r.err).toMatch(
      /the API server refused \(HTTP 403\) list nodes, list persistentvolumes, list csidrivers\.storage\.k8s\.io, list clusterrolebindings\.rbac\.authorization\.k8s\.io, list rolebindings\.rbac\.authorization\.k8s\.io, list secrets in kube-system: the snapshot would not know nodes, persistentvolumes, csidrivers, anonymousBindings, bootstrapTokens, which \d+ audit rule\(s\) read/,
    );
    expect(r.err).not.toContain('list pods');
    expect(existsSync(join(lab.dir, 'view'))).toBe(false);
  });

  it('view-like and PDBs forbidden, --allow-partial: kept, marked partial; the audit skips what needs them', async () => {
    lab.server.setForbidden([...NOT_IN_VIEW, gr('poddisruptionbudgets')], { user: USER });
    const r = await cli('snapshot', '--kubeconfig', kubeconfig, '-o', 'partial', '--allow-partial');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('partial (--allow-partial): not observed nodes,');
    const dir = join(lab.dir, 'partial');
    const s = await readSavedSnapshot(dir);
    expect(s.manifest.partial).toBe(true);
    expect(new Set(s.manifest.unobserved?.map((n) => n.input))).toEqual(
      new Set([
        'nodes',
        'persistentvolumes',
        'csidrivers',
        'storageclasses',
        'anonymousBindings',
        'bootstrapTokens',
        'poddisruptionbudgets',
      ]),
    );
    expect(s.manifest.unobserved?.find((n) => n.input === 'nodes')?.message).toBe(
      `nodes is forbidden: User "${USER}" cannot list resource "nodes" in API group "" at the cluster scope`,
    );
    expect(s.manifest.unobserved?.find((n) => n.input === 'bootstrapTokens')?.message).toBe(
      `secrets is forbidden: User "${USER}" cannot list resource "secrets" in API group "" in the namespace "kube-system"`,
    );
    expect(s.resources.pods.length).toBeGreaterThan(0);

    const audit = await cli('audit', dir, '-o', 'json', '--fail-on', 'never');
    expect(audit.code, audit.err).toBe(0);
    const report = JSON.parse(audit.out) as AuditReport;
    const outcome = (id: string) => report.rules.find((x) => x.id === id)?.outcome;
    const skip = (id: string) => report.skipped.find((x) => x.ruleId === id);
    // The bootstrap-token blocker does not fire from a list it never read…
    expect(report.findings.filter((f) => f.ruleId === 'bootstrap.token-ttl')).toEqual([]);
    expect(skip('bootstrap.token-ttl')).toMatchObject({
      because: 'not-observed',
      missing: ['bootstrapTokens'],
    });
    // …and the PDB rules do not pass on PDBs never read.
    for (const id of [
      'workload.pdb-blocking',
      'workload.pdb-overlap',
      'workload.pdb-missing',
      'workload.undrainable-pods',
    ]) {
      expect(outcome(id), id).toBe('skipped');
      expect(skip(id)?.because, id).toBe('not-observed');
    }
    expect(skip('workload.pdb-blocking')?.howToProvide).toContain('list poddisruptionbudgets.policy');
    // What reads only what was observed still runs.
    expect(outcome('workload.kernel-modules')).not.toBe('skipped');
    expect(report.snapshot.partial).toBe(true);

    // The human report says what was not observed first, before any finding.
    const table = await cli('audit', dir, '--fail-on', 'never');
    const lines = table.out.split('\n');
    const notObserved = lines.findIndex((l) => l.startsWith('Not observed (8)'));
    const firstSection = lines.findIndex((l) => /^(BLOCKER|RISK|INFO)|^No findings/.test(l));
    expect(notObserved, table.out).toBeGreaterThan(0);
    expect(notObserved).toBeLessThan(firstSection);
    expect(table.out).toMatch(
      /^ {2}bootstrap\.token-ttl {2}not observed: bootstrapTokens \(list secrets in kube-system forbidden \(HTTP 403\)\)$/m,
    );

    // Not observed is not passed: at the default --fail-on the audit exits 1 and names the rules.
    const strict = await cli('audit', dir, '-o', 'json');
    expect(strict.code, strict.err).toBe(1);
    expect(strict.err).toMatch(
      /not passed: \d+ rule\(s\) at or above --fail-on blocker could not read their inputs \(.*bootstrap\.token-ttl/,
    );

    // What derives the cluster from every input refuses it rather than plan 0 nodes.
    for (const argv of [
      ['plan', dir, '-o', join(lab.dir, 'plan-out.json')],
      ['facts', dir],
      [
        'generate',
        dir,
        '--pki',
        fileURLToPath(new URL('../../examples/lab-cluster/pki', import.meta.url)),
        '-o',
        join(lab.dir, 'kit-out'),
      ],
    ]) {
      const r = await cli(...argv);
      expect(r.code, `${argv[0]}: ${r.err}`).toBe(2);
      expect(r.err, argv[0]).toContain(
        `the snapshot did not observe 8 read(s) ferry ${argv[0]} depends on (list nodes;`,
      );
      expect(r.err, argv[0]).toContain('ferry snapshot --print-clusterrole');
      expect(r.out, argv[0]).toBe('');
    }
    expect(existsSync(join(lab.dir, 'plan-out.json'))).toBe(false);
    expect(existsSync(join(lab.dir, 'kit-out'))).toBe(false);
  });
});
