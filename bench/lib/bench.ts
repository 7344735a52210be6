/** The contract between `bench/run.ts` and a benchmark file `bench/<name>.ts`. */
export interface Bench {
  name: string;
  summary: string;
  /** Runs the benchmark and prints its figures; `args` are the flags after the bench's name. */
  run(args: string[]): Promise<void>;
}

export function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export function ms(n: number): string {
  return n >= 10_000 ? `${(n / 1000).toFixed(1)} s` : `${Math.round(n)} ms`;
}
