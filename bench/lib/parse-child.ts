/**
 * Child process of the audit benchmark: how long parsing the resources dump takes, with nothing
 * else. Each file is read in chunks (the reads are not timed), its lines (one object per line, the
 * saved-snapshot layout) decoded to strings and JSON.parse'd a thousand at a time, and the parsed
 * objects are kept alive as the audit keeps them. Two figures:
 * - decodeParseMs: decoding + JSON.parse, wall time, the garbage collection they cause included;
 *   the floor for any reader of the dump, and what the audit is compared against (its CPU time
 *   includes the reads, which are small next to the rest);
 * - parseCallsMs: the JSON.parse calls alone (GC triggered while decoding is not in it).
 * Per line rather than per file because a 150,000-pod file exceeds V8's maximum string length.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

export interface ParseChildResult {
  decodeParseMs: number;
  /** CPU time (user + system, all threads) of decoding + JSON.parse. */
  decodeParseCpuMs: number;
  parseCallsMs: number;
  objects: number;
  bytes: number;
  maxRssBytes: number;
}

/**
 * Reads a file in fixed-size chunks into one reused buffer (so the dump never sits in memory as a
 * whole, as the audit's own reader does not hold it either) and calls `each` with batches of its
 * object lines. Returns the time spent in the reads, which the caller leaves out.
 */
function forEachBatch(path: string, each: (lines: string[]) => void): { readMs: number; bytes: number } {
  const fd = openSync(path, 'r');
  let buf = Buffer.allocUnsafe(8 << 20);
  let have = 0;
  let readMs = 0;
  let bytes = 0;
  let batch: string[] = [];
  const flush = () => {
    if (batch.length) each(batch);
    batch = [];
  };
  try {
    for (;;) {
      if (have === buf.length) {
        // A line longer than the buffer: grow it.
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, have);
        buf = bigger;
      }
      const r0 = performance.now();
      const n = readSync(fd, buf, have, buf.length - have, null);
      readMs += performance.now() - r0;
      bytes += n;
      const end = have + n;
      let start = 0;
      for (;;) {
        const nl = buf.indexOf(10, start);
        if (nl < 0 || nl >= end) break;
        let stop = nl;
        if (stop > start && buf[stop - 1] === 44) stop--; // the separating comma
        const line = buf.toString('utf8', start, stop);
        if (line !== '[' && line !== ']' && line !== '') batch.push(line);
        if (batch.length === 1000) flush();
        start = nl + 1;
      }
      if (n === 0) {
        const rest = buf.toString('utf8', start, end).trim();
        if (rest && rest !== ']') batch.push(rest);
        flush();
        return { readMs, bytes };
      }
      buf.copy(buf, 0, start, end);
      have = end - start;
    }
  } finally {
    closeSync(fd);
  }
}

function main(files: string[]): void {
  const kept: unknown[] = [];
  let parseCallsMs = 0;
  let readMs = 0;
  let bytes = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const f of files) {
    const r = forEachBatch(f, (lines) => {
      const p0 = performance.now();
      for (const l of lines) kept.push(JSON.parse(l));
      parseCallsMs += performance.now() - p0;
    });
    readMs += r.readMs;
    bytes += r.bytes;
  }
  const decodeParseMs = performance.now() - t0 - readMs;
  const c = process.cpuUsage(c0);
  const result: ParseChildResult = {
    decodeParseMs,
    decodeParseCpuMs: (c.user + c.system) / 1000,
    parseCallsMs,
    objects: kept.length,
    bytes,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main(process.argv.slice(2));
