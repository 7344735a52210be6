/**
 * The lab's side of LabControl (adapters/provisioners/lab-control.ts): what `ferry run` asks of a
 * lab, done on a LabCluster in this process. It lives in the lab because it drives the lab's own
 * servers; a run in another process reaches it through serveLabControl/remoteLabControl.
 */
import { readFile } from 'node:fs/promises';
import { type LabControl, labNodeName } from '../adapters/provisioners/lab-control.js';
import { FerryError } from '../errors.js';
import { CONTROL_PLANE_TAINT } from '../knowledge/talos-config.js';
import { API_PORT, type LabCluster } from './cluster.js';
import {
  machineConfigAllowsScheduling,
  machineConfigNodeLabels,
  machineConfigNodeTaints,
} from './provisioner/machine-labels.js';

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
