import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { GenerateContext } from './context.js';
import { createTalosOsCa } from './secrets/os-ca.js';
import { talosconfigGenerator } from './talosconfig.js';

const NOW = new Date('2026-09-01T12:00:00.000Z');

/** Only what the talosconfig generator reads. */
async function context(talosEndpoints?: string[]): Promise<GenerateContext> {
  const os = await createTalosOsCa(NOW);
  return {
    facts: { cluster: { name: { value: 'demo', provenance: [] } } },
    secrets: { bundle: { certs: { os } } },
    options: { full: false, infra: undefined, ...(talosEndpoints ? { talosEndpoints } : {}) },
    generatedBy: ['test'],
    now: NOW,
  } as unknown as GenerateContext;
}

describe('talos/talosconfig', () => {
  it('one context named after the cluster, the OS CA, an os:admin client certificate it signed; 0600', async () => {
    const ctx = await context(['10.0.0.31', '10.0.0.32']);
    const r = await talosconfigGenerator.generate(ctx);
    if (r.kind !== 'ok') throw new Error('missing');
    const [a] = r.artifacts;
    expect(a).toMatchObject({ path: 'talos/talosconfig', mode: 0o600, secret: true });
    const cfg = parse(a!.content) as {
      context: string;
      contexts: Record<string, { endpoints: string[]; ca: string; crt: string; key: string }>;
    };
    expect(cfg.context).toBe('demo');
    const c = cfg.contexts['demo']!;
    expect(c.endpoints).toEqual(['10.0.0.31', '10.0.0.32']);
    const pem = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');
    const os = ctx.secrets!.bundle.certs.os;
    expect(pem(c.ca)).toBe(os.crt);
    const client = new X509Certificate(pem(c.crt));
    expect(client.verify(new X509Certificate(os.crt).publicKey)).toBe(true);
    expect(client.subject).toMatch(/^O=os:admin$/m);
    // Backdated a little, valid a year, like talosctl's.
    expect(new Date(client.validFrom).getTime()).toBeLessThan(NOW.getTime());
    expect(new Date(client.validTo).getTime() - NOW.getTime()).toBeGreaterThan(364 * 86_400_000);
    // The key sits only in this secret file; nothing of it in the provenance.
    expect(JSON.stringify(a!.provenance)).not.toContain(c.key.slice(0, 20));
  });

  it('without --talos-endpoints: no endpoints, and the header says how to add them', async () => {
    const r = await talosconfigGenerator.generate(await context());
    if (r.kind !== 'ok') throw new Error('missing');
    const text = r.artifacts[0]!.content;
    expect(
      (parse(text) as { contexts: Record<string, { endpoints: string[] }> }).contexts['demo']?.endpoints,
    ).toEqual([]);
    expect(text).toContain('# endpoints: none yet');
    expect(text).toContain('talosctl --talosconfig talos/talosconfig config endpoint');
  });
});
