import { describe, expect, it } from 'vitest';
import { jittered, LAB_SPEED, machineDraw, machineSeconds } from './clock.js';

const clock = { bootSeconds: 60, decommissionSeconds: 20, jitter: 0.1 };
const names = Array.from({ length: 2000 }, (_, i) => `talos-w-${i}`);

describe('the lab clock', () => {
  it('spreads base × (1 ± jitter) evenly over the draw', () => {
    expect(jittered(60, 0.1, 0)).toBeCloseTo(54);
    expect(jittered(60, 0.1, 0.5)).toBeCloseTo(60);
    expect(jittered(60, 0.1, 1)).toBeCloseTo(66);
    expect(jittered(60, 0, 0.93)).toBe(60);
  });

  it('draws uniformly in [0, 1), the same for the same seed, event and machine', () => {
    const u = names.map((n) => machineDraw('s', 'boot', n));
    expect(u.every((x) => x >= 0 && x < 1)).toBe(true);
    // Each tenth of [0, 1) holds about a tenth of 2,000 draws (±60 is over 4 standard deviations).
    for (let d = 0; d < 10; d++)
      expect(Math.abs(u.filter((x) => Math.floor(x * 10) === d).length - 200)).toBeLessThan(60);
    expect(machineDraw('s', 'boot', 'talos-w-1')).toBe(u[1]);
    expect(machineDraw('t', 'boot', 'talos-w-1')).not.toBe(u[1]);
    expect(machineDraw('s', 'decommission', 'talos-w-1')).not.toBe(u[1]);
  });

  it("gives each machine its own time within the base's jitter", () => {
    const boots = names.map((n) => machineSeconds(clock, 'seed', 'boot', n));
    expect(Math.min(...boots)).toBeGreaterThanOrEqual(54);
    expect(Math.max(...boots)).toBeLessThanOrEqual(66);
    // Spread over the whole range, not bunched: a batch's machines finish apart.
    expect(Math.max(...boots) - Math.min(...boots)).toBeGreaterThan(11);
    const offs = names.map((n) => machineSeconds(clock, 'seed', 'decommission', n));
    expect(Math.min(...offs)).toBeGreaterThanOrEqual(18);
    expect(Math.max(...offs)).toBeLessThanOrEqual(22);
    expect(machineSeconds(clock, 'seed', 'boot', 'talos-w-7')).toBe(boots[7]);
  });

  it('runs at the lab speed with a base of 0, whatever the jitter', () => {
    expect(names.slice(0, 50).every((n) => machineSeconds(LAB_SPEED, 'seed', 'boot', n) === 0)).toBe(true);
    expect(machineSeconds({ ...clock, bootSeconds: 0 }, 'seed', 'boot', 'talos-w-1')).toBe(0);
    expect(machineSeconds({ ...clock, jitter: 0 }, 'seed', 'decommission', 'talos-w-1')).toBe(20);
  });
});
