/**
 * The requester's connection reuse, against a real TLS server with client-certificate auth on
 * loopback (127.0.182.1, ephemeral port): counted by the server's handshakes. The server can be
 * told to end a connection while it is idle, or to drop a request that arrives on a connection it
 * already answered on (a kept-alive socket closed just as the client reused it).
 */
import type { IncomingMessage } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { issueServingCert } from '../../lab/apiserver/credentials.js';
import { clientKubeConfig, labCA } from '../../lab/apiserver/testing.js';
import type { LoadedKubeconfig } from './kubeconfig.js';
import { createRequester, KubeNetworkError, MERGE_PATCH } from './request.js';

const HOST = '127.0.182.1';
let server: Server;
let handshakes = 0;
let loaded: LoadedKubeconfig;
/** 'end-idle': end each connection 50 ms after an answer. 'drop-reused': drop a connection's second and later requests unanswered. */
let mode: 'normal' | 'end-idle' | 'drop-reused' = 'normal';
const served = new WeakMap<Socket, number>();
let dropped = 0;
let seen: string[] = [];

function handle(req: IncomingMessage, res: import('node:http').ServerResponse): void {
  const socket = req.socket;
  const n = (served.get(socket) ?? 0) + 1;
  served.set(socket, n);
  seen.push(`${req.method} ${req.url}`);
  if (mode === 'drop-reused' && n > 1) {
    dropped++;
    socket.destroy();
    return;
  }
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ path: req.url, method: req.method }));
    if (mode === 'end-idle') setTimeout(() => socket.end(), 50);
  });
}

beforeAll(async () => {
  const ca = await labCA();
  const serving = await issueServingCert(ca, { ipAddresses: [HOST] });
  server = createServer(
    { cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true },
    handle,
  );
  server.on('secureConnection', () => handshakes++);
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const url = `https://${HOST}:${(server.address() as AddressInfo).port}`;
  const { kc } = await clientKubeConfig(url, ca);
  loaded = { kc, file: '(test)', context: kc.getCurrentContext(), server: url };
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Longer than a socket must have been idle for its loss to be taken for an idle close. */
const idle = () => new Promise((r) => setTimeout(r, 1_100));

/** Closes every connection, so the client's pool is empty. */
async function emptyPool(): Promise<void> {
  server.closeAllConnections();
  await new Promise((r) => setTimeout(r, 20));
}

afterEach(() => {
  mode = 'normal';
});

describe('createRequester connections', () => {
  it('keep-alive by default: sequential requests share one connection, parallel ones at most one each', async () => {
    await emptyPool();
    const req = createRequester(loaded);
    const before = handshakes;
    for (let i = 0; i < 5; i++)
      expect(await req.request('POST', `/x/${i}`, { body: { i } })).toEqual({
        path: `/x/${i}`,
        method: 'POST',
      });
    expect(handshakes - before).toBe(1);
    await Promise.all([0, 1, 2, 3].map((i) => req.request('GET', `/p/${i}`)));
    await Promise.all([0, 1, 2, 3].map((i) => req.request('GET', `/q/${i}`)));
    expect(handshakes - before).toBeLessThanOrEqual(4);
  });

  it('two requesters of one kubeconfig share the connection', async () => {
    const a = createRequester(loaded);
    await a.request('GET', '/warm');
    const before = handshakes;
    const b = createRequester(loaded);
    for (let i = 0; i < 3; i++) await (i % 2 ? a : b).request('GET', `/shared/${i}`);
    expect(handshakes - before).toBe(0);
  });

  it('keepAlive false: every request opens its own connection (a probe must see the server as a new client does)', async () => {
    const req = createRequester(loaded, { keepAlive: false });
    const before = handshakes;
    for (let i = 0; i < 3; i++) await req.request('GET', `/y/${i}`);
    expect(handshakes - before).toBe(3);
  });
});

describe('a kept-alive connection the server closed', () => {
  beforeEach(emptyPool);

  it('the server ending an idle connection does not fail the next request', async () => {
    const req = createRequester(loaded);
    await req.request('GET', '/before');
    mode = 'end-idle';
    await req.request('GET', '/ends-after');
    await new Promise((r) => setTimeout(r, 200)); // the server has ended the connection
    const before = handshakes;
    expect(await req.request('PUT', '/next', { body: {} })).toEqual({ path: '/next', method: 'PUT' });
    expect(handshakes - before).toBe(1);
  });

  it('a read or a merge patch that meets a dropped reused socket is sent once more, on a new connection', async () => {
    const req = createRequester(loaded);
    await req.request('GET', '/warm');
    await idle();
    mode = 'drop-reused';
    const before = { handshakes, dropped };
    seen = [];
    expect(await req.request('GET', '/read')).toEqual({ path: '/read', method: 'GET' });
    expect(dropped - before.dropped).toBe(1);
    expect(handshakes - before.handshakes).toBe(1);
    expect(seen).toEqual(['GET /read', 'GET /read']);
    // Warm a pooled connection again (the retry's own was not pooled), then patch on it.
    mode = 'normal';
    await req.request('GET', '/warm');
    await idle();
    mode = 'drop-reused';
    seen = [];
    expect(await req.request('PATCH', '/patch', { body: { a: 1 }, contentType: MERGE_PATCH })).toEqual({
      path: '/patch',
      method: 'PATCH',
    });
    expect(seen).toEqual(['PATCH /patch', 'PATCH /patch']);
  });

  it('only once: a second dead connection fails the request', async () => {
    const req = createRequester(loaded);
    await req.request('GET', '/warm');
    await idle();
    mode = 'drop-reused';
    // The fresh connection of the retry is dropped too when the server drops every request.
    const drop = (r: IncomingMessage) => r.socket.destroy();
    server.prependListener('request', drop);
    try {
      seen = [];
      await expect(req.request('GET', '/twice')).rejects.toBeInstanceOf(KubeNetworkError);
      expect(seen).toEqual(['GET /twice', 'GET /twice']);
    } finally {
      server.removeListener('request', drop);
    }
  });

  it('a connection lost right after its last answer is reported, not repeated', async () => {
    const req = createRequester(loaded);
    await req.request('GET', '/warm');
    mode = 'drop-reused';
    seen = [];
    await expect(req.request('GET', '/at-once')).rejects.toThrow(/connection reset/);
    expect(seen).toEqual(['GET /at-once']);
  });

  it('a POST is not repeated: the server may have acted on it', async () => {
    const req = createRequester(loaded);
    await req.request('GET', '/warm');
    await idle();
    mode = 'drop-reused';
    seen = [];
    const err = await req.request('POST', '/create', { body: { x: 1 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeNetworkError);
    expect((err as KubeNetworkError).message).toMatch(
      /cannot reach the Kubernetes API server at 127\.0\.182\.1:\d+: connection reset/,
    );
    expect(seen).toEqual(['POST /create']);
  });
});
