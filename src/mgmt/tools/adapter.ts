/**
 * The one way `ferry mgmt` runs kind, clusterctl, kubectl, helm and docker/podman: as subprocesses
 * with their version checked, a clear error when one is missing, every output line handed to a sink
 * (the journal) with secrets masked, and secrets never on a command line: a call whose argv or
 * environment holds a registered secret value is refused before anything is spawned. Secrets reach a
 * tool on stdin only (a Secret manifest, Helm values).
 */
import { spawn } from 'node:child_process';
import { FerryError } from '../../errors.js';
import { compare, type Semver, show, TOOLS, type ToolName } from './versions.js';

export interface ToolCall {
  tool: ToolName;
  args: string[];
  /** Text written to the tool's stdin (the only way a secret reaches it besides a 0600 file). */
  stdin?: string;
  env?: Record<string, string>;
  /** The output is secret (a kubeconfig): returned, never handed to the sink. */
  secretOutput?: boolean;
}

export interface ToolResult {
  code: number;
  stdout: string;
  stderr: string;
}

export type Stream = 'stdout' | 'stderr';

/** Where output lines go while a tool runs (the journal, the terminal). */
export type OutputSink = (tool: ToolName, stream: Stream, line: string) => void;

export interface ToolsOptions {
  /** The environment children inherit (PATH finds the tools). */
  env: NodeJS.ProcessEnv;
  sink: OutputSink;
  /** Environment variables never passed on (e.g. the one holding the Proxmox token secret). */
  dropEnv?: string[];
}

/** Secret values registered once; every call is checked against them. */
export class SecretValues {
  private readonly values = new Set<string>();
  add(value: string): void {
    // Very short values would mask half of every line; a secret that short is refused elsewhere.
    if (value.length >= 6) this.values.add(value);
  }
  in(text: string): boolean {
    for (const v of this.values) if (text.includes(v)) return true;
    return false;
  }
  mask(text: string): string {
    let out = text;
    for (const v of this.values) out = out.split(v).join('<redacted>');
    return out;
  }
}

export class Tools {
  readonly secrets = new SecretValues();
  private readonly versions = new Map<ToolName, Semver>();

  constructor(private readonly opts: ToolsOptions) {}

  /** Runs a tool; a non-zero exit is returned, not thrown (the stage decides what it means). */
  async run(call: ToolCall): Promise<ToolResult> {
    this.refuseSecretsOnCommandLine(call);
    const env: NodeJS.ProcessEnv = { ...this.opts.env, ...call.env };
    for (const k of this.opts.dropEnv ?? []) delete env[k];
    return await new Promise<ToolResult>((resolveRun, reject) => {
      const child = spawn(call.tool, call.args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Record<Stream, string[]> = { stdout: [], stderr: [] };
      const pending: Record<Stream, string> = { stdout: '', stderr: '' };
      const take = (stream: Stream, chunk: Buffer) => {
        const text = chunk.toString('utf8');
        out[stream].push(text);
        if (call.secretOutput && stream === 'stdout') return;
        const lines = (pending[stream] + text).split('\n');
        pending[stream] = lines.pop() ?? '';
        for (const l of lines) this.opts.sink(call.tool, stream, this.secrets.mask(l));
      };
      child.stdout.on('data', (c: Buffer) => take('stdout', c));
      child.stderr.on('data', (c: Buffer) => take('stderr', c));
      child.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') reject(missingTool(call.tool, err));
        else reject(new FerryError('internal', `cannot run ${call.tool}: ${err.message}`, { cause: err }));
      });
      child.on('close', (code, signal) => {
        for (const s of ['stdout', 'stderr'] as const) {
          if (pending[s] !== '' && !(call.secretOutput && s === 'stdout'))
            this.opts.sink(call.tool, s, this.secrets.mask(pending[s]));
        }
        resolveRun({
          code: code ?? (signal ? 128 : 1),
          stdout: out.stdout.join(''),
          stderr: out.stderr.join(''),
        });
      });
      child.stdin.on('error', () => {
        // A tool that exits without reading stdin closes the pipe; its exit code says what happened.
      });
      child.stdin.end(call.stdin ?? '');
    });
  }

  /** Runs a tool and throws its stderr when it fails. */
  async ok(call: ToolCall, what: string, remediation: string): Promise<ToolResult> {
    const r = await this.run(call);
    if (r.code !== 0) throw toolFailed(call, r, what, remediation, this.secrets);
    return r;
  }

  /** The version of a tool, checked against its supported range; the answer is kept. */
  async version(tool: ToolName): Promise<Semver> {
    const known = this.versions.get(tool);
    if (known) return known;
    const spec = TOOLS[tool];
    const r = await this.run({ tool, args: spec.versionArgs });
    const v = r.code === 0 ? spec.parse(r.stdout) : undefined;
    if (!v)
      throw new FerryError(
        'input',
        `cannot read the version of ${tool}: \`${tool} ${spec.versionArgs.join(' ')}\` ${r.code === 0 ? `printed ${JSON.stringify(r.stdout.trim().slice(0, 120))}` : `exited ${r.code}: ${r.stderr.trim().slice(0, 200)}`}`,
        { remediation: `check that the ${tool} on PATH is the real one; ${spec.install}` },
      );
    if (compare(v, spec.min) < 0 || compare(v, spec.below) >= 0)
      throw new FerryError(
        'input',
        `${tool} ${show(v)} is not supported: ferry needs ${show(spec.min)} up to (not including) ${show(spec.below)}`,
        {
          remediation: spec.install,
        },
      );
    this.versions.set(tool, v);
    return v;
  }

  /** docker or podman, whichever kind will use (KIND_EXPERIMENTAL_PROVIDER, else docker first: mgmt.md §1). */
  async runtime(): Promise<'docker' | 'podman'> {
    const asked = this.opts.env['KIND_EXPERIMENTAL_PROVIDER'];
    if (asked === 'podman' || asked === 'docker') {
      await this.version(asked);
      return asked;
    }
    try {
      await this.version('docker');
      return 'docker';
    } catch (dockerErr) {
      try {
        await this.version('podman');
        return 'podman';
      } catch {
        throw new FerryError(
          'input',
          'kind needs a container runtime: neither docker nor podman works here',
          {
            remediation: `${TOOLS.docker.install}; with Podman, export KIND_EXPERIMENTAL_PROVIDER=podman`,
            cause: dockerErr,
          },
        );
      }
    }
  }

  private refuseSecretsOnCommandLine(call: ToolCall): void {
    const where = [
      ...call.args.map((a, i) => ({ text: a, place: `argument ${i + 1}` })),
      ...Object.entries(call.env ?? {}).map(([k, v]) => ({ text: v, place: `environment variable ${k}` })),
    ];
    for (const w of where) {
      if (this.secrets.in(w.text))
        throw new FerryError(
          'internal',
          `refusing to run ${call.tool}: a secret would be on its command line (${w.place})`,
          {
            remediation: 'report this: secrets go to tools on stdin or in 0600 files',
          },
        );
    }
  }
}

function missingTool(tool: ToolName, cause: unknown): FerryError {
  return new FerryError('input', `${tool} is not installed (not found on PATH)`, {
    remediation: TOOLS[tool].install,
    cause,
  });
}

export function toolFailed(
  call: ToolCall,
  r: ToolResult,
  what: string,
  remediation: string,
  secrets: SecretValues,
): FerryError {
  const tail = secrets.mask((r.stderr.trim() || r.stdout.trim()).split('\n').slice(-8).join('\n'));
  return new FerryError(
    'gate',
    `${what}: \`${call.tool} ${call.args.join(' ')}\` exited ${r.code}${tail ? `:\n${tail}` : ''}`,
    {
      remediation,
    },
  );
}
