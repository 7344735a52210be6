/**
 * `ferry audit … | head -c 100` or `| true`: the reader goes away before ferry is done writing.
 * Every report format ends as a full run does (same exit code) with nothing on stderr: no EPIPE
 * stack trace. The reader here closes at once, so that every format's first write meets the
 * closed pipe (a report written in one write smaller than the pipe's buffer would not, after
 * `head` took its bytes).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FORMATS = ['table', 'json', 'yaml', 'sarif', 'junit', 'md', 'html'] as const;

function audit(format: string, closeAtOnce: boolean) {
  return new Promise<{ code: number | null; stderr: string; read: number }>((done, fail) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'audit', 'examples/lab-cluster', '-o', format],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    let read = 0;
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    if (closeAtOnce) child.stdout.destroy();
    else
      child.stdout.on('data', (d: Buffer) => {
        read += d.length;
      });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stderr, read }));
  });
}

describe('a report whose reader closes the pipe', () => {
  it.each(FORMATS)('%s: the same exit code as a full run, nothing on stderr', async (format) => {
    const [full, cut] = await Promise.all([audit(format, false), audit(format, true)]);
    expect(full.stderr).toBe('');
    expect(full.read).toBeGreaterThan(0);
    expect(cut.stderr).toBe('');
    expect(cut.code).toBe(full.code);
  });
});
