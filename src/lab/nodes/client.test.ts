/**
 * LabKubeClient against a real TLS server that cuts connections on purpose: the keep-alive race
 * (an idle pooled connection closed as it is reused) is retried once on a fresh connection; a
 * change sent on a fresh connection that dies is not sent twice.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Issued } from '../../pki/forge.js';
import { issueClientCert, issueServingCert } from '../apiserver/credentials.js';
import { labCA } from '../apiserver/testing.js';
import { listenOn } from '../listen.js';
import { ConnectionLost, type LabApiError, LabKubeClient } from './client.js';

let ca: Issued;
let serving: Issued;
let user: Issued;
const servers: Server[] = [];
const clients: LabKubeClient[] = [];

beforeAll(async () => {
  ca = await labCA();
  serving = await issueServingCert(ca, { ipAddresses: ['127.0.0.1'] });
  user = await issueClientCert(ca, 'client-test', ['system:masters']);
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

/** An HTTPS server on loopback; `handle` gets the request number (1-based). */
async function serve(handle: Handler): Promise<{ client: LabKubeClient; arrivals: string[] }> {
  const arrivals: string[] = [];
  const server = createServer(
    { cert: serving.certPem, key: serving.keyPem, keepAliveTimeout: 60_000 },
    (req, res) => {
      arrivals.push(`${req.method} ${req.url}`);
      handle(req, res, arrivals.length);
    },
  );
  servers.push(server);
  const port = await listenOn(server, 0, '127.0.0.1');
  const client = new LabKubeClient({
    server: `https://127.0.0.1:${port}`,
    ca: ca.certPem,
    cert: user.certPem,
    key: user.keyPem,
  });
  clients.push(client);
  return { client, arrivals };
}

const ok = (res: ServerResponse, body: unknown) => {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};
/** Drops the connection without an answer, as a server that died or an LB that cut the session. */
const cut = (req: IncomingMessage) => (req.socket as Socket).destroy();

describe('LabKubeClient connection loss', () => {
  it('retries a change once when its pooled connection was closed under it (the keep-alive race)', async () => {
    const { client, arrivals } = await serve((req, res, n) => (n === 2 ? cut(req) : ok(res, { n })));
    expect(await client.get('/api/v1/nodes')).toEqual({ n: 1 });
    // Same keep-alive connection: the server drops it on arrival; the client resends on a new one.
    expect(await client.create('/api/v1/namespaces', { metadata: { name: 'x' } })).toEqual({ n: 3 });
    expect(arrivals).toEqual(['GET /api/v1/nodes', 'POST /api/v1/namespaces', 'POST /api/v1/namespaces']);
  });

  it('retries a read once on a fresh connection that dies before answering', async () => {
    const { client, arrivals } = await serve((req, res, n) => (n === 1 ? cut(req) : ok(res, { n })));
    expect(await client.get('/api/v1/nodes')).toEqual({ n: 2 });
    expect(arrivals).toHaveLength(2);
  });

  it('does not resend a change whose fresh connection died: the server may have applied it', async () => {
    const { client, arrivals } = await serve((req) => cut(req));
    const err = await client.create('/api/v1/namespaces', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLost);
    expect((err as ConnectionLost).reused).toBe(false);
    expect((err as Error).message).toContain('POST /api/v1/namespaces');
    expect(arrivals).toHaveLength(1);
  });

  it('gives up after one retry, and never retries an answer the server gave', async () => {
    const lost = await serve((req) => cut(req));
    expect(await lost.client.get('/api/v1/nodes').catch((e: unknown) => e)).toBeInstanceOf(ConnectionLost);
    expect(lost.arrivals).toHaveLength(2);

    const conflict = await serve((_req, res) => {
      res.writeHead(409, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', reason: 'AlreadyExists', message: 'exists' }));
    });
    const err = await conflict.client.create('/api/v1/namespaces', {}).catch((e: unknown) => e);
    expect((err as LabApiError).status).toBe(409);
    expect(conflict.arrivals).toHaveLength(1);
  });
});
