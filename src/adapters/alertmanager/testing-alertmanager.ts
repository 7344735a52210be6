/**
 * Test support: a real Alertmanager (Debian's prometheus-alertmanager, scripts/install-alertmanager.sh)
 * on 127.0.0.1 with an ephemeral port, clustering off (its gossip port would listen on every
 * address), state in a temporary directory. `fire` posts alerts through its API as Prometheus does.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { listenOn } from '../../lab/listen.js';

export const ALERTMANAGER_BIN = '/usr/bin/prometheus-alertmanager';

export function alertmanagerMissing(): string | undefined {
  return existsSync(ALERTMANAGER_BIN)
    ? undefined
    : `${ALERTMANAGER_BIN} is missing: run \`bash scripts/install-alertmanager.sh\` (as root)`;
}

export interface TestAlertmanager {
  url: string;
  /** Posts alerts (labels each) as firing now, ending in `forMs` (default 10 min). */
  fire(alerts: Record<string, string>[], forMs?: number): Promise<void>;
  /** Resolves alerts (their labels) now. */
  resolve(alerts: Record<string, string>[]): Promise<void>;
  silences(): Promise<
    { id: string; status: { state: string }; matchers: unknown[]; comment: string; createdBy: string }[]
  >;
  kill(): void;
  stop(): Promise<void>;
}

const CONFIG = `route:
  receiver: none
receivers:
  - name: none
`;

async function freePort(): Promise<number> {
  const srv = createServer();
  const port = await listenOn(srv, 0, '127.0.0.1');
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

export async function startAlertmanager(): Promise<TestAlertmanager> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-am-'));
  await writeFile(join(dir, 'alertmanager.yml'), CONFIG);
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const child = spawn(
      ALERTMANAGER_BIN,
      [
        `--config.file=${join(dir, 'alertmanager.yml')}`,
        `--storage.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--cluster.listen-address=',
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
      const post = async (alerts: Record<string, string>[], endsAt: Date) => {
        const res = await fetch(`${url}/api/v2/alerts`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(
            alerts.map((labels) => ({
              labels,
              startsAt: new Date(Math.min(Date.now(), endsAt.getTime() - 1000)).toISOString(),
              endsAt: endsAt.toISOString(),
            })),
          ),
        });
        if (!res.ok) throw new Error(`posting alerts: HTTP ${res.status}: ${await res.text()}`);
      };
      return {
        url,
        fire: (alerts, forMs = 600_000) => post(alerts, new Date(Date.now() + forMs)),
        resolve: (alerts) => post(alerts, new Date(Date.now() - 1000)),
        silences: async () => (await fetch(`${url}/api/v2/silences`)).json() as never,
        kill: () => child.kill('SIGKILL'),
        stop: async () => {
          await stopChild(child);
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
    await stopChild(child);
    if (attempt >= 2) {
      await rm(dir, { recursive: true, force: true });
      throw new Error(`Alertmanager did not start on ${url}: ${stderr.trim()}`);
    }
  }
}

async function waitUp(url: string, child: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + 20_000;
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
