/**
 * Test and benchmark support: a moto S3 server (test-infra.md, moto row) on 127.0.0.1 with an
 * ephemeral port, started from the tree scripts/install-moto.sh extracts into .ferry-cache/moto.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { listenOn } from '../lab/listen.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// Debian's interpreter: the extracted packages are built for it, not for another python3 on PATH.
const PYTHON = '/usr/bin/python3';

export function motoPythonPath(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env['FERRY_CACHE_DIR'] ?? join(ROOT, '.ferry-cache');
  return join(cache, 'moto', 'usr', 'lib', 'python3', 'dist-packages');
}

export interface Moto {
  endpoint: string;
  port: number;
  /** Kills moto (SIGKILL): an S3 outage, for tests of what a client does when the server goes. */
  kill(): void;
  stop(): Promise<void>;
}

async function freePort(host: string): Promise<number> {
  const srv = createServer();
  const port = await listenOn(srv, 0, host);
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

export async function startMoto(opts: { timeoutMs?: number; host?: string } = {}): Promise<Moto> {
  const path = motoPythonPath();
  if (!existsSync(join(path, 'moto')))
    throw new Error(`moto is not installed in ${path}: run \`bash scripts/install-moto.sh\` (as root)`);
  const host = opts.host ?? '127.0.0.1';
  // moto cannot report a port it chose itself: take a free one and hand it over (a small race, retried).
  for (let attempt = 0; ; attempt++) {
    const port = await freePort(host);
    const child = spawn(PYTHON, ['-m', 'moto.server', '-H', host, '-p', String(port)], {
      env: {
        PATH: process.env['PATH'] ?? '/usr/bin:/bin',
        PYTHONPATH: path,
        HOME: process.env['HOME'] ?? '/tmp',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString('utf8')).slice(-4000);
    });
    const endpoint = `http://${host}:${port}`;
    const up = await waitUp(endpoint, child, opts.timeoutMs ?? 20_000);
    if (up) {
      return {
        endpoint,
        port,
        kill: () => {
          child.kill('SIGKILL');
        },
        stop: () => stopChild(child),
      };
    }
    await stopChild(child);
    if (attempt >= 2) throw new Error(`moto did not start on ${endpoint}: ${stderr.trim()}`);
  }
}

async function waitUp(endpoint: string, child: ChildProcess, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) return false;
    try {
      const res = await fetch(`${endpoint}/moto-api/`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      return true;
    } catch {
      await sleep(100);
    }
  }
  return false;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}
