/**
 * A stand-in Proxmox API on 127.0.0.1 (HTTP or HTTPS with a forged certificate): GET
 * /api2/json/nodes/<node>/qemu/<vmid>/config answers the VM configs it holds for one token.
 */
import {
  createServer as createHttp,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createCA, issueCertificate } from '../../pki/forge.js';

export interface ProxmoxStandin {
  url: string;
  requests: { url: string; authorization: string | undefined }[];
  close(): Promise<void>;
}

export const GOOD_TEMPLATE = {
  name: 'talos-v1.13.7',
  template: 1,
  agent: 'enabled=1',
  scsihw: 'virtio-scsi-pci',
  scsi0: 'local-lvm:base-9000-disk-0,size=20G',
  balloon: 0,
  cpu: 'host',
  net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0',
};

export async function startProxmox(opts: {
  tls: boolean;
  authorization: string;
  vms: Record<string, Record<string, unknown>>;
}): Promise<ProxmoxStandin> {
  const requests: ProxmoxStandin['requests'] = [];
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    requests.push({ url: req.url ?? '', authorization: req.headers.authorization });
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== opts.authorization) return send(401, { data: null });
    const m = /^\/api2\/json\/nodes\/([^/]+)\/qemu\/(\d+)\/config$/.exec(req.url ?? '');
    const vm = m ? opts.vms[`${m[1]}/${m[2]}`] : undefined;
    // Proxmox answers a missing VM with 500 and this text.
    if (!vm)
      return send(500, {
        data: null,
        message: `Configuration file 'nodes/${m?.[1]}/qemu-server/${m?.[2]}.conf' does not exist`,
      });
    return send(200, { data: vm });
  };
  let server: Server;
  if (opts.tls) {
    const ca = await createCA({ commonName: 'pve-standin-ca' });
    const leaf = await issueCertificate({
      commonName: 'pve1',
      issuer: ca,
      usage: 'server',
      ipAddresses: ['127.0.0.1'],
    });
    server = createHttps({ cert: leaf.certPem, key: leaf.keyPem }, handler);
  } else server = createHttp(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
