/**
 * What a machine is, seen from the workstation's side by TCP connects: the Talos API (50000)
 * answering means a Talos machine is up; the kubelet (10250), apiserver (6443) or etcd (2379)
 * answering means the kubeadm machine still runs; every port refusing means it is gone. A silent
 * port (timeout: a firewall, or a powered-off host) decides nothing.
 */
import { connect } from 'node:net';
import type { MachineState } from '../../ports/run.js';

export type PortState = 'open' | 'closed' | 'unknown';

export interface PortProbe {
  port: number;
  /** What listens there, for messages. */
  name: string;
  state: PortState;
  /** Why the connect failed (ECONNREFUSED, ENOTFOUND, …); absent when it connected or stayed silent. */
  error?: NodeJS.ErrnoException;
}

const MACHINE_PORTS: readonly [port: number, name: string][] = [
  [50000, 'Talos API'],
  [10250, 'kubelet'],
  [6443, 'apiserver'],
  [2379, 'etcd'],
];

export function probePortDetail(
  host: string,
  port: number,
  timeoutMs = 1_500,
  name = String(port),
): Promise<PortProbe> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = (state: PortState, error?: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      s.destroy();
      resolve({ port, name, state, ...(error && { error }) });
    };
    const timer = setTimeout(() => done('unknown'), timeoutMs);
    s.once('connect', () => done('open'));
    s.once('error', (err: NodeJS.ErrnoException) =>
      done(err.code === 'ECONNREFUSED' || err.code === 'EHOSTUNREACH' ? 'closed' : 'unknown', err),
    );
  });
}

/** The Talos API, kubelet, apiserver and etcd ports of one machine, probed at once. */
export function probeMachinePorts(address: string, timeoutMs = 1_500): Promise<PortProbe[]> {
  return Promise.all(MACHINE_PORTS.map(([p, name]) => probePortDetail(address, p, timeoutMs, name)));
}

export function machineStateOf(probes: readonly PortProbe[]): MachineState | undefined {
  const state = (port: number) => probes.find((p) => p.port === port)?.state ?? 'unknown';
  if (state(50000) === 'open') return 'provisioned';
  const kubeadm = [10250, 6443, 2379].map(state);
  if (kubeadm.includes('open')) return 'running';
  if (probes.length > 0 && probes.every((p) => p.state === 'closed')) return 'decommissioned';
  return undefined;
}

/** "kubelet :10250 open, apiserver :6443 no answer within 1.5 s, …": what each port did. */
export function describePorts(probes: readonly PortProbe[], timeoutMs = 1_500): string {
  return probes
    .map((p) => {
      const what =
        p.state === 'open'
          ? 'open'
          : p.state === 'closed'
            ? 'refused'
            : p.error
              ? `cannot be checked (${p.error.code ?? p.error.message})`
              : `no answer within ${timeoutMs / 1000} s`;
      return `${p.name} :${p.port} ${what}`;
    })
    .join(', ');
}

export async function machineStateByPorts(
  address: string,
  timeoutMs = 1_500,
): Promise<MachineState | undefined> {
  return machineStateOf(await probeMachinePorts(address, timeoutMs));
}
