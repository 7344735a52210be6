import * as tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCA, type Issued, issueCertificate } from '../pki/forge.js';
import { errorChain, incurableByWaiting, requestedAccess } from './errors.js';
import { EtcdAdmin } from './etcd/admin.js';
import { KubeRequestError } from './kube/request.js';
import { closedPort } from './kube/testing-fake-api.js';

describe('requestedAccess: the RBAC verb and resource of a refused request', () => {
  const refused = (method: string, path: string) =>
    requestedAccess(
      new KubeRequestError({ method, status: 403, message: 'forbidden', path, address: 'a:1', causes: [] }),
    );

  it.each([
    ['GET', '/api/v1/nodes/talos-cp-1', 'get', 'nodes'],
    ['GET', '/api/v1/nodes?limit=500', 'list', 'nodes'],
    ['GET', '/api/v1/pods?fieldSelector=spec.nodeName%3Dcp-1&watch=true', 'watch', 'pods'],
    ['POST', '/api/v1/namespaces/shop/pods/web-0/eviction', 'create', 'pods/eviction'],
    ['PATCH', '/api/v1/nodes/cp-1', 'patch', 'nodes'],
    [
      'PUT',
      '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/ferry',
      'update',
      'leases.coordination.k8s.io',
    ],
    ['DELETE', '/api/v1/nodes/cp-1', 'delete', 'nodes'],
    ['GET', '/api/v1/namespaces/kube-system', 'get', 'namespaces'],
  ])('%s %s → %s %s', (method, path, verb, resource) => {
    expect(refused(method, path)).toEqual({ verb, resource });
  });

  it('says nothing for a path that is no resource', () => {
    expect(refused('GET', '/readyz')).toBeUndefined();
  });
});

describe('incurableByWaiting walks the cause chain of what the etcd adapter throws', () => {
  let etcdCa: Issued;
  let server: tls.Server;
  let badTls: string;
  beforeAll(async () => {
    const key = { algorithm: 'ECDSA', curve: 'P-256' } as const;
    etcdCa = await createCA({ commonName: 'etcd-ca', key });
    const other = await createCA({ commonName: 'other', key });
    const served = await issueCertificate({
      issuer: other,
      commonName: 'etcd',
      usage: 'server',
      key,
      ipAddresses: ['127.0.0.1'],
    });
    server = tls.createServer({ cert: served.certPem, key: served.keyPem, ALPNProtocols: ['h2'] }, (s) =>
      s.end(),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    badTls = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const memberListError = async (endpoints: string[]) => {
    const client = await issueCertificate({
      issuer: etcdCa,
      commonName: 'ferry',
      usage: 'client',
      key: { algorithm: 'ECDSA', curve: 'P-256' },
    });
    const etcd = new EtcdAdmin({
      endpoints,
      tls: {
        ca: Buffer.from(etcdCa.certPem),
        cert: Buffer.from(client.certPem),
        key: Buffer.from(client.keyPem),
      },
    });
    return etcd.memberList().catch((e: unknown) => e);
  };

  it('one endpoint refusing and one with a certificate from another CA: the certificate decides', async () => {
    const err = await memberListError([`https://127.0.0.1:${await closedPort()}`, badTls]);
    expect(errorChain(err).some((e) => e instanceof AggregateError)).toBe(true);
    expect(incurableByWaiting(err)).toMatchObject({ kind: 'tls' });
  });

  it('every endpoint refusing: waiting may help', async () => {
    const err = await memberListError([`https://127.0.0.1:${await closedPort()}`]);
    expect(String((err as Error).message)).toContain('ECONNREFUSED');
    expect(incurableByWaiting(err)).toBeUndefined();
  });
});
