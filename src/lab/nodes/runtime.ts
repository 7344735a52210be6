/**
 * The lab's container runtime for the pods it runs for real (canary.ts: `runsForReal`): each such
 * pod is an HTTP listener in the lab process on its node's loopback address (an ephemeral port),
 * started once the kubelet started the pod (phase Running), Ready once it answered its readiness
 * probe, and on deletion stopped as a kubelet stops a container: the preStop sleep first (the
 * endpoint leaves the Service meanwhile), then SIGTERM (stop accepting, finish what is in flight),
 * and at the end of the grace period SIGKILL (every connection cut). A pod that is gone from the
 * API (force-deleted, its node removed) is killed at once.
 *
 * The controller calls `sync` with every pass's World; the kubelet reads `states()` (world.ts
 * ContainerState) to post Ready and to finish deletions.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KObj } from '../apiserver/object.js';
import { listenOn } from '../listen.js';
import { preStopMs, runsForReal } from './canary.js';
import {
  type Address,
  type ContainerState,
  isTerminating,
  nameOf,
  nodeNameOf,
  nsOf,
  podPhase,
  status,
  uidOf,
  type World,
} from './world.js';

type Container = {
  pod: string;
  state: ContainerState;
  server: Server;
  /** host:port once listening. */
  address: string | undefined;
  timers: NodeJS.Timeout[];
};

export type RuntimeEvent = {
  at: number;
  pod: string;
  /** host:port of its listener. */
  address: string | undefined;
  what: 'started' | 'ready' | 'sigterm' | 'stopped' | 'killed';
};

function nodeAddress(world: World, node: string): string {
  const n = world.nodes.find((x) => nameOf(x) === node);
  const a = status(n ?? { metadata: {} }).addresses;
  const addrs: Address[] = Array.isArray(a) ? a : [];
  const ip = addrs.find((a) => a?.type === 'InternalIP')?.address;
  // Lab nodes report a loopback address of the lab's subnet; anything else is not ours to bind.
  return typeof ip === 'string' && /^127\.\d+\.\d+\.\d+$/.test(ip) ? ip : '127.0.0.1';
}

export class LabPodRuntime {
  readonly #containers = new Map<string, Container>();
  readonly #events: RuntimeEvent[] = [];
  #closed = false;

  /** Starts, stops and kills listeners to match the World. Never blocks; never throws. */
  sync(world: World): void {
    if (this.#closed) return;
    const present = new Set<string>();
    for (const pod of world.pods) {
      if (!runsForReal(pod)) continue;
      const uid = uidOf(pod);
      present.add(uid);
      const c = this.#containers.get(uid);
      if (isTerminating(pod)) {
        if (c && (c.state === 'starting' || c.state === 'ready')) this.#terminate(uid, c, pod);
        continue;
      }
      const node = nodeNameOf(pod);
      if (!c && node !== undefined && podPhase(pod) === 'Running')
        this.#start(uid, pod, nodeAddress(world, node));
    }
    for (const [uid, c] of this.#containers) {
      if (present.has(uid)) continue;
      this.#kill(c);
      this.#containers.delete(uid);
    }
  }

  states(): ReadonlyMap<string, ContainerState> {
    return new Map([...this.#containers].map(([uid, c]) => [uid, c.state]));
  }

  /** Where a pod's listener answers (host:port), while it listens. */
  addressOf(uid: string): string | undefined {
    const c = this.#containers.get(uid);
    return c && c.state !== 'stopped' ? c.address : undefined;
  }

  events(): RuntimeEvent[] {
    return [...this.#events];
  }

  #note(c: Container, what: RuntimeEvent['what']): void {
    this.#events.push({ at: Date.now(), pod: c.pod, address: c.address, what });
    if (this.#events.length > 10_000) this.#events.splice(0, 5_000);
  }

  #start(uid: string, pod: KObj, host: string): void {
    const name = `${nsOf(pod)}/${nameOf(pod)}`;
    const server = createServer((req, res) => {
      const body = `${name}\n`;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      req.resume();
    });
    server.keepAliveTimeout = 1_000;
    const c: Container = { pod: name, state: 'starting', server, address: undefined, timers: [] };
    this.#containers.set(uid, c);
    listenOn(server, 0, host).then(
      () => {
        const a = server.address() as AddressInfo;
        c.address = `${host}:${a.port}`;
        this.#note(c, 'started');
        void this.#readiness(c);
      },
      () => {
        // A port that cannot be had leaves the pod not Ready; the next sync tries again.
        if (this.#containers.get(uid) === c) this.#containers.delete(uid);
      },
    );
  }

  /** The readiness probe: Ready only once the listener answered 200. */
  async #readiness(c: Container): Promise<void> {
    for (let i = 0; i < 50 && c.state === 'starting'; i++) {
      if (await get(c.address!, '/healthz')) {
        if (c.state === 'starting') {
          c.state = 'ready';
          this.#note(c, 'ready');
        }
        return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** preStop, then SIGTERM; SIGKILL at the end of the grace period. */
  #terminate(uid: string, c: Container, pod: KObj): void {
    c.state = 'stopping';
    const deadline = Date.parse(pod.metadata.deletionTimestamp ?? '');
    const graceMs = Number.isFinite(deadline) ? Math.max(0, deadline - Date.now()) : 0;
    const sigterm = () => {
      this.#note(c, 'sigterm');
      c.server.close(() => {
        if (c.state !== 'stopped') {
          c.state = 'stopped';
          this.#note(c, 'stopped');
        }
      });
      c.server.closeIdleConnections();
    };
    c.timers.push(setTimeout(sigterm, Math.min(preStopMs(pod), graceMs)));
    c.timers.push(
      setTimeout(() => {
        if (this.#containers.get(uid) === c && c.state !== 'stopped') this.#kill(c);
      }, graceMs),
    );
  }

  #kill(c: Container): void {
    for (const t of c.timers) clearTimeout(t);
    const was = c.state;
    c.state = 'stopped';
    c.server.close();
    c.server.closeAllConnections();
    if (was !== 'stopped') this.#note(c, 'killed');
  }

  /** Kills every listener (the lab is going down). */
  close(): void {
    this.#closed = true;
    for (const c of this.#containers.values()) this.#kill(c);
    this.#containers.clear();
  }
}

/** GET http://address/path → whether it answered 200 within a second. */
function get(address: string, path: string): Promise<boolean> {
  const i = address.lastIndexOf(':');
  return new Promise((resolve) => {
    const req = request(
      { host: address.slice(0, i), port: Number(address.slice(i + 1)), path, agent: false, timeout: 1_000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}
