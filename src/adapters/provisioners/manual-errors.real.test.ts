/**
 * The manual provisioner's waits against real failures, produced by ferry's own adapters: a lab
 * API server refusing the request (403, 401), HTTPS servers whose certificates do not verify, a
 * server answering 503 and then going away, an etcd endpoint with a certificate from another CA,
 * and host names under .invalid (RFC 6761: never resolve).
 *
 * Everything listens on 127.0.0.0/8. The system resolver here is not on loopback, so a lookup of a
 * .invalid name is answered in-process (as a resolver answers it: ENOTFOUND) instead of being
 * sent out; any other name looked up fails the test.
 */
import dns from 'node:dns';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { type AddressInfo, createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FerryError } from '../../errors.js';
import { issueClientCert, renderKubeconfig } from '../../lab/apiserver/credentials.js';
import { type LabApiFixture, labCA, startLabApi } from '../../lab/apiserver/testing.js';
import { createCA, type Issued, issueCertificate } from '../../pki/forge.js';
import type { ActionContext, ProvisionRequest } from '../../ports/run.js';
import { errorChain } from '../errors.js';
import { EtcdAdmin } from '../etcd/admin.js';
import { KubeAdmin } from '../kube/admin.js';
import { KubeNetworkError } from '../kube/request.js';
import { ManualProvisioner } from './manual.js';

let dir: string;
let lab: LabApiFixture;
let otherCa: Issued;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-manual-errors-'));
  lab = await startLabApi();
  otherCa = await createCA({ commonName: 'not-the-cluster-ca', key: { algorithm: 'ECDSA', curve: 'P-256' } });
});
afterAll(async () => {
  await lab?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const req: ProvisionRequest = {
  replaces: 'cp-1',
  name: 'talos-cp-1',
  address: null,
  role: 'controlplane',
  talosVersion: 'v1.13.9',
  machineConfig: 'kit/talos/controlplane.yaml',
  endpoint: 'https://k8s-api.lab.example:6443',
  claimed: ['cp-1'],
};

function ctx(timeoutMs: number): ActionContext {
  return { stepId: '2.02.provision.cp-1', timeoutMs, signal: new AbortController().signal, log: () => {} };
}

let n = 0;
/** A kubeconfig file for `server`, trusting `caPem`, with a client certificate or none (anonymous). */
async function kubeconfig(server: string, caPem: string, client?: Issued): Promise<string> {
  const file = join(dir, `kc-${++n}.yaml`);
  const yaml = client
    ? renderKubeconfig({ server, caPem, certPem: client.certPem, keyPem: client.keyPem })
    : [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: lab, cluster: {server: "${server}", certificate-authority-data: ${Buffer.from(caPem).toString('base64')}}}]`,
        'users: [{name: nobody, user: {}}]',
        'contexts: [{name: nobody@lab, context: {cluster: lab, user: nobody}}]',
        'current-context: nobody@lab',
      ].join('\n');
  await writeFile(file, yaml, { mode: 0o600 });
  return file;
}

/** What assemble.ts wires for --provisioner manual: the Node by name, else the Talos Node by role. */
function provisionerOver(kube: KubeAdmin, said: string[], etcd?: EtcdAdmin): ManualProvisioner {
  return new ManualProvisioner({
    say: (l) => said.push(l),
    detect: async (r) => {
      if (r.name) {
        const node = await kube.getNode(r.name);
        if (node) return { name: r.name, address: node.addresses[0] ?? r.address };
        if (etcd && (await etcd.observe()).members.some((m) => m.name === r.name))
          return { name: r.name, address: r.address };
        return undefined;
      }
      const nodes = await kube.listNodes();
      return nodes[0] && { name: nodes[0].name, address: nodes[0].addresses[0] ?? r.address };
    },
    pollMs: 20,
  });
}

/** Runs provision and returns how it ended and how long it took. */
async function provisionFails(
  p: ManualProvisioner,
  r: ProvisionRequest,
  timeoutMs: number,
): Promise<{ err: FerryError; ms: number }> {
  const t0 = Date.now();
  const err = await p.provision(r, ctx(timeoutMs)).then(
    () => {
      throw new Error('provision succeeded');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FerryError);
  return { err: err as FerryError, ms: Date.now() - t0 };
}

/** An HTTPS server on a loopback address with the given certificate; it answers 200 {} to anything. */
async function httpsServer(
  host: string,
  cert: Issued,
  alpn?: string[],
): Promise<{ url: string; server: Server }> {
  const server = createServer(
    { cert: cert.certPem, key: cert.keyPem, ...(alpn && { ALPNProtocols: alpn }) },
    (_q, res) => res.end('{}'),
  );
  await new Promise<void>((r) => server.listen(0, host, r));
  return { url: `https://${host}:${(server.address() as AddressInfo).port}`, server };
}
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
  vi.restoreAllMocks();
});

/** Lookups answered without the resolver: .invalid never resolves; anything else is a test bug. */
function resolveNothing(): string[] {
  const asked: string[] = [];
  vi.spyOn(dns, 'lookup').mockImplementation(((host: string, ...rest: unknown[]) => {
    asked.push(host);
    const cb = rest.at(-1) as (err: NodeJS.ErrnoException) => void;
    if (!host.endsWith('.invalid')) throw new Error(`test looked up ${host}, which is not under .invalid`);
    const err: NodeJS.ErrnoException = Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), {
      code: 'ENOTFOUND',
      errno: -3008,
      syscall: 'getaddrinfo',
      hostname: host,
    });
    process.nextTick(() => cb(err));
  }) as unknown as typeof dns.lookup);
  return asked;
}

// Long enough that waiting it out would be visible: each of these must stop at once.
const LONG = 20_000;

describe('manual provisioner: errors waiting cannot cure stop the wait at once (gate, exit 3)', () => {
  it('403 from the API: names the verb and resource the user may not use', async () => {
    const anon = KubeAdmin.fromKubeconfig({ kubeconfig: await kubeconfig(lab.server.url, lab.ca.certPem) });
    const said: string[] = [];
    const { err, ms } = await provisionFails(provisionerOver(anon, said), req, LONG);
    expect(ms).toBeLessThan(5_000);
    expect(err.kind).toBe('gate');
    expect(err.exitCode).toBe(3);
    expect(err.message).toMatch(
      /^cannot look for the Talos node replacing cp-1: .* GET \/api\/v1\/nodes\/talos-cp-1: HTTP 403 Forbidden/,
    );
    expect(err.remediation).toContain("the kubeconfig's user may not get nodes");
    expect(err.remediation).toContain('kubectl auth can-i get nodes');
    expect(err.remediation).toMatch(/ferry run --resume$/);
    // Without a planned name ferry lists the Nodes: that is the verb it names.
    const listed = await provisionFails(provisionerOver(anon, said), { ...req, name: null }, LONG);
    expect(listed.err.remediation).toContain('may not list nodes');
  });

  it('401 from the API: a client certificate the server does not accept', async () => {
    const stranger = await issueClientCert(otherCa, 'kubernetes-admin', ['kubeadm:cluster-admins']);
    const kube = KubeAdmin.fromKubeconfig({
      kubeconfig: await kubeconfig(lab.server.url, lab.ca.certPem, stranger),
    });
    const { err, ms } = await provisionFails(provisionerOver(kube, []), req, LONG);
    expect(ms).toBeLessThan(5_000);
    expect(err.kind).toBe('gate');
    expect(err.message).toContain('HTTP 401');
    expect(err.remediation).toMatch(/^give credentials the API server at 127\.0\.0\.1:\d+ accepts/);
  });

  it.each([
    ['a CA the kubeconfig does not trust', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', '127.0.0.1', 'other-ca'],
    ['a self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT', '127.0.0.1', 'self-signed'],
    ['a certificate for another address', 'ERR_TLS_CERT_ALTNAME_INVALID', '127.0.0.3', 'cluster-ca'],
    ['an expired certificate', 'CERT_HAS_EXPIRED', '127.0.0.1', 'expired'],
  ] as const)('TLS: %s (%s)', async (_what, code, host, kind) => {
    const key = { algorithm: 'ECDSA', curve: 'P-256' } as const;
    const clusterCa = await labCA();
    const leaf = (issuer: Issued, extra: { notBefore?: Date; notAfter?: Date } = {}) =>
      issueCertificate({
        issuer,
        commonName: 'kube-apiserver',
        usage: 'server',
        key,
        ipAddresses: ['127.0.0.1'],
        ...extra,
      });
    const cert =
      kind === 'other-ca'
        ? await leaf(otherCa)
        : kind === 'self-signed'
          ? await createCA({ commonName: '127.0.0.1', key })
          : kind === 'expired'
            ? await leaf(clusterCa, {
                notBefore: new Date(Date.now() - 3 * 86_400_000),
                notAfter: new Date(Date.now() - 86_400_000),
              })
            : await leaf(clusterCa);
    const { url, server } = await httpsServer(host, cert);
    servers.push(server);
    const kube = KubeAdmin.fromKubeconfig({
      kubeconfig: await kubeconfig(url, clusterCa.certPem, await issueClientCert(clusterCa, 'admin')),
    });
    const { err, ms } = await provisionFails(provisionerOver(kube, []), req, LONG);
    expect(ms).toBeLessThan(5_000);
    expect(err.kind).toBe('gate');
    expect(err.remediation).toContain('certificate-authority');
    // The code is the adapter's, found down the cause chain.
    expect(errorChain(err).find((e) => e instanceof KubeNetworkError)).toMatchObject({ code });
  });

  it("TLS on the etcd side: a member whose certificate is from another CA (grpc keeps only OpenSSL's text)", async () => {
    const key = { algorithm: 'ECDSA', curve: 'P-256' } as const;
    const etcdCa = await createCA({ commonName: 'etcd-ca', key });
    const served = await issueCertificate({
      issuer: otherCa,
      commonName: 'etcd',
      usage: 'server',
      key,
      ipAddresses: ['127.0.0.1'],
    });
    const client = await issueCertificate({ issuer: etcdCa, commonName: 'ferry', usage: 'client', key });
    // Speaks h2 like etcd, so the handshake gets as far as verifying the certificate.
    const { url, server } = await httpsServer('127.0.0.1', served, ['h2']);
    servers.push(server);
    const etcd = new EtcdAdmin({
      endpoints: [url],
      tls: {
        ca: Buffer.from(etcdCa.certPem),
        cert: Buffer.from(client.certPem),
        key: Buffer.from(client.keyPem),
      },
    });
    // The API answers (no such Node yet), so ferry asks etcd next.
    const admin = await issueClientCert(lab.ca, 'kubernetes-admin', ['kubeadm:cluster-admins']);
    const kube = KubeAdmin.fromKubeconfig({
      kubeconfig: await kubeconfig(lab.server.url, lab.ca.certPem, admin),
    });
    const said: string[] = [];
    const { err, ms } = await provisionFails(provisionerOver(kube, said, etcd), req, LONG);
    expect(ms).toBeLessThan(10_000);
    expect(err.kind).toBe('gate');
    expect(err.message).toContain('unable to verify the first certificate');
    expect(err.remediation).toContain('--etcd-cacert');
  });

  it('a host name that does not resolve (.invalid), asked of nothing outside this process', async () => {
    const asked = resolveNothing();
    const kube = KubeAdmin.fromKubeconfig({
      kubeconfig: await kubeconfig('https://k8s-api.ferry-test.invalid:6443', lab.ca.certPem),
    });
    const { err, ms } = await provisionFails(provisionerOver(kube, []), req, LONG);
    expect(ms).toBeLessThan(5_000);
    expect(asked).toEqual(['k8s-api.ferry-test.invalid']);
    expect(err.kind).toBe('gate');
    expect(err.message).toContain('ENOTFOUND');
    expect(err.remediation).toContain('the host name k8s-api.ferry-test.invalid does not resolve');
  });
});

describe('manual provisioner: errors waiting may cure keep it waiting, shown', () => {
  it('says each new error once (not every poll) and ends with the last one', async () => {
    // A server answering 503, then gone (connection refused): two different errors, many polls.
    let answered = 0;
    const cert = await issueCertificate({
      issuer: lab.ca,
      commonName: 'kube-apiserver',
      usage: 'server',
      key: { algorithm: 'ECDSA', curve: 'P-256' },
      ipAddresses: ['127.0.0.1'],
    });
    const server = createServer({ cert: cert.certPem, key: cert.keyPem }, (_q, res) => {
      answered++;
      res.writeHead(503, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'Status',
          status: 'Failure',
          reason: 'ServiceUnavailable',
          message: 'not yet',
          code: 503,
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const admin = await issueClientCert(lab.ca, 'kubernetes-admin');
    const kube = KubeAdmin.fromKubeconfig({
      kubeconfig: await kubeconfig(url, lab.ca.certPem, admin),
      timeoutMs: 2_000,
    });
    const said: string[] = [];
    let polls = 0;
    const counted = new ManualProvisioner({
      say: (l) => said.push(l),
      detect: async (r) => {
        // After two polls of 503s the server goes away.
        if (++polls === 3) {
          server.closeAllConnections();
          await new Promise<void>((res) => server.close(() => res()));
        }
        const node = await kube.getNode(r.name!);
        return node && { name: node.name, address: null };
      },
      pollMs: 20,
    });
    const { err } = await provisionFails(counted, req, 9_000);
    expect(answered).toBeGreaterThan(2);
    expect(polls).toBeGreaterThanOrEqual(4);
    const errors = said.filter((l) => l.includes('ferry keeps waiting'));
    expect(errors).toEqual([
      expect.stringMatching(
        /^ {2}cannot look for the Talos node replacing cp-1 yet \(ferry keeps waiting\): .*HTTP 503 ServiceUnavailable: not yet$/,
      ),
      expect.stringMatching(
        /ferry keeps waiting\): cannot reach the Kubernetes API server at 127\.0\.0\.1:\d+: .*ECONNREFUSED/,
      ),
    ]);
    expect(err.kind).toBe('gate');
    expect(err.message).toMatch(
      /did not show up within 9 s: no Node talos-cp-1 and no etcd member for it; the last look failed: cannot reach the Kubernetes API server at 127\.0\.0\.1:\d+: .*ECONNREFUSED/,
    );
    expect(err.cause).toBeInstanceOf(KubeNetworkError);
  });
});

describe('manual decommission', () => {
  it('stops at once when the address does not resolve', async () => {
    const asked = resolveNothing();
    const p = new ManualProvisioner({ say: () => {}, detect: async () => undefined, pollMs: 20 });
    const t0 = Date.now();
    const err = (await p
      .decommission({ node: 'cp-1', address: 'cp-1.ferry-test.invalid', role: 'controlplane' }, ctx(LONG))
      .catch((e: unknown) => e)) as FerryError;
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(asked.every((h) => h === 'cp-1.ferry-test.invalid')).toBe(true);
    expect(err).toBeInstanceOf(FerryError);
    expect(err.kind).toBe('gate');
    expect(err.message).toMatch(/^cannot check cp-1 at cp-1\.ferry-test\.invalid: getaddrinfo ENOTFOUND/);
    expect(err.remediation).toContain('does not resolve');
  });

  it('shows which ports still answer when that changes, and ends with them', async () => {
    const listener = createTcpServer((s) => s.destroy());
    await new Promise<void>((r) => listener.listen(10250, '127.0.53.9', r));
    const said: string[] = [];
    const p = new ManualProvisioner({ say: (l) => said.push(l), detect: async () => undefined, pollMs: 20 });
    try {
      const err = (await p
        .decommission({ node: 'cp-1', address: '127.0.53.9', role: 'controlplane' }, ctx(600))
        .catch((e: unknown) => e)) as FerryError;
      expect(err.kind).toBe('gate');
      expect(err.message).toBe(
        'cp-1 still answers (or cannot be checked) after 1 s: Talos API :50000 refused, kubelet :10250 open, apiserver :6443 refused, etcd :2379 refused',
      );
      expect(said.filter((l) => l.includes('kubelet :10250 open'))).toHaveLength(1);
    } finally {
      await new Promise<void>((r) => listener.close(() => r()));
    }
  });
});
