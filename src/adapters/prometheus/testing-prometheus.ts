/**
 * Test support: a real Prometheus (Debian's `prometheus`, scripts/install-prometheus.sh) on
 * 127.0.0.1 with an ephemeral port, scraping a test exporter every second, its TSDB in a
 * temporary directory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { listenOn } from '../../lab/listen.js';

export const PROMETHEUS_BIN = '/usr/bin/prometheus';

export function prometheusMissing(): string | undefined {
  return existsSync(PROMETHEUS_BIN)
    ? undefined
    : `${PROMETHEUS_BIN} is missing: run \`bash scripts/install-prometheus.sh\` (as root)`;
}

export interface TestPrometheus {
  url: string;
  /** The exporter's gauges, as it serves them on the next scrape. */
  metrics: Map<string, number>;
  /** Waits until Prometheus has scraped `query` at least once. */
  scraped(query: string, timeoutMs?: number): Promise<void>;
  kill(): void;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  const port = await listenOn(srv, 0, '127.0.0.1');
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

export async function startPrometheus(): Promise<TestPrometheus> {
  const metrics = new Map<string, number>();
  const exporter = createHttpServer((_req, res) => {
    res.setHeader('content-type', 'text/plain; version=0.0.4');
    res.end([...metrics].map(([k, v]) => `${k} ${v}\n`).join(''));
  });
  const exporterPort = await listenOn(exporter, 0, '127.0.0.1');
  const dir = await mkdtemp(join(tmpdir(), 'ferry-prom-'));
  await writeFile(
    join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: app\n    static_configs:\n      - targets: ['127.0.0.1:${exporterPort}']\n`,
  );
  const cleanup = async () => {
    exporter.close();
    await rm(dir, { recursive: true, force: true });
  };
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child = spawn(
      PROMETHEUS_BIN,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString('utf8')).slice(-4000);
    });
    const url = `http://127.0.0.1:${port}`;
    if (await waitUp(url, child)) {
      return {
        url,
        metrics,
        scraped: async (query, timeoutMs = 20_000) => {
          const deadline = Date.now() + timeoutMs;
          while (Date.now() < deadline) {
            const r = (await (
              await fetch(`${url}/api/v1/query?query=${encodeURIComponent(query)}`)
            ).json()) as {
              data?: { result?: unknown[] };
            };
            if ((r.data?.result?.length ?? 0) > 0) return;
            await sleep(200);
          }
          throw new Error(`Prometheus did not scrape ${query} within ${timeoutMs} ms`);
        },
        kill: () => child.kill('SIGKILL'),
        stop: async () => {
          await stopChild(child);
          await cleanup();
        },
      };
    }
    await stopChild(child);
    if (attempt >= 2) {
      await cleanup();
      throw new Error(`Prometheus did not start on ${url}: ${stderr.trim()}`);
    }
  }
}

async function waitUp(url: string, child: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) return false;
    try {
      const res = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.ok) return true;
    } catch {
      // not yet
    }
    await sleep(100);
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
