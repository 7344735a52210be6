/**
 * The composition root of a run: adapters built from connection settings, wired to the ports the
 * orchestrator drives. `ferry run`, `ferry rehearse` and the benchmark build their runs here.
 */

import { ManagementCluster } from '../adapters/capi/management.js';
import { MgmtApi } from '../adapters/capi/mgmt-api.js';
import { EtcdAdmin, type EtcdTls } from '../adapters/etcd/admin.js';
import { readEtcdTlsFiles } from '../adapters/etcd/tls-files.js';
import { KubeAdmin } from '../adapters/kube/admin.js';
import { loadKubeconfig } from '../adapters/kube/kubeconfig.js';
import { createRequester } from '../adapters/kube/request.js';
import { readyzProbe, writeReadProbe } from '../adapters/probes/api.js';
import { EtcdProbeProcess } from '../adapters/probes/etcd-process.js';
import { CapiProvisioner } from '../adapters/provisioners/capi.js';
import { ExecLoadBalancer, ExecProvisioner } from '../adapters/provisioners/exec.js';
import {
  LabApiserverStatus,
  LabLoadBalancerAdapter,
  LabOperator,
  LabProvisionerAdapter,
} from '../adapters/provisioners/lab.js';
import type { LabControl } from '../adapters/provisioners/lab-control.js';
import { ManualProvisioner, newTalosNode } from '../adapters/provisioners/manual.js';
import type { CapiKit } from '../capi/kit-objects.js';
import { usageError } from '../errors.js';
import { CrdValidator } from '../generate/schema/crd.js';
import { capiNamesOf } from '../kit/capi-names.js';
import type { OperatorPort, Probe, ProvisionerPort } from '../ports/run.js';
import type { RunDeps } from '../run/deps.js';
import { sealSnapshot } from './snapshot-seal.js';

export type RunProvisioner = 'manual' | 'exec' | 'lab' | 'capi';
/** Who decommissions the old kubeadm machines of a capi run: Cluster API does not. */
export type Decommissioner = Exclude<RunProvisioner, 'capi'>;

export interface CapiConnection {
  /** The management cluster's admin kubeconfig (--mgmt-kubeconfig) and context. */
  kubeconfig: string;
  context?: string;
  /** The kit's Cluster API objects (capi/secrets.yaml, capi/cluster.yaml) and its directory as given. */
  kit: CapiKit;
  decommission: Decommissioner;
  /** How long a Machine may sit in Provisioned without a providerID; default 300 s. */
  providerIdGraceMs?: number;
}

export interface Connection {
  kubeconfig: string;
  context?: string;
  etcd: { endpoints: string[]; caFile: string; certFile: string; keyFile: string };
}

export interface AssembleOptions {
  /** age recipients the etcd-snapshot steps encrypt their snapshots to; none: kept plain (0600). */
  snapshotRecipients?: string[];
  connection: Connection;
  provisioner: RunProvisioner;
  exec?: {
    provisionCmd?: string;
    decommissionCmd?: string;
    lbCmd?: string;
    cwd?: string;
    /** Provision commands of one worker batch run side by side, at most this many. */
    provisionConcurrency?: number;
  };
  /** For `lab`: how to reach the lab. */
  lab?: LabControl;
  /** For `capi`: the management cluster and the kit. */
  capi?: CapiConnection;
  /** A person at the terminal (ignored for the lab, which stands in for one). */
  operator: OperatorPort;
  /** `apiTimeoutMs`: an API probe's deadline (default 2 s); a slower answer counts as an error. */
  probes?: { runId: string; apiIntervalMs?: number; apiTimeoutMs?: number; etcdIntervalMs?: number } | false;
  log: (line: string) => void;
}

export interface Assembled {
  ports: Omit<RunDeps, 'plan' | 'planFile' | 'journal' | 'log' | 'signal' | 'interrupt'>;
  probes: Probe[];
  etcd: EtcdAdmin;
  kube: KubeAdmin;
  close(): void;
}

export function readEtcdTls(c: Connection['etcd']): EtcdTls {
  return readEtcdTlsFiles(c);
}

export function assemble(o: AssembleOptions): Assembled {
  const tls = readEtcdTls(o.connection.etcd);
  const etcd = new EtcdAdmin({ endpoints: o.connection.etcd.endpoints, tls, log: (l) => o.log(`  ${l}`) });
  const loaded = loadKubeconfig(o.connection.kubeconfig, o.connection.context);
  const kube = new KubeAdmin(createRequester(loaded));

  let provisioner: ProvisionerPort;
  let lb: RunDeps['lb'];
  let operator = o.operator;
  let apiservers: RunDeps['apiservers'];
  let mgmt: RunDeps['mgmt'];
  const base: Decommissioner = o.provisioner === 'capi' ? (o.capi?.decommission ?? 'manual') : o.provisioner;
  switch (base) {
    case 'lab': {
      if (!o.lab)
        throw usageError(
          '--provisioner lab needs the lab control socket',
          'pass --lab-socket PATH (printed by the process holding the lab)',
        );
      provisioner = new LabProvisionerAdapter(o.lab);
      lb = new LabLoadBalancerAdapter(o.lab);
      operator = new LabOperator(o.lab, o.log);
      apiservers = new LabApiserverStatus(o.lab);
      break;
    }
    case 'exec':
      provisioner = new ExecProvisioner({
        ...(o.exec?.provisionCmd && { provisionCmd: o.exec.provisionCmd }),
        ...(o.exec?.decommissionCmd && { decommissionCmd: o.exec.decommissionCmd }),
        ...(o.exec?.cwd && { cwd: o.exec.cwd }),
        ...(o.exec?.provisionConcurrency && { provisionConcurrency: o.exec.provisionConcurrency }),
      });
      lb = o.exec?.lbCmd ? new ExecLoadBalancer(o.exec.lbCmd, o.exec.cwd) : undefined;
      break;
    case 'manual':
      provisioner = new ManualProvisioner({
        say: o.log,
        detect: async (req) => {
          if (req.name) {
            const node = await kube.getNode(req.name);
            if (node) return { name: req.name, address: node.addresses[0] ?? req.address };
            const view = await etcd.observe();
            if (view.members.some((m) => m.name === req.name))
              return { name: req.name, address: req.address };
            return undefined;
          }
          const node = newTalosNode(req, await kube.listNodes());
          return node && { name: node.name, address: node.addresses[0] ?? req.address };
        },
      });
      lb = o.exec?.lbCmd ? new ExecLoadBalancer(o.exec.lbCmd, o.exec.cwd) : undefined;
      break;
  }

  if (o.provisioner === 'capi') {
    if (!o.capi)
      throw usageError(
        '--provisioner capi needs the management cluster',
        'pass --mgmt-kubeconfig FILE (the management cluster admin kubeconfig)',
      );
    const c = o.capi;
    const req = createRequester(loadKubeconfig(c.kubeconfig, c.context));
    const names = capiNamesOf(
      c.kit.objects.filter((x) => x.kind !== 'Secret').map((value, line) => ({ value, line })),
      `${c.kit.dir}/capi/cluster.yaml`,
    );
    const api = MgmtApi.fromKit(req, names, c.kit.objects);
    const crds = CrdValidator.fromSchemas();
    mgmt = new ManagementCluster({ req, api, kit: c.kit.objects, crds });
    provisioner = new CapiProvisioner({
      api,
      workload: kube,
      etcd,
      decommissioner: provisioner,
      crds,
      templates: c.kit.objects.filter((x) => /MachineTemplate$/.test(x.kind)),
      kitDir: c.kit.dir,
      ...(c.providerIdGraceMs !== undefined && { providerIdGraceMs: c.providerIdGraceMs }),
    });
  }

  const probes: Probe[] = [];
  let etcdProbe: EtcdProbeProcess | undefined;
  if (o.probes) {
    const timeoutMs = o.probes.apiTimeoutMs ?? 2_000;
    // Fresh connections on purpose: the probes see the load balancer as a new client does.
    const requester = createRequester(loaded, { timeoutMs, keepAlive: false });
    const timing = {
      timeoutMs,
      ...(o.probes.apiIntervalMs !== undefined && { intervalMs: o.probes.apiIntervalMs }),
    };
    probes.push(
      readyzProbe({ requester, ...timing }),
      writeReadProbe({ requester, runId: o.probes.runId, ...timing }),
    );
    // Its own process: a pause of this one (a journal fsync, a large document) is not etcd's gap.
    etcdProbe = new EtcdProbeProcess({
      endpoints: o.connection.etcd.endpoints,
      caFile: o.connection.etcd.caFile,
      certFile: o.connection.etcd.certFile,
      keyFile: o.connection.etcd.keyFile,
      runId: o.probes.runId,
      ...(o.probes.etcdIntervalMs !== undefined && { intervalMs: o.probes.etcdIntervalMs }),
    });
    probes.push(etcdProbe);
  }

  return {
    ports: {
      etcd,
      kube,
      provisioner,
      lb,
      operator,
      ...(apiservers && { apiservers }),
      ...(mgmt && { mgmt }),
      ...(etcdProbe && { etcdProbe }),
      etcdSnapshot: async (file, signal) => {
        const r = await etcd.snapshot(file, signal);
        const sealed = await sealSnapshot(file, o.snapshotRecipients ?? []);
        o.log(
          `  etcd snapshot ${sealed.file}: ${r.bytes} bytes from ${r.endpoint}, integrity hash checked, sha256 ${sealed.sha256}${sealed.encrypted ? ', encrypted with age (the plaintext removed)' : ''}`,
        );
        return sealed;
      },
    },
    probes,
    etcd,
    kube,
    close() {
      etcd.close();
      etcdProbe?.close();
    },
  };
}
