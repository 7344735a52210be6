import { describe, expect, it } from 'vitest';
import { cpuMillis, parseQuantity } from './quantity.js';

describe('quantities', () => {
  it('parses decimal, binary and exponent forms', () => {
    expect(parseQuantity('512Mi')).toBe(512 * 2 ** 20);
    expect(parseQuantity('6255948Ki')).toBe(6255948 * 1024);
    expect(parseQuantity('1G')).toBe(1e9);
    expect(parseQuantity('1e3')).toBe(1000);
    expect(parseQuantity('150')).toBe(150);
    expect(parseQuantity('0.5')).toBe(0.5);
    expect(parseQuantity(3)).toBe(3);
  });

  it('rejects what is not a quantity', () => {
    expect(parseQuantity('12 cores')).toBeUndefined();
    expect(parseQuantity('Mi')).toBeUndefined();
    expect(parseQuantity(undefined)).toBeUndefined();
  });

  it('gives CPU in millicores, rounded up', () => {
    expect(cpuMillis('3500m')).toBe(3500);
    expect(cpuMillis('4')).toBe(4000);
    expect(cpuMillis('0.1')).toBe(100);
    expect(cpuMillis('100u')).toBe(1);
  });
});
