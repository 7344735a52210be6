/**
 * The lab's clock: how long its machines take, so that a lab can run on production's: a boot
 * (provision to a joining etcd member or a registering kubelet, the Talos install included) and a
 * power-off (the machine keeps answering until it is off). Each machine gets its own time around
 * the base, so that a batch's machines do not all finish in the same instant. Pure: a machine's
 * time follows from the settings, a seed and its name, so one seed replays the same times.
 */
import { createHash } from 'node:crypto';

export type LabClock = {
  /** Seconds from provision to a booted machine; 0: at once (the lab's own speed). */
  bootSeconds: number;
  /** Seconds a machine told to power off keeps running; 0: off at once. */
  decommissionSeconds: number;
  /** Each machine's time is base × (1 ± jitter·u), u uniform in [0, 1]: a fraction in [0, 1). */
  jitter: number;
};

/** The lab's own speed: machines boot and stop at once. */
export const LAB_SPEED: LabClock = { bootSeconds: 0, decommissionSeconds: 0, jitter: 0 };

export type MachineEvent = 'boot' | 'decommission';

/** base × (1 + jitter·(2u − 1)): `u` uniform in [0, 1) spreads the times evenly over base × (1 ± jitter). */
export function jittered(base: number, jitter: number, u: number): number {
  return base * (1 + jitter * (2 * u - 1));
}

/** A uniform draw in [0, 1) for one machine and event, from a hash (48 bits) of seed, event and name. */
export function machineDraw(seed: string, event: MachineEvent, machine: string): number {
  const h = createHash('sha256').update(`${seed}\0${event}\0${machine}`).digest();
  return h.readUIntBE(0, 6) / 2 ** 48;
}

/** The seconds `machine` takes to boot or to power off on this clock. */
export function machineSeconds(clock: LabClock, seed: string, event: MachineEvent, machine: string): number {
  const base = event === 'boot' ? clock.bootSeconds : clock.decommissionSeconds;
  return base === 0 ? 0 : jittered(base, clock.jitter, machineDraw(seed, event, machine));
}
