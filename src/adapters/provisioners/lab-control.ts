/**
 * What `ferry run` asks of a lab: boot and power off machines, edit the load balancer, stop an
 * apiserver instance, and report on them. `localLabControl` (lab/control.ts) acts on a LabCluster
 * in this process (rehearse); `serveLabControl`/`remoteLabControl` carry the same calls over a unix socket, so a
 * run can be a separate process from the lab holding the servers — and can be SIGKILLed without
 * taking the lab with it.
 */

import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import { FerryError, type FerryErrorKind } from '../../errors.js';
import type { MachineState, ProvisionRequest, ProvisionResult } from '../../ports/run.js';

export interface LabControl {
  provision(req: ProvisionRequest): Promise<ProvisionResult>;
  decommission(node: string): Promise<void>;
  machineState(node: string): Promise<MachineState | undefined>;
  lb(op: 'add' | 'remove', node: string): Promise<void>;
  inRotation(node: string): Promise<boolean | undefined>;
  apiserverServing(node: string): Promise<boolean | undefined>;
  stopApiserver(node: string): Promise<void>;
  /** Which etcd binaries stand in for which versions. */
  standIn(): Promise<{ lab: string; snapshot: string | undefined; note: string }>;
}

/** A Talos replacement's name when the plan leaves it to the provisioner. */
/**
 * The plan's name, or the one Talos would choose: a stable hostname "talos-xxx-yyy" from the
 * machine id, here derived from the node replaced, so that a resumed run finds the same machine.
 */
export function labNodeName(req: ProvisionRequest): string {
  if (req.name) return req.name;
  const h = BigInt(
    `0x${createHash('sha256').update(`lab-machine-id/${req.replaces}`).digest('hex').slice(0, 12)}`,
  )
    .toString(36)
    .padStart(6, '0');
  return `talos-${h.slice(0, 3)}-${h.slice(3, 6)}`;
}

// ---- over a unix socket -------------------------------------------------------------------------

type Call = { method: keyof LabControl; args: unknown[] };
type Reply =
  | { ok: true; value: unknown }
  | { ok: false; message: string; kind: FerryErrorKind; remediation?: string };

export async function serveLabControl(
  control: LabControl,
  socketPath: string,
): Promise<{ close(): Promise<void> }> {
  await rm(socketPath, { force: true });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        let reply: Reply;
        try {
          const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Call;
          const fn = control[call.method] as ((...a: unknown[]) => Promise<unknown>) | undefined;
          if (typeof fn !== 'function')
            throw new FerryError('usage', `lab control has no method ${String(call.method)}`);
          reply = { ok: true, value: (await fn.apply(control, call.args)) ?? null };
        } catch (err) {
          const fe = err instanceof FerryError ? err : undefined;
          reply = {
            ok: false,
            message: (err as Error)?.message ?? String(err),
            kind: fe?.kind ?? 'internal',
            ...(fe?.remediation !== undefined && { remediation: fe.remediation }),
          };
        }
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(reply));
      })();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await rm(socketPath, { force: true });
    },
  };
}

export function remoteLabControl(socketPath: string, timeoutMs = 120_000): LabControl {
  const call = (method: keyof LabControl, ...args: unknown[]): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ method, args } satisfies Call);
      const req = request(
        {
          socketPath,
          path: '/call',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            try {
              const r = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Reply;
              if (r.ok) resolve(r.value === null ? undefined : r.value);
              else
                reject(
                  new FerryError(
                    r.kind,
                    `lab: ${r.message}`,
                    r.remediation !== undefined ? { remediation: r.remediation } : {},
                  ),
                );
            } catch (err) {
              reject(err);
            }
          });
        },
      );
      req.on('timeout', () =>
        req.destroy(new Error(`lab control ${method}: no answer within ${timeoutMs} ms`)),
      );
      req.on('error', (err) =>
        reject(
          new FerryError('unreachable', `cannot reach the lab at ${socketPath}: ${err.message}`, {
            remediation:
              'start the lab first (ferry lab up, or the rehearsal holding it) and pass its control socket',
            cause: err,
          }),
        ),
      );
      req.end(body);
    });
  return {
    provision: (req) => call('provision', req) as Promise<ProvisionResult>,
    decommission: async (node) => void (await call('decommission', node)),
    machineState: (node) => call('machineState', node) as Promise<MachineState | undefined>,
    lb: async (op, node) => void (await call('lb', op, node)),
    inRotation: (node) => call('inRotation', node) as Promise<boolean | undefined>,
    apiserverServing: (node) => call('apiserverServing', node) as Promise<boolean | undefined>,
    stopApiserver: async (node) => void (await call('stopApiserver', node)),
    standIn: () => call('standIn') as Promise<{ lab: string; snapshot: string | undefined; note: string }>,
  };
}
