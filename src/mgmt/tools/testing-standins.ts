/**
 * Stand-in executables on PATH for the bootstrap's contract tests: one directory of wrappers (kind,
 * clusterctl, kubectl, helm, docker) that run src/mgmt/tools/testing-standin.mjs, a script of rules with the
 * tools' recorded outputs, and the record of every call.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface Rule {
  tool: string;
  /** A regular expression matched against the arguments joined by spaces. */
  match: string;
  stdout?: string;
  stderr?: string;
  code?: number;
  times?: number;
  after?: string;
  unless?: string;
  mark?: string;
  sleepMs?: number;
  writeFiles?: { afterArg: string; name?: string; content: string }[];
  /** Do what `clusterctl move --from-directory` does, with the real kubectl (standin-from-directory.mjs). */
  fromDirectory?: boolean;
}

export interface Call {
  tool: string;
  args: string[];
  stdin: string;
  env: Record<string, string>;
  pid: number;
}

const STANDIN = join(import.meta.dirname, 'testing-standin.mjs');
export const TOOL_NAMES = ['kind', 'clusterctl', 'kubectl', 'helm', 'docker'] as const;

export class Standins {
  readonly bin: string;
  constructor(readonly dir: string) {
    this.bin = join(dir, 'bin');
    mkdirSync(this.bin, { recursive: true });
    for (const t of TOOL_NAMES) {
      const p = join(this.bin, t);
      writeFileSync(
        p,
        `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(STANDIN)} ${t} "$@"\n`,
      );
      chmodSync(p, 0o755);
    }
  }

  script(rules: Rule[]): void {
    writeFileSync(join(this.dir, 'script.json'), JSON.stringify({ rules }));
  }

  /** An environment whose PATH finds the stand-ins (and sh), nothing else of the machine's tools. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return { PATH: `${this.bin}:/usr/bin:/bin`, HOME: this.dir, FERRY_STANDIN_DIR: this.dir, ...extra };
  }

  calls(): Call[] {
    const p = join(this.dir, 'calls.jsonl');
    if (!existsSync(p)) return [];
    const lines = readFileSync(p, 'utf8').split('\n');
    // The last piece has no newline yet: a stand-in still appending its line (a test polls while
    // the tools run), not a call to read.
    return lines
      .slice(0, -1)
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Call);
  }

  called(tool: string, match: RegExp): Call[] {
    return this.calls().filter((c) => c.tool === tool && match.test(c.args.join(' ')));
  }
}

export const fixture = (name: string) => readFileSync(join(dirname(STANDIN), 'fixtures', name), 'utf8');
