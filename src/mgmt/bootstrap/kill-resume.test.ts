import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { memoryIo } from '../../cli/io.js';
import { runMgmtBootstrap } from '../../cli/mgmt-bootstrap.js';
import { StageJournal } from '../stage-journal.js';
import { Standins } from '../tools/testing-standins.js';
import { happyRules, writeConfig } from './testing-scenario.js';

// A real `ferry mgmt bootstrap` child (the CLI's own entry point) is SIGKILLed while clusterctl
// init runs; the next run must skip what was done and continue at clusterctl init.
const REPO = resolve(import.meta.dirname, '..', '..', '..');
const slowness = Number(process.env['FERRY_TEST_SLOWNESS'] ?? '1');
let dir: string;
let tools: Standins;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ferry-mgmt-kill-'));
  tools = new Standins(dir);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function until(what: string, ok: () => boolean, ms = 60_000 * slowness) {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('kill -9 during clusterctl init: the next run continues at clusterctl init, nothing before it runs again', async () => {
  tools.script([{ tool: 'clusterctl', match: '^init ', times: 1, sleepMs: 600_000 }, ...happyRules()]);
  const config = writeConfig(dir);
  const args = [
    '--import',
    'tsx',
    join(REPO, 'src/cli/main.ts'),
    'mgmt',
    'bootstrap',
    '--config',
    config,
    '--skip-template-check',
  ];
  const child = spawn(process.execPath, args, {
    cwd: REPO,
    env: { ...tools.env(), PATH: `${tools.bin}:${process.env['PATH'] ?? ''}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_code, signal) => r(signal)));
  await until('clusterctl init to start', () => tools.called('clusterctl', /^init /).length === 1);
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  // The stand-in clusterctl it started sleeps on; it is ours to stop.
  const orphan = tools.called('clusterctl', /^init /)[0]?.pid;
  if (orphan) process.kill(orphan, 'SIGKILL');

  const journal = join(dir, '.ferry-mgmt-kmgt', 'bootstrap.journal.sqlite');
  const first = StageJournal.read(journal).events;
  expect(first.map((e) => `${e.stage} ${e.state}`)).toEqual([
    'kind-cluster started',
    'kind-cluster done',
    'clusterctl-config started',
    'clusterctl-config done',
    'clusterctl-init started',
  ]);
  expect(err).toContain('[3/16] clusterctl init');

  const callsBefore = tools.calls().length;
  const io = Object.assign(memoryIo({ cwd: dir }), { env: tools.env() });
  expect(
    await runMgmtBootstrap(['--config', config, '--skip-template-check', '--poll-interval', '0.01'], io),
  ).toBe(0);
  expect(io.err).toMatch(/\[3\/16\] clusterctl init.*\(again: it was in flight when the last run ended\)/);
  expect(io.err).not.toMatch(/\[1\/16\]|\[2\/16\]/);
  const after = tools.calls().slice(callsBefore);
  expect(after.filter((c) => c.tool === 'kind' && c.args[0] !== 'version' && c.args[0] !== 'delete')).toEqual(
    [],
  );
  expect(after.filter((c) => c.tool === 'clusterctl' && c.args[0] === 'init')).toHaveLength(1);
  expect(tools.called('kind', /^create cluster/)).toHaveLength(1);
  const second = StageJournal.read(journal);
  expect(second.events.filter((e) => e.stage === 'clusterctl-init').map((e) => e.state)).toEqual([
    'started',
    'started',
    'done',
  ]);
  expect(second.digests).toHaveLength(2);
  // The killed run's lock was recognised as stale and released by the run that finished.
  expect(existsSync(join(dir, '.ferry-mgmt-kmgt', 'bootstrap.lock'))).toBe(false);
});
