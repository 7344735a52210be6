import { connect, createServer } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { dropServernameWarning } from './warnings.js';

describe('dropServernameWarning', () => {
  it('drops DEP0123 and passes every other warning on', () => {
    const seen: unknown[][] = [];
    const proc = {
      emitWarning: ((...args: unknown[]) => void seen.push(args)) as NodeJS.Process['emitWarning'],
    };
    dropServernameWarning(proc);
    proc.emitWarning('ip as servername', 'DeprecationWarning', 'DEP0123');
    proc.emitWarning('ip as servername', { type: 'DeprecationWarning', code: 'DEP0123' });
    proc.emitWarning('something else', 'DeprecationWarning', 'DEP0005');
    proc.emitWarning('plain');
    expect(seen).toEqual([['something else', 'DeprecationWarning', 'DEP0005'], ['plain']]);
  });

  it('catches the warning Node really emits for an IP server name', async () => {
    const seen: unknown[][] = [];
    const proc = {
      emitWarning: ((...args: unknown[]) => void seen.push(args)) as NodeJS.Process['emitWarning'],
    };
    const real = process.emitWarning;
    // Route Node's own call through the filter, and record what gets past it.
    dropServernameWarning(proc);
    process.emitWarning = proc.emitWarning;
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      const socket = connect({ host: '127.0.0.1', port, servername: '127.0.0.1', rejectUnauthorized: false });
      socket.on('error', () => {});
      socket.destroy();
    } finally {
      process.emitWarning = real;
      server.close();
    }
    expect(seen).toEqual([]);
  });
});
