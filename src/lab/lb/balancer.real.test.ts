/**
 * The lab load balancer in front of three lab API server instances sharing one MemoryStore:
 * round-robin over healthy backends, /readyz health checks, failover on refused connects,
 * backend list changes, and sessions closed when their backend goes down.
 */
import { createServer as createHttpServer } from 'node:http';
import { request } from 'node:https';
import { type AddressInfo, createConnection } from 'node:net';
import { connect } from 'node:tls';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueClientCert } from '../apiserver/credentials.js';
import { MemoryStore } from '../apiserver/memory-store.js';
import { clientKubeConfig, type LabApiFixture, labCA, startLabApi } from '../apiserver/testing.js';
import { LabLoadBalancer } from './balancer.js';

let ca: Awaited<ReturnType<typeof labCA>>;
let client: Awaited<ReturnType<typeof issueClientCert>>;
const instances: LabApiFixture[] = [];
const balancers: LabLoadBalancer[] = [];

beforeAll(async () => {
  ca = await labCA();
  client = await issueClientCert(ca, 'lb-test', ['system:masters']);
  const store = new MemoryStore();
  for (let i = 1; i <= 3; i++) instances.push(await startLabApi({ ca, store, name: `cp-${i}` }));
});
afterAll(async () => {
  for (const b of balancers) await b.stop();
  for (const i of instances) await i.stop();
});

async function balancer(opts: { intervalMs?: number; backends?: string[] } = {}): Promise<LabLoadBalancer> {
  const lb = await LabLoadBalancer.start({
    host: '127.0.0.1',
    port: 0,
    backends: opts.backends ?? instances.map((i) => i.server.address),
    health: {
      caPem: ca.certPem,
      certPem: client.certPem,
      keyPem: client.keyPem,
      intervalMs: opts.intervalMs ?? 100,
      rise: 2,
      fall: 2,
    },
  });
  balancers.push(lb);
  return lb;
}

/** GET through the balancer on a fresh connection. */
function get(lb: LabLoadBalancer, path = '/api/v1/namespaces'): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${lb.url}${path}`,
      { ca: ca.certPem, cert: client.certPem, key: client.keyPem, agent: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const connectionsOf = (lb: LabLoadBalancer) =>
  Object.fromEntries(lb.backends().map((b) => [b.address, b.connections]));
const allUp = (n: number) => (bs: { state: string }[]) => bs.filter((b) => b.state === 'up').length === n;

describe('LabLoadBalancer', () => {
  it('spreads new connections round-robin over healthy backends', async () => {
    const lb = await balancer();
    await lb.waitFor(allUp(3));
    for (let i = 0; i < 6; i++) expect(await get(lb)).toBe(200);
    expect(Object.values(connectionsOf(lb))).toEqual([2, 2, 2]);
    const { kc } = await clientKubeConfig(lb.url, ca);
    expect((await kc.makeApiClient(CoreV1Api).listNamespace()).items.length).toBe(4);
  });

  it('takes a backend whose /readyz fails out of rotation, and brings it back', async () => {
    const lb = await balancer();
    await lb.waitFor(allUp(3));
    const down = instances[1]!.server;
    down.setDown(true);
    try {
      await lb.waitFor((bs) => bs.find((b) => b.address === down.address)?.state === 'down', 3_000);
      const before = connectionsOf(lb)[down.address];
      for (let i = 0; i < 10; i++) expect(await get(lb)).toBe(200);
      expect(connectionsOf(lb)[down.address]).toBe(before);
      expect(lb.healthy()).toEqual([instances[0]!.server.address, instances[2]!.server.address]);
      expect(lb.backends().find((b) => b.address === down.address)?.lastCheck?.detail).toBe('HTTP 500');
    } finally {
      down.setDown(false);
    }
    await lb.waitFor(allUp(3), 3_000);
  });

  it('fails over when a backend refuses the connection before a check notices', async () => {
    const spare = await startLabApi({ ca, store: new MemoryStore(), name: 'spare' });
    const other = instances[0]!.server.address;
    const lb = await balancer({ intervalMs: 60_000, backends: [spare.server.address, other] });
    await lb.waitFor(allUp(2));
    await spare.stop();
    for (let i = 0; i < 4; i++) expect(await get(lb)).toBe(200);
    const stats = lb.stats();
    expect(stats.backends.find((b) => b.address === spare.server.address)).toMatchObject({
      state: 'up',
      failedConnects: 2,
      connections: 0,
    });
    expect(stats.backends.find((b) => b.address === other)?.connections).toBe(4);
  });

  it('follows backend list changes and rejects clients when nothing is healthy', async () => {
    const [a, b, c] = instances.map((i) => i.server.address) as [string, string, string];
    const lb = await balancer({ backends: [a] });
    await lb.waitFor(allUp(1));
    lb.setBackends([b, c]);
    expect(lb.backends().map((x) => x.address)).toEqual([b, c]);
    await lb.waitFor(allUp(2));
    for (let i = 0; i < 4; i++) expect(await get(lb)).toBe(200);
    lb.removeBackend(b);
    lb.removeBackend(c);
    lb.addBackend(a);
    lb.removeBackend(a);
    await expect(get(lb)).rejects.toThrow();
    expect(lb.stats().rejected).toBe(1);
  });

  it('closes the sessions of a backend when it turns unhealthy', async () => {
    const lb = await balancer();
    await lb.waitFor(allUp(3));
    const sock = connect({
      host: '127.0.0.1',
      port: lb.port,
      ca: ca.certPem,
      cert: client.certPem,
      key: client.keyPem,
      servername: 'localhost',
    });
    await new Promise<void>((resolve, reject) => {
      sock.once('secureConnect', () => resolve());
      sock.once('error', reject);
    });
    const closed = new Promise<void>((resolve) => sock.once('close', () => resolve()));
    sock.on('error', () => undefined);
    const backend = lb.backends().find((x) => x.active === 1)!;
    const inst = instances.find((i) => i.server.address === backend.address)!;
    inst.server.setDown(true);
    try {
      await closed;
      expect(lb.backends().find((x) => x.address === backend.address)?.state).toBe('down');
    } finally {
      inst.server.setDown(false);
    }
  });
});

describe('without health checks (the Service front)', () => {
  /** A plain TCP GET through `lb`; the status, or the error's code. */
  function plain(lb: LabLoadBalancer): Promise<string> {
    return new Promise((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port: lb.port }, () =>
        s.write('GET / HTTP/1.0\r\n\r\n'),
      );
      let got = '';
      s.on('data', (d) => {
        got += d;
      });
      s.on('close', () => resolve(got.split(' ')[1] ?? 'closed'));
      s.on('error', () => undefined);
    });
  }

  it('routes to a backend from when it is added; a refused connect fails without redispatch', async () => {
    const alive = createHttpServer((_q, r) => r.end('ok'));
    await new Promise<void>((r) => alive.listen(0, '127.0.0.1', r));
    const dead = createHttpServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const deadAddr = `127.0.0.1:${(dead.address() as AddressInfo).port}`;
    await new Promise<void>((r) => dead.close(() => r()));
    const aliveAddr = `127.0.0.1:${(alive.address() as AddressInfo).port}`;
    try {
      for (const redispatch of [true, false]) {
        const lb = await LabLoadBalancer.start({ host: '127.0.0.1', port: 0, health: 'none', redispatch });
        balancers.push(lb);
        lb.setBackends([aliveAddr, deadAddr]);
        expect(lb.healthy().sort()).toEqual([aliveAddr, deadAddr].sort());
        const answers = await Promise.all(Array.from({ length: 6 }, () => plain(lb)));
        if (redispatch) expect(answers).toEqual(Array(6).fill('200'));
        else {
          expect(answers).toContain('200');
          expect(answers).toContain('closed');
        }
      }
    } finally {
      alive.close();
    }
  });
});
