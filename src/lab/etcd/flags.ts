/**
 * The command line of a lab etcd member, shaped like kubeadm's stacked etcd static pod: TLS on
 * both client and peer ports with client-certificate auth against the etcd CA. Pure.
 */

export const CLIENT_PORT = 2379;
export const PEER_PORT = 2380;

/** Each member has its own loopback address so it can keep the real ports (test-infra.md). */
export function memberIp(subnet: number, index: number): string {
  if (!Number.isInteger(subnet) || subnet < 0 || subnet > 255)
    throw new RangeError(`subnet ${subnet} not in 0..255`);
  if (!Number.isInteger(index) || index < 1 || index > 254)
    throw new RangeError(`member index ${index} not in 1..254`);
  return `127.0.${subnet}.${index}`;
}

export const clientUrl = (ip: string): string => `https://${ip}:${CLIENT_PORT}`;
export const peerUrl = (ip: string): string => `https://${ip}:${PEER_PORT}`;

export type MemberTlsFiles = {
  caFile: string;
  certFile: string;
  keyFile: string;
  peerCertFile: string;
  peerKeyFile: string;
};

export type MemberFlagsInput = {
  name: string;
  ip: string;
  dataDir: string;
  tls: MemberTlsFiles;
  /** Every member the new one must know about, itself included (name → peer URL). */
  initialCluster: { name: string; peerUrl: string }[];
  /** 'new' bootstraps a cluster; 'existing' joins one after `member add`. */
  state: 'new' | 'existing';
  /** Keeps lab clusters that share a machine from ever talking to each other. */
  token: string;
};

export function memberArgs(m: MemberFlagsInput): string[] {
  return [
    `--name=${m.name}`,
    `--data-dir=${m.dataDir}`,
    `--listen-client-urls=${clientUrl(m.ip)}`,
    `--advertise-client-urls=${clientUrl(m.ip)}`,
    `--listen-peer-urls=${peerUrl(m.ip)}`,
    `--initial-advertise-peer-urls=${peerUrl(m.ip)}`,
    `--initial-cluster=${m.initialCluster.map((c) => `${c.name}=${c.peerUrl}`).join(',')}`,
    `--initial-cluster-state=${m.state}`,
    `--initial-cluster-token=${m.token}`,
    '--client-cert-auth=true',
    `--trusted-ca-file=${m.tls.caFile}`,
    `--cert-file=${m.tls.certFile}`,
    `--key-file=${m.tls.keyFile}`,
    '--peer-client-cert-auth=true',
    `--peer-trusted-ca-file=${m.tls.caFile}`,
    `--peer-cert-file=${m.tls.peerCertFile}`,
    `--peer-key-file=${m.tls.peerKeyFile}`,
    // kubeadm's value; the default (100000) only matters for long runs.
    '--snapshot-count=10000',
    // 3.4 defaults to the deprecated capnslog logger and warns about it; both versions take zap.
    '--logger=zap',
  ];
}
