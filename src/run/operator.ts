/**
 * The operator at the terminal: instructions are printed; a question is answered at the prompt
 * when stdin is a terminal, else by creating a file (`STEP.yes` or `STEP.no` in the confirmation
 * directory beside the plan), so a run in a CI job or under nohup can be driven too.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { OperatorPort } from '../ports/run.js';

export interface TerminalOperatorOptions {
  say: (line: string) => void;
  /** Where STEP.yes / STEP.no answers are looked for. */
  confirmDir: string;
  interactive: boolean;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  pollMs?: number;
}

export class TerminalOperator implements OperatorPort {
  readonly #o: TerminalOperatorOptions;

  constructor(opts: TerminalOperatorOptions) {
    this.#o = opts;
  }

  instruct(stepId: string, lines: string[]): void {
    this.#o.say(`[${stepId}] operator action:`);
    for (const l of lines) this.#o.say(`    ${l}`);
  }

  async ask(stepId: string, question: string, signal: AbortSignal): Promise<boolean> {
    if (this.#o.interactive && this.#o.input && this.#o.output) {
      const rl = createInterface({ input: this.#o.input, output: this.#o.output });
      try {
        const a = await rl.question(`[${stepId}] ${question} [y/N] `, { signal });
        return /^y(es)?$/i.test(a.trim());
      } finally {
        rl.close();
      }
    }
    await mkdir(this.#o.confirmDir, { recursive: true });
    const yes = join(this.#o.confirmDir, `${stepId}.yes`);
    const no = join(this.#o.confirmDir, `${stepId}.no`);
    this.#o.say(`[${stepId}] ${question}`);
    this.#o.say(`    answer: touch ${yes}   (or ${no})`);
    for (;;) {
      if (existsSync(yes)) return true;
      if (existsSync(no)) return false;
      await sleep(this.#o.pollMs ?? 1_000, undefined, { signal });
    }
  }
}
