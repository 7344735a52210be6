/**
 * What `ferry run` asks of a lab: boot and power off machines, edit the load balancer, stop an
 * apiserver instance, and report on them. `localLabControl` acts on a LabCluster in this process
 * (rehearse); `serveLabControl`/`remoteLabControl` carry the same calls over a unix socket, so a
 * run can be a separate process from the lab holding the servers — and can be SIGKILLed without
 * taking the lab with it.
 */

import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import { FerryError, type FerryErrorKind } from '../../errors.js';
import { CONTROL_PLANE_TAINT } from '../../knowledge/talos-config.js';
import type { LabCluster } from '../../lab/cluster.js';
import { API_PORT } from '../../lab/cluster.js';
import {
  machineConfigAllowsScheduling,
  machineConfigNodeLabels,
  machineConfigNodeTaints,
} from '../../lab/provisioner/machine-labels.js';
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

/**
 * The replaced node's size, so that its replacement is a like-for-like machine (the pods it held
 * must fit again); nothing when the lab cannot say (then the lab's default size).
 */
async function sizeOf(
  lab: LabCluster,
  replaces: string,
): Promise<{ capacity?: { cpu: string; memory: string; pods: string } }> {
  const node = await lab.client
    .get<{ status?: { allocatable?: Record<string, string> } }>(
      `/api/v1/nodes/${encodeURIComponent(replaces)}`,
    )
    .catch(() => undefined);
  const c = node?.status?.allocatable;
  return c?.cpu && c.memory && c.pods ? { capacity: { cpu: c.cpu, memory: c.memory, pods: c.pods } } : {};
}

export function localLabControl(lab: LabCluster): LabControl {
  const labIp = (node: string): string | undefined =>
    lab.provisioner.node(node)?.labAddress ?? lab.addresses.byName(node)?.lab;
  const backend = (node: string): string => {
    const ip = labIp(node);
    if (!ip) throw new FerryError('usage', `the lab has no node named ${node}`);
    return `${ip}:${API_PORT}`;
  };
  return {
    async provision(req) {
      const name = labNodeName(req);
      const known = lab.provisioner.node(name);
      // A run killed during provisioning asks again on resume: the same machine, not a second one.
      if (known && known.flavor === 'talos' && known.state !== 'decommissioned') {
        return { name, address: known.labAddress };
      }
      // The labels the kit carried over from the node replaced (a pool label a nodeSelector needs),
      // and whether its control planes take workloads (untainted kubeadm control planes).
      const config = req.machineConfig
        ? await readFile(req.machineConfig, 'utf8').catch((err: unknown) => {
            throw new FerryError('input', `cannot read the machine config ${req.machineConfig}`, {
              cause: err,
              remediation: 'regenerate the kit (`ferry generate`) or give the plan the kit it was built with',
            });
          })
        : undefined;
      const allowScheduling = config === undefined ? undefined : machineConfigAllowsScheduling(config);
      const spec = {
        name,
        address: req.address ?? '',
        talosVersion: req.talosVersion,
        labels: config === undefined ? {} : machineConfigNodeLabels(config),
        // The control-plane taint follows allowSchedulingOnControlPlanes, as Talos sets it itself.
        taints:
          config === undefined
            ? []
            : machineConfigNodeTaints(config).filter((t) => t.key !== CONTROL_PLANE_TAINT),
        ...(allowScheduling !== undefined && { allowSchedulingOnControlPlanes: allowScheduling }),
        ...(await sizeOf(lab, req.replaces)),
      };
      const rec =
        req.role === 'controlplane'
          ? await lab.provisioner.provisionControlPlane(spec, { wait: false })
          : await lab.provisioner.provisionWorker(spec);
      return { name, address: rec.labAddress };
    },
    async decommission(node) {
      await lab.provisioner.decommission(node);
    },
    async machineState(node) {
      const rec = lab.provisioner.node(node);
      if (!rec) return undefined;
      if (rec.state === 'decommissioned') return 'decommissioned';
      return rec.flavor === 'talos' ? 'provisioned' : 'running';
    },
    async lb(op, node) {
      // Deregistration lets open connections finish, as an LB with connection draining does.
      if (op === 'add') lab.lb.addBackend(backend(node));
      else lab.lb.removeBackend(backend(node), { drain: true });
    },
    async inRotation(node) {
      const ip = labIp(node);
      if (!ip) return undefined;
      return lab.lb.backends().some((b) => b.address === `${ip}:${API_PORT}`);
    },
    async apiserverServing(node) {
      const s = lab.apiServer(node);
      return s !== undefined && s.down === undefined;
    },
    async stopApiserver(node) {
      await lab.stopApiServer(node);
    },
    async standIn() {
      return lab.info().etcd.standIn;
    },
  };
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
