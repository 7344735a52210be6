import { describe, expect, it } from 'vitest';
import { AddressMap, isLoopback } from './addresses.js';

describe('AddressMap', () => {
  it('hands out loopback addresses only, and remembers what they stand for', () => {
    const m = new AddressMap(33);
    expect(m.endpoint).toBe('127.0.33.254');
    m.record({ name: 'cp-1', role: 'control-plane', real: '10.20.0.11', lab: '127.0.33.1' });
    const w1 = m.allocateWorker('worker-1', '10.20.0.21');
    const w2 = m.allocateWorker('worker-2', '10.20.0.22');
    expect([w1.lab, w2.lab]).toEqual(['127.0.33.101', '127.0.33.102']);
    expect(m.allocateWorker('worker-1', undefined).lab).toBe('127.0.33.101');
    expect(m.labFor('10.20.0.22')).toBe('127.0.33.102');
    expect(m.entries().every((e) => isLoopback(e.lab))).toBe(true);
  });

  it('refuses addresses outside its subnet or already taken', () => {
    const m = new AddressMap(33);
    expect(() => m.record({ name: 'x', role: 'worker', real: undefined, lab: '10.20.0.11' })).toThrow(
      /not in 127.0.33.0\/24/,
    );
    m.record({ name: 'a', role: 'worker', real: undefined, lab: '127.0.33.5' });
    expect(() => m.record({ name: 'b', role: 'worker', real: undefined, lab: '127.0.33.5' })).toThrow(
      /already used by a/,
    );
    expect(() => new AddressMap(0)).toThrow(RangeError);
  });
});
