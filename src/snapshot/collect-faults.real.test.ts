/**
 * Lists that fail half-way, against the lab API server (127.0.131.1) through the real adapter and
 * the real CLI: the connection drops (a restarting server), the server throttles (429 with
 * Retry-After), the continue token expires (410). Each resumes or starts the list over, says so on
 * stderr, and the snapshot holds every pod once; a list that keeps failing ends with an error
 * naming it, and no snapshot (nor its temporary directory) is left behind.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { memoryIo } from '../cli/io.js';
import { runCli } from '../cli/run-cli.js';
import type { ListFaultAnswer, ListPage } from '../lab/apiserver/list-fault.js';
import { MemoryStore } from '../lab/apiserver/memory-store.js';
import { def, objectKey } from '../lab/apiserver/resources.js';
import { type LabApiFixture, startLabApi, writeAdminKubeconfig } from '../lab/apiserver/testing.js';
import { readSavedSnapshot } from './store.js';

const HOST = '127.0.131.1';
/** More than two pages of kubectl's and ferry's page size (500). */
const PODS = 1_200;

let lab: LabApiFixture;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  const store = new MemoryStore();
  lab = await startLabApi({ host: HOST, store });
  const pods = def('', 'pods');
  for (let i = 0; i < PODS; i++) {
    const name = `p-${String(i).padStart(4, '0')}`;
    await store.create(objectKey(pods, 'default', name), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default', uid: `uid-${i}`, creationTimestamp: '2026-12-01T00:00:00Z' },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox:1.36' }] },
    });
  }
  dir = mkdtempSync(join(tmpdir(), 'ferry-collect-faults-'));
  kubeconfig = join(dir, 'kubeconfig');
  await writeAdminKubeconfig(lab, kubeconfig);
});
afterAll(async () => {
  await lab?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => lab.server.setListFault(undefined));

/** Answers `answer` to the pods list's continued pages, `times` times (Infinity: always). */
function onPodPages(answer: ListFaultAnswer, times: number): { seen: () => number } {
  let n = 0;
  lab.server.setListFault((p: ListPage) => {
    if (p.plural !== 'pods' || !p.continued || n >= times) return undefined;
    n++;
    return answer;
  });
  return { seen: () => n };
}

async function snapshot(name: string) {
  const io = memoryIo({ cwd: dir });
  const code = await runCli(['snapshot', '--kubeconfig', kubeconfig, '-o', name], io);
  return { code, out: io.out, err: io.err, path: join(dir, name) };
}

async function podNames(path: string): Promise<string[]> {
  return (await readSavedSnapshot(path)).resources.pods.map((p) => p.metadata.name);
}

const ALL = Array.from({ length: PODS }, (_, i) => `p-${String(i).padStart(4, '0')}`);

describe('a pods list that fails half-way', () => {
  it('connection dropped: the page is asked for again and the list resumes', async () => {
    const fault = onPodPages({ kind: 'reset' }, 1);
    const r = await snapshot('reset');
    expect(r.code, r.err).toBe(0);
    expect(fault.seen()).toBe(1);
    expect(r.err).toMatch(/^pods: page 2: connection lost; asking again in 0\.25 s \(attempt 2 of 5\)$/m);
    expect(await podNames(r.path)).toEqual(ALL);
  });

  it('429 with Retry-After: waits as told, then resumes', async () => {
    onPodPages({ kind: 'throttle', retryAfterSeconds: 1 }, 1);
    const t0 = Date.now();
    const r = await snapshot('throttle');
    expect(r.code, r.err).toBe(0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_000);
    expect(r.err).toMatch(
      /^pods: page 2: HTTP 429 TooManyRequests \(Retry-After 1 s\); asking again in 1 s \(attempt 2 of 5\)$/m,
    );
    expect(await podNames(r.path)).toEqual(ALL);
  });

  it('continue token expired: the list starts over and holds every pod once', async () => {
    onPodPages({ kind: 'expire' }, 1);
    const r = await snapshot('expire');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(
      /^pods: the continue token expired \(HTTP 410 Gone\) after 500 objects; listing again from the start \(restart 1 of 3\)$/m,
    );
    expect(r.err).toMatch(/^listed pods: 1,200 in /m);
    expect(await podNames(r.path)).toEqual(ALL);
  });

  it('expired on every attempt: the last one asks for the whole list in one request', async () => {
    onPodPages({ kind: 'expire' }, Number.POSITIVE_INFINITY);
    const r = await snapshot('expire-always');
    expect(r.code, r.err).toBe(0);
    expect(r.err.match(/continue token expired/g)).toHaveLength(3);
    expect(r.err).toMatch(/listing again from the start in one request \(restart 3 of 3\)$/m);
    expect(await podNames(r.path)).toEqual(ALL);
  });

  it('a connection that keeps dropping: bounded retries, an error naming the list, no snapshot', async () => {
    onPodPages({ kind: 'reset' }, Number.POSITIVE_INFINITY);
    const r = await snapshot('never');
    expect(r.code).toBe(2);
    expect(r.err.match(/^pods: page 2: connection lost/gm)).toHaveLength(4);
    expect(r.err).toMatch(
      /listing v1 pods failed: cannot reach the Kubernetes API server at 127\.0\.131\.1:\d+: connection reset \(gave up after 5 attempts\); no snapshot was written/,
    );
    expect(r.out).toBe('');
    // Neither the snapshot nor its temporary directory: nothing half-written anywhere.
    expect(
      readdirSync(dir).filter(
        (f) => f !== 'kubeconfig' && !['reset', 'throttle', 'expire', 'expire-always'].includes(f),
      ),
    ).toEqual([]);
  });
});
