/**
 * talos/talosconfig: how the runbook's talosctl commands reach the new nodes' Talos API (apid,
 * mTLS, talos.md §7). One context named after the cluster; the Talos API CA of secrets.yaml
 * (`certs.os`); an admin client certificate signed by it (O=os:admin, Ed25519, one year, as
 * talosctl gen config issues one); endpoints = the Talos control planes' addresses when the
 * operator names them (--talos-endpoints), else none: the runbook passes `-e` with each command.
 * Holds a private key: mode 0600.
 */
import { stringify } from 'yaml';
import { KIT } from '../knowledge/kit-paths.js';
import { issueCertificate, loadIssued } from '../pki/forge.js';
import { parsePrivateKeyPem, toTalosEd25519Pem } from '../pki/pem.js';
import type { SourceRef } from '../snapshot/model.js';
import type { GeneratorResult } from './artifact.js';
import { blocked, type GenerateContext, type Generator } from './context.js';
import type { CertAndKey } from './secrets/bundle.js';

export const TALOS_ADMIN_ROLE = 'os:admin';
/** talosctl's client certificates last a year (constants TalosAPIDefaultCertificateValidityDuration). */
const CLIENT_VALIDITY_DAYS = 365;
/** Backdated like kubeadm's, so a node whose clock is a little behind accepts it. */
const BACKDATE_MS = 5 * 60_000;

export const talosconfigGenerator: Generator = { name: 'talosconfig', generate: generateTalosconfig };

export interface TalosAdminClient {
  crt: string;
  /** Talos's "ED25519 PRIVATE KEY" label, as talosctl writes it. */
  key: string;
}

/** An admin client certificate for the Talos API, signed by the bundle's OS CA. */
export async function issueTalosAdminClient(osCa: CertAndKey, now: Date): Promise<TalosAdminClient> {
  const ca = await loadIssued(
    osCa.crt,
    parsePrivateKeyPem(osCa.key).export({ type: 'pkcs8', format: 'pem' }) as string,
  );
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  const client = await issueCertificate({
    issuer: ca,
    commonName: 'admin',
    organization: [TALOS_ADMIN_ROLE],
    key: { algorithm: 'Ed25519' },
    usage: 'client',
    notBefore,
    validityDays: CLIENT_VALIDITY_DAYS,
  });
  return { crt: client.certPem, key: toTalosEd25519Pem(client.keyPem) };
}

export function renderTalosconfig(o: {
  context: string;
  endpoints: string[];
  caPem: string;
  client: TalosAdminClient;
}): string {
  const b64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');
  return stringify(
    {
      context: o.context,
      contexts: {
        [o.context]: {
          endpoints: o.endpoints,
          ca: b64(o.caPem),
          crt: b64(o.client.crt),
          key: b64(o.client.key),
        },
      },
    },
    { lineWidth: 0 },
  );
}

async function generateTalosconfig(ctx: GenerateContext): Promise<GeneratorResult> {
  const name = ctx.facts.cluster.name.value;
  // Both are reported elsewhere when missing (the Talos generator needs the name, inputs the bundle).
  if (!ctx.secrets || name === undefined) return blocked();
  const os = ctx.secrets.bundle.certs.os;
  const endpoints = ctx.options.talosEndpoints ?? [];
  const client = await issueTalosAdminClient(os, ctx.now);
  const fromBundle: SourceRef[] = [{ kind: 'file', path: KIT.secrets, field: 'certs.os' }];
  const header = [
    `talosconfig for the Talos nodes of ${name}: admin (${TALOS_ADMIN_ROLE}) client certificate signed by the Talos API CA of secrets.yaml. Holds a private key: keep it secret.`,
    endpoints.length > 0
      ? `endpoints: the Talos control-plane addresses given with --talos-endpoints`
      : `endpoints: none yet (the runbook passes -e per command); once the Talos control planes run: talosctl --talosconfig ${KIT.talosconfig} config endpoint <ADDRESS>...`,
    `Use (in the kit directory): talosctl --talosconfig ${KIT.talosconfig} -e <ADDRESS> -n <ADDRESS> version`,
    ...ctx.generatedBy,
  ];
  return {
    kind: 'ok',
    notes: [],
    artifacts: [
      {
        path: KIT.talosconfig,
        content: `${header.map((l) => `# ${l}`).join('\n')}\n${renderTalosconfig({ context: name, endpoints, caPem: os.crt, client })}`,
        mode: 0o600,
        purpose: `talosctl client config for the Talos nodes: context ${name}, Talos API CA, admin client certificate (holds a key)`,
        step: 26,
        provenance: {
          context: ctx.facts.cluster.name.provenance,
          [`contexts.${name}.ca`]: fromBundle,
          [`contexts.${name}.crt`]: [
            {
              kind: 'derived',
              from: fromBundle,
              note: `issued by ferry for ${TALOS_ADMIN_ROLE}, signed by certs.os`,
            },
          ],
          ...(endpoints.length > 0
            ? {
                [`contexts.${name}.endpoints`]: [
                  { kind: 'derived', from: [], note: '--talos-endpoints' } as SourceRef,
                ],
              }
            : {}),
        },
        secret: true,
      },
    ],
  };
}
