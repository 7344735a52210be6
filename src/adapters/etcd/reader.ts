/**
 * EtcdReader over the `etcd3` npm client, mTLS as kubeadm's stacked etcd requires.
 *
 * - One client per endpoint: etcd3 spreads calls over its hosts at random, and a status must come
 *   from the member it describes.
 * - etcd3's default fault handling (per-host circuit breaker, global retry) is off: it turns a few
 *   failures into BrokenCircuitError and stretches a dead endpoint into minutes. Each call has a
 *   deadline instead, and the caller decides what a failure means.
 */
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';
import { FerryError, inputError } from '../../errors.js';
import type {
  Answer,
  EtcdReader,
  RawAlarms,
  RawMemberList,
  RawStatus,
  RawVersion,
} from '../../ports/etcd.js';
import { mapEtcdState } from './map.js';
import { readEtcdTlsFiles } from './tls-files.js';
import { fetchEtcdVersion, type TlsMaterial } from './version.js';

export interface EtcdReaderOptions {
  /** Client URLs: "https://10.0.0.10:2379" or "10.0.0.10:2379". */
  endpoints: string[];
  caFile: string;
  certFile: string;
  keyFile: string;
  /** Deadline of each call and of connecting. Default 5 s. */
  timeoutMs?: number;
}

export function normalizeEndpoint(ep: string): string {
  const trimmed = ep.trim().replace(/\/+$/, '');
  if (/^http:\/\//i.test(trimmed)) {
    throw inputError(
      `etcd endpoint ${ep} is plain http`,
      { field: '--etcd-endpoints' },
      'kubeadm etcd serves clients over TLS: use https://HOST:2379',
    );
  }
  return /^https:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`;
}

export function createEtcdReader(opts: EtcdReaderOptions): EtcdReader {
  if (opts.endpoints.length === 0) {
    throw inputError(
      'no etcd endpoints given',
      { field: '--etcd-endpoints' },
      'pass --etcd-endpoints https://HOST:2379,...',
    );
  }
  const endpoints = opts.endpoints.map(normalizeEndpoint);
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const tls: TlsMaterial = readEtcdTlsFiles(opts);
  const clients = new Map<string, Etcd3>();

  const client = (endpoint: string): Etcd3 => {
    let c = clients.get(endpoint);
    if (!c) {
      c = new Etcd3({
        hosts: [endpoint],
        credentials: { rootCertificate: tls.ca, certChain: tls.cert, privateKey: tls.key },
        dialTimeout: timeoutMs,
        defaultCallOptions: () => ({ deadline: Date.now() + timeoutMs }),
        faultHandling: { host: () => noop, global: noop },
      });
      clients.set(endpoint, c);
    }
    return c;
  };

  /** First endpoint that answers `call`; every failure is kept for the error message. */
  async function firstAnswer<T>(
    what: string,
    call: (c: Etcd3) => Promise<T>,
  ): Promise<{ endpoint: string; value: T }> {
    const failures: string[] = [];
    for (const ep of endpoints) {
      try {
        return { endpoint: ep, value: await call(client(ep)) };
      } catch (err) {
        failures.push(`${ep}: ${describe(err)}`);
      }
    }
    throw new FerryError('unreachable', `no etcd endpoint answered ${what}: ${failures.join('; ')}`, {
      remediation:
        'check --etcd-endpoints (client URLs, port 2379) and that --etcd-cacert/--etcd-cert/--etcd-key are the etcd CA and a client certificate it signed (kubeadm: pki/etcd/ca.crt, pki/etcd/healthcheck-client.*)',
    });
  }

  const reader: EtcdReader = {
    endpoints,

    async memberList() {
      const r = await firstAnswer(
        'the member list',
        (c) => c.cluster.memberList({ linearizable: true }) as Promise<RawMemberList>,
      );
      return { endpoint: r.endpoint, list: r.value };
    },

    status(endpoint: string) {
      return client(normalizeEndpoint(endpoint)).maintenance.status() as Promise<RawStatus>;
    },

    version(endpoint: string) {
      return fetchEtcdVersion(normalizeEndpoint(endpoint), tls, timeoutMs);
    },

    async alarms() {
      // memberID 0 with action Get lists the alarms of every member.
      const r = await firstAnswer(
        'the alarm list',
        (c) => c.maintenance.alarm({ action: 'Get', memberID: 0, alarm: 'None' }) as Promise<RawAlarms>,
      );
      return r.value;
    },

    async readState() {
      const warnings: string[] = [];
      const { endpoint: memberListEndpoint, list } = await reader.memberList();
      const [statuses, versions, alarms] = await Promise.all([
        Promise.all(endpoints.map(async (ep) => ({ endpoint: ep, answer: await settle(reader.status(ep)) }))),
        Promise.all(endpoints.map((ep) => settle(reader.version(ep)))),
        settle(reader.alarms()),
      ]);
      const version = versions.find((v): v is { ok: true; value: RawVersion } => v.ok)?.value;
      if (!version) {
        warnings.push(
          `etcd /version did not answer on any endpoint (${versions.map((v) => (v.ok ? '' : v.error)).join('; ')}): the cluster version is unknown`,
        );
      }
      if (!alarms.ok) warnings.push(`etcd alarm list failed: ${alarms.error}; alarms are unknown`);
      for (const s of statuses)
        if (!s.answer.ok) warnings.push(`etcd status of ${s.endpoint} failed: ${s.answer.error}`);
      const state = mapEtcdState({
        memberListEndpoint,
        memberList: list,
        statuses,
        ...(version && { version }),
        ...(alarms.ok && { alarms: alarms.value }),
      });
      return { state, warnings };
    },

    close() {
      for (const c of clients.values()) c.close();
      clients.clear();
    },
  };
  return reader;
}

async function settle<T>(p: Promise<T>): Promise<Answer<T>> {
  try {
    return { ok: true, value: await p };
  } catch (err) {
    return { ok: false, error: describe(err) };
  }
}

function describe(err: unknown): string {
  // grpc-js appends an empty "Resolution note:" to connection errors.
  if (err instanceof Error) return (err.message || err.name).replace(/\.?\s*Resolution note:\s*$/, '');
  return String(err);
}
