/**
 * Progress of a live collection on stderr. On a terminal one self-overwriting line (what is being
 * listed, lists done, objects so far, rate), at most ~10 times a second; otherwise one line per
 * list when it is done, so a CI log shows where the time went. Retries and restarts are always
 * said on a line of their own: the operator sees that the server misbehaved and what ferry did.
 * "A terminal" is stderr's, where the progress goes: `ferry collect … > snap.json` on a terminal
 * still shows the live line, `2> log` never fills a log with carriage returns.
 */
import type { CollectEvent } from '../snapshot/collect.js';
import type { Io } from './io.js';

export interface ProgressView {
  show(e: CollectEvent): void;
  /** Removes the live line (before anything else is printed). */
  clear(): void;
}

const n = (x: number) => x.toLocaleString('en-US');

export function collectProgress(io: Io, lists: number, clock: () => number = Date.now): ProgressView {
  const started = clock();
  let done = 0;
  let before = 0; // objects of the lists already done
  let current = 0;
  let currentList = '';
  let step = '';
  let lastDraw = Number.NEGATIVE_INFINITY;
  let shown = false;
  const rate = () => {
    const s = (clock() - started) / 1000;
    return s > 0 ? `${n(Math.round((before + current) / s))}/s` : '';
  };
  const draw = (force: boolean) => {
    const now = clock();
    if (!force && now - lastDraw < 100) return;
    lastDraw = now;
    shown = true;
    const what = currentList ? `listing ${currentList}: ${n(current)}` : step;
    const line = `${what} · ${done}/${lists} lists · ${n(before + current)} objects · ${rate()}`;
    io.stderr(`\r\x1b[K${line.slice(0, 120)}`);
  };
  const clear = () => {
    if (shown) io.stderr('\r\x1b[K');
    shown = false;
  };
  const say = (line: string) => {
    clear();
    io.stderr(`${line}\n`);
  };
  return {
    show(e) {
      switch (e.kind) {
        case 'step':
          step = e.text;
          currentList = '';
          if (io.stderrIsTTY) draw(true);
          return;
        case 'page':
          currentList = e.list;
          current = e.objects;
          if (io.stderrIsTTY) draw(false);
          return;
        case 'list-done':
          done++;
          before += e.objects;
          current = 0;
          currentList = '';
          step = `listed ${e.list}`;
          if (io.stderrIsTTY) draw(true);
          else say(`listed ${e.list}: ${n(e.objects)} in ${(e.ms / 1000).toFixed(1)} s`);
          return;
        case 'list-skipped':
          done++;
          current = 0;
          currentList = '';
          say(`${e.list}: not observed (${e.why})`);
          return;
        case 'list-absent':
          done++;
          current = 0;
          currentList = '';
          step = `${e.list}: not installed`;
          if (io.stderrIsTTY) draw(true);
          else say(`${e.list}: none (not served here: its controller is not installed)`);
          return;
        case 'list-retry':
          say(`${e.list}: ${e.what}`);
          return;
        default: {
          const never: never = e;
          throw new Error(`unknown progress event ${JSON.stringify(never)}`);
        }
      }
    },
    clear,
  };
}
