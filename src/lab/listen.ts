import type { Server } from 'node:net';

/**
 * Binds `server` (plain, TLS or HTTPS) to host:port and resolves with the port it got (port 0 picks a
 * free one). A bind error (address in use) rejects instead of being thrown from an event.
 */
export async function listenOn(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  return typeof addr === 'object' && addr ? addr.port : port;
}
