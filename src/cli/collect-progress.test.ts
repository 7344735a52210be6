import { describe, expect, it } from 'vitest';
import { collectProgress } from './collect-progress.js';
import { memoryIo } from './io.js';

describe('collectProgress', () => {
  it('on a terminal: one overwritten line with the list, lists done, objects so far and rate', () => {
    const io = memoryIo({ isTTY: true });
    let now = 0;
    const p = collectProgress(io, 18, () => now);
    now = 1000;
    p.show({ kind: 'list-done', list: 'nodes', objects: 1000, ms: 1000 });
    now = 2000;
    p.show({ kind: 'page', list: 'pods', objects: 3000 });
    now = 2050; // within 100 ms of the last line: not redrawn
    p.show({ kind: 'page', list: 'pods', objects: 3500 });
    p.show({
      kind: 'list-retry',
      list: 'pods',
      what: 'page 8: HTTP 429 (Retry-After 1 s); asking again in 1 s',
    });
    p.clear();
    expect(io.out).toBe('');
    expect(io.err.split('\r\x1b[K')).toEqual([
      '',
      'listed nodes · 1/18 lists · 1,000 objects · 1,000/s',
      'listing pods: 3,000 · 1/18 lists · 4,000 objects · 2,000/s',
      'pods: page 8: HTTP 429 (Retry-After 1 s); asking again in 1 s\n',
    ]);
  });

  it("progress goes to stderr, so stderr's terminal decides: stdout on a terminal, stderr to a file gets plain lines", () => {
    const toFile = memoryIo({ isTTY: true, stderrIsTTY: false });
    const p = collectProgress(toFile, 2, () => 0);
    p.show({ kind: 'page', list: 'pods', objects: 500 });
    p.show({ kind: 'list-done', list: 'pods', objects: 500, ms: 1_000 });
    p.clear();
    expect(toFile.err).toBe('listed pods: 500 in 1.0 s\n');
    // stdout redirected (ferry collect > snapshot.json), stderr still the terminal: the live line.
    const redirected = memoryIo({ isTTY: false, stderrIsTTY: true });
    const q = collectProgress(redirected, 2, () => 0);
    q.show({ kind: 'page', list: 'pods', objects: 500 });
    expect(redirected.err).toContain('\r\x1b[Klisting pods: 500');
  });

  it('not on a terminal: a line per list when it is done, and every retry, nothing else', () => {
    const io = memoryIo({ isTTY: false });
    const p = collectProgress(io, 18, () => 0);
    p.show({ kind: 'step', text: 'contacting https://127.0.0.1:6443' });
    p.show({ kind: 'page', list: 'pods', objects: 500 });
    p.show({ kind: 'list-retry', list: 'pods', what: 'the continue token expired' });
    p.show({ kind: 'list-done', list: 'pods', objects: 30_000, ms: 9_240 });
    p.show({ kind: 'list-skipped', list: 'csidrivers', why: 'forbidden' });
    p.show({ kind: 'list-absent', list: 'applications.argoproj.io' });
    p.clear();
    expect(io.err).toBe(
      'pods: the continue token expired\nlisted pods: 30,000 in 9.2 s\ncsidrivers: not observed (forbidden)\napplications.argoproj.io: none (not served here: its controller is not installed)\n',
    );
  });
});
