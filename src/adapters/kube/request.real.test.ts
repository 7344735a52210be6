/**
 * The requester's connection reuse, against a real TLS server with client-certificate auth on
 * loopback (127.0.182.1, ephemeral port): counted by the server's handshakes.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueServingCert } from '../../lab/apiserver/credentials.js';
import { clientKubeConfig, labCA } from '../../lab/apiserver/testing.js';
import type { LoadedKubeconfig } from './kubeconfig.js';
import { createRequester } from './request.js';

const HOST = '127.0.182.1';
let server: Server;
let handshakes = 0;
let loaded: LoadedKubeconfig;

beforeAll(async () => {
  const ca = await labCA();
  const serving = await issueServingCert(ca, { ipAddresses: [HOST] });
  server = createServer(
    { cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true },
    (req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ path: req.url, method: req.method }));
      });
    },
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

describe('createRequester connections', () => {
  it('keepAlive: sequential requests share one connection, parallel ones at most one each', async () => {
    const req = createRequester(loaded, { keepAlive: true });
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

  it('by default every request opens its own connection (a probe must see the server as a new client does)', async () => {
    const req = createRequester(loaded);
    const before = handshakes;
    for (let i = 0; i < 3; i++) await req.request('GET', `/y/${i}`);
    expect(handshakes - before).toBe(3);
  });
});
