/**
 * What a machine is, seen from the workstation's side by TCP connects: the Talos API (50000)
 * answering means a Talos machine is up; the kubelet (10250), apiserver (6443) or etcd (2379)
 * answering means the kubeadm machine still runs; every port refusing means it is gone. A silent
 * port (timeout: a firewall, or a powered-off host) decides nothing.
 */
import { connect } from 'node:net';
import type { MachineState } from '../../run/ports.js';

export type PortState = 'open' | 'closed' | 'unknown';

export function probePort(host: string, port: number, timeoutMs = 1_500): Promise<PortState> {
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = (v: PortState) => {
      clearTimeout(timer);
      s.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done('unknown'), timeoutMs);
    s.once('connect', () => done('open'));
    s.once('error', (err: NodeJS.ErrnoException) =>
      done(err.code === 'ECONNREFUSED' || err.code === 'EHOSTUNREACH' ? 'closed' : 'unknown'),
    );
  });
}

export async function machineStateByPorts(
  address: string,
  timeoutMs = 1_500,
): Promise<MachineState | undefined> {
  const [talos, kubelet, apiserver, etcd] = await Promise.all(
    [50000, 10250, 6443, 2379].map((p) => probePort(address, p, timeoutMs)),
  );
  if (talos === 'open') return 'provisioned';
  const kubeadm = [kubelet, apiserver, etcd];
  if (kubeadm.includes('open')) return 'running';
  if ([talos, ...kubeadm].every((s) => s === 'closed')) return 'decommissioned';
  return undefined;
}
