/**
 * Reads the Talos template back from the Proxmox API with the CAPMOX token and checks that it is
 * what CAPMOX and Talos need (mgmt.md §4): a template, guest agent on, no VirtIO SCSI single, ide0
 * free for CAPMOX's NoCloud ISO, no cloud-init drive. The token travels in the Authorization
 * header (`PVEAPIToken=user@realm!id=secret`), never in a URL.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { FerryError } from '../../errors.js';

export interface TemplateCheck {
  ok: boolean;
  problems: string[];
  name: string | undefined;
}

export interface ProxmoxApi {
  vmConfig(node: string, vmid: number): Promise<Record<string, unknown>>;
}

export function proxmoxApi(opts: {
  url: string;
  tokenId: string;
  secret: string;
  insecure: boolean;
  timeoutMs?: number;
}): ProxmoxApi {
  return {
    vmConfig: (node, vmid) =>
      new Promise((resolveGet, reject) => {
        const u = new URL(`${opts.url}/api2/json/nodes/${encodeURIComponent(node)}/qemu/${vmid}/config`);
        const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(
          u,
          {
            method: 'GET',
            headers: {
              Authorization: `PVEAPIToken=${opts.tokenId}=${opts.secret}`,
              Accept: 'application/json',
            },
            rejectUnauthorized: !opts.insecure,
            timeout: opts.timeoutMs ?? 15_000,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const body = Buffer.concat(chunks).toString('utf8');
              const status = res.statusCode ?? 0;
              if (status === 401)
                return reject(
                  new FerryError('input', `Proxmox ${opts.url} refused the token ${opts.tokenId} (401)`, {
                    remediation:
                      'check infrastructure.proxmox.tokenId and the secret (pveum user token list)',
                  }),
                );
              if (status === 403)
                return reject(
                  new FerryError(
                    'input',
                    `the token ${opts.tokenId} may not read VM ${vmid} on ${node} (403)`,
                    {
                      remediation:
                        'run the pveum ACL commands `ferry mgmt bootstrap --dry-run` prints (the template must be in pool templates)',
                    },
                  ),
                );
              if (status !== 200)
                return reject(
                  new FerryError(
                    'input',
                    `Proxmox has no VM ${vmid} on node ${node} (HTTP ${status}: ${res.statusMessage ?? ''})`,
                    {
                      location: { field: 'infrastructure.proxmox.templateId' },
                      remediation:
                        'create the template with the commands `ferry mgmt bootstrap --dry-run` prints, or fix templateId and node',
                    },
                  ),
                );
              try {
                resolveGet(((JSON.parse(body) as { data?: unknown }).data ?? {}) as Record<string, unknown>);
              } catch (cause) {
                reject(
                  new FerryError('unreachable', `Proxmox ${opts.url} answered no JSON`, {
                    cause,
                    remediation: 'check infrastructure.proxmox.url',
                  }),
                );
              }
            });
          },
        );
        req.on('timeout', () => req.destroy(new Error('timed out')));
        req.on('error', (cause) =>
          reject(
            new FerryError('unreachable', `cannot reach Proxmox at ${opts.url}: ${cause.message}`, {
              cause,
              remediation:
                'check infrastructure.proxmox.url and that this machine can reach it (and its certificate, or insecure: true)',
            }),
          ),
        );
        req.end();
      }),
  };
}

/** What is wrong with a VM config as a Talos template for CAPMOX; empty when nothing is. */
export function checkTemplate(cfg: Record<string, unknown>): TemplateCheck {
  const problems: string[] = [];
  const str = (k: string) => (cfg[k] === undefined ? undefined : String(cfg[k]));
  if (str('template') !== '1') problems.push('it is not a template (qm template ID)');
  const agent = str('agent');
  if (agent === undefined || !/^(1|enabled=1)\b/.test(agent))
    problems.push('the guest agent is off: CAPMOX waits for qemu-guest-agent (qm set ID --agent enabled=1)');
  if (str('scsihw') === 'virtio-scsi-single')
    problems.push('VirtIO SCSI single hangs Talos (talos#11173): use --scsihw virtio-scsi-pci');
  if (str('ide0') !== undefined)
    problems.push('ide0 is in use: CAPMOX puts its NoCloud ISO there (qm set ID --delete ide0)');
  for (const [k, v] of Object.entries(cfg))
    if (/^(ide|sata|scsi|virtio)\d+$/.test(k) && String(v).includes('cloudinit'))
      problems.push(
        `${k} is a cloud-init drive: Talos gets its config from CAPMOX's ISO (qm set ID --delete ${k})`,
      );
  if (str('balloon') !== '0')
    problems.push('memory ballooning is on: Talos wants fixed memory (qm set ID --balloon 0)');
  return { ok: problems.length === 0, problems, name: str('name') };
}
