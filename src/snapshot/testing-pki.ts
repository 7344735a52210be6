/**
 * Test support for the PKI and certificate rules: a real kubeadm-layout PKI (ECDSA keys, so it is
 * quick to make) written once into a temporary directory, copied per scenario, changed on disk and
 * inventoried by the same code `ferry snapshot` uses. Nothing here is mocked X.509.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuditContext } from '../audit/rule.js';
import { makeContext, makeSnapshot } from '../audit/testing.js';
import type { TargetInput } from '../facts/target.js';
import { writeKubeadmPki } from '../pki/kubeadm-layout.js';
import type { PkiInventory, Snapshot, SnapshotPart, StaticPod } from './model.js';
import { inventoryPki } from './pki.js';

export interface PkiFixture {
  /** A pristine kubeadm PKI; never changed by tests. */
  base: string;
  /** A fresh copy of the base PKI to change. */
  copy(): Promise<string>;
  cleanup(): Promise<void>;
}

export async function makePkiFixture(): Promise<PkiFixture> {
  const root = await mkdtemp(join(tmpdir(), 'ferry-pki-rules-'));
  const base = join(root, 'base');
  await writeKubeadmPki(base, {
    apiserver: {
      nodeName: 'cp-1',
      advertiseAddress: '10.0.0.11',
      dnsNames: [
        'kubernetes',
        'kubernetes.default',
        'kubernetes.default.svc',
        'kubernetes.default.svc.cluster.local',
        'k8s.example',
      ],
      ipAddresses: ['10.96.0.1'],
    },
    etcdMembers: [{ name: 'cp-1', ip: '10.0.0.11' }],
    key: { algorithm: 'ECDSA' },
    serviceAccountKey: { algorithm: 'ECDSA' },
  });
  let n = 0;
  return {
    base,
    async copy() {
      const dir = join(root, `copy-${++n}`);
      await cp(base, dir, { recursive: true });
      return dir;
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

export async function put(dir: string, rel: string, text: string): Promise<void> {
  await writeFile(join(dir, rel), text, { mode: rel.endsWith('.key') ? 0o600 : 0o644 });
}

export async function remove(dir: string, rel: string): Promise<void> {
  await rm(join(dir, rel));
}

export interface ContextOptions {
  target?: TargetInput;
  /** Snapshot time (rules measure expiry from it). Default: now. */
  createdAt?: Date;
  staticPods?: StaticPod[];
  parts?: SnapshotPart[];
  edit?: (s: Snapshot) => void;
}

export function pkiContext(inv: PkiInventory | undefined, opts: ContextOptions = {}): AuditContext {
  const parts: SnapshotPart[] = opts.parts ?? [
    ...(inv ? (['pki'] as const) : []),
    ...(opts.staticPods?.length ? (['flags'] as const) : []),
  ];
  const s = makeSnapshot({ parts });
  s.manifest.createdAt = (opts.createdAt ?? new Date()).toISOString();
  if (inv) s.pki = inv;
  if (opts.staticPods) s.staticPods = opts.staticPods;
  opts.edit?.(s);
  return makeContext(s, opts.target);
}

export async function inventory(dir: string): Promise<PkiInventory> {
  return inventoryPki(dir);
}

/** A control-plane static pod as a manifest copied from `node` would yield. */
export function staticPod(
  component: string,
  node: string,
  flags: [string, string][],
  image?: string,
): StaticPod {
  return {
    component,
    node,
    ...(image ? { image } : {}),
    command: [component, ...flags.map(([k, v]) => `--${k}=${v}`)],
    flags: flags.map(([name, value]) => ({ name, value })),
    hostPathVolumes: [],
    source: { kind: 'file', path: `manifests/${node}/${component}.yaml`, line: 1 },
  };
}
