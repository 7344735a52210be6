/**
 * Runs an operator-supplied shell command (`--provision-cmd`, `--decommission-cmd`, `--lb-cmd`)
 * with the step's facts in its environment, a deadline, and its output streamed to the run log.
 * The command runs in its own process group so that a timeout or an abort ends everything it
 * started (e.g. `tofu apply` and its providers).
 */
import { spawn } from 'node:child_process';
import { FerryError } from '../../errors.js';

export interface HookResult {
  code: number;
  stdout: string;
  stderr: string;
  /** `FERRY_KEY=value` lines the command printed on stdout (how it tells ferry what it created). */
  outputs: Record<string, string>;
}

export interface HookOptions {
  /** What the command is for, for messages: "provision command for cp-1-talos". */
  what: string;
  /** The flag it came from, for the remediation. */
  flag: string;
  command: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  log?: (line: string) => void;
  cwd?: string;
  /** Between SIGTERM and SIGKILL on timeout/abort. Default 5 s. */
  killGraceMs?: number;
}

const OUTPUT_LINE = /^(FERRY_[A-Z_]+)=(.*)$/;

/** Environment for hooks: the caller's, minus etcd's own variables (etcd reads every ETCD_* as a flag). */
function baseEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (/^ETCD(CTL)?_/.test(k)) delete env[k];
  return env;
}

export function runHook(opts: HookOptions): Promise<HookResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', opts.command], {
      env: { ...baseEnv(), ...opts.env },
      cwd: opts.cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let ended: 'timeout' | 'aborted' | undefined;
    const lines = (prefix: string) => {
      let buf = '';
      return (chunk: Buffer) => {
        buf += chunk.toString('utf8');
        const parts = buf.split('\n');
        buf = parts.pop() ?? '';
        for (const p of parts) opts.log?.(`${prefix}${p}`);
      };
    };
    const outLine = lines('  | ');
    const errLine = lines('  ! ');
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
      outLine(c);
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
      errLine(c);
    });
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, sig);
      } catch {
        // already gone
      }
    };
    const stop = (why: 'timeout' | 'aborted') => {
      if (ended) return;
      ended = why;
      killGroup('SIGTERM');
      setTimeout(() => killGroup('SIGKILL'), opts.killGraceMs ?? 5_000).unref();
    };
    const timer = setTimeout(() => stop('timeout'), opts.timeoutMs);
    const onAbort = () => stop('aborted');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(
        new FerryError('input', `${opts.what}: cannot start /bin/sh: ${err.message}`, {
          remediation: `check ${opts.flag}`,
          cause: err,
        }),
      );
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      const tail = (stderr.trim() || stdout.trim()).split('\n').slice(-5).join('\n');
      if (ended === 'timeout') {
        reject(
          new FerryError(
            'gate',
            `${opts.what} did not finish within ${Math.round(opts.timeoutMs / 1000)} s and was stopped`,
            {
              remediation: `check what \`${opts.command}\` was waiting for${tail ? ` (last output: ${tail})` : ''}; fix it, then run ferry run --resume`,
            },
          ),
        );
        return;
      }
      if (ended === 'aborted') {
        reject(
          new FerryError('gate', `${opts.what} was interrupted`, { remediation: 'run ferry run --resume' }),
        );
        return;
      }
      if (code !== 0) {
        reject(
          new FerryError(
            'gate',
            `${opts.what} failed: \`${opts.command}\` exited with ${code === null ? `signal ${signal}` : `code ${code}`}${tail ? `: ${tail}` : ''}`,
            {
              remediation: `fix the command given with ${opts.flag} (it ran with ${Object.keys(opts.env).join(', ')} set) or what it acts on, then run ferry run --resume`,
            },
          ),
        );
        return;
      }
      const outputs: Record<string, string> = {};
      for (const line of stdout.split('\n')) {
        const m = OUTPUT_LINE.exec(line.trim());
        if (m) outputs[m[1]!] = m[2]!;
      }
      resolve({ code: 0, stdout, stderr, outputs });
    });
  });
}
