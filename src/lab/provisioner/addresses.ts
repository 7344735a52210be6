/**
 * The lab's address plan: every node and the cluster endpoint get a loopback address of one
 * subnet (127.0.<subnet>.x), and the real address each stands in for is recorded so that output
 * can say which is which. The lab never connects to a real address; only loopback ones are ever
 * handed out. Pure.
 *
 *   127.0.S.1–100    control planes (the etcd member's address: index order of the lab etcd cluster)
 *   127.0.S.101–250  workers (they listen on nothing; the address is what their Node reports)
 *   127.0.S.254      the cluster endpoint (load balancer)
 */
import { FerryError } from '../../errors.js';

export type AddressRole = 'control-plane' | 'worker' | 'endpoint';

export type AddressEntry = {
  /** Node name, or `endpoint`. */
  name: string;
  role: AddressRole;
  /** The address in the real cluster (an IP or a host name), when there is one. */
  real: string | undefined;
  /** The loopback address the lab uses instead. */
  lab: string;
};

export const ENDPOINT_HOST = 254;
const FIRST_WORKER = 101;
const LAST_WORKER = 250;

export function isLoopback(ip: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip);
}

export class AddressMap {
  readonly subnet: number;
  readonly #entries: AddressEntry[] = [];

  constructor(subnet: number, entries: AddressEntry[] = []) {
    if (!Number.isInteger(subnet) || subnet < 1 || subnet > 254) {
      throw new RangeError(`lab subnet ${subnet} not in 1..254`);
    }
    this.subnet = subnet;
    for (const e of entries) this.record(e);
  }

  get endpoint(): string {
    return `127.0.${this.subnet}.${ENDPOINT_HOST}`;
  }

  /** Records a mapping; the lab address must be a loopback address of this subnet. */
  record(entry: AddressEntry): AddressEntry {
    if (!isLoopback(entry.lab) || entry.lab.split('.')[2] !== String(this.subnet)) {
      throw new FerryError(
        'internal',
        `lab address ${entry.lab} for ${entry.name} is not in 127.0.${this.subnet}.0/24`,
      );
    }
    const clash = this.#entries.find((e) => e.lab === entry.lab && e.name !== entry.name);
    if (clash) {
      throw new FerryError('internal', `lab address ${entry.lab} is already used by ${clash.name}`);
    }
    const i = this.#entries.findIndex((e) => e.name === entry.name);
    if (i >= 0) this.#entries[i] = entry;
    else this.#entries.push(entry);
    return entry;
  }

  /** A free worker address for `name` (the same one again for a name already mapped). */
  allocateWorker(name: string, real: string | undefined): AddressEntry {
    const known = this.#entries.find((e) => e.name === name && e.role === 'worker');
    if (known) return this.record({ ...known, real: real ?? known.real });
    const used = new Set(this.#entries.map((e) => e.lab));
    for (let host = FIRST_WORKER; host <= LAST_WORKER; host++) {
      const lab = `127.0.${this.subnet}.${host}`;
      if (!used.has(lab)) return this.record({ name, role: 'worker', real, lab });
    }
    throw new FerryError('usage', `no free worker address left in 127.0.${this.subnet}.0/24`, {
      remediation: `the lab holds at most ${LAST_WORKER - FIRST_WORKER + 1} workers`,
    });
  }

  entries(): AddressEntry[] {
    return this.#entries.map((e) => ({ ...e }));
  }

  byName(name: string): AddressEntry | undefined {
    const e = this.#entries.find((x) => x.name === name);
    return e && { ...e };
  }

  /** The lab address standing in for a real one. */
  labFor(real: string): string | undefined {
    return this.#entries.find((e) => e.real === real)?.lab;
  }
}
