import { describe, expect, it } from 'vitest';
import { memberIdHex } from './member-id.js';

describe('memberIdHex', () => {
  it('prints a decimal member id in hex, as etcdctl tables and talosctl take it', () => {
    expect(memberIdHex('255')).toBe('ff');
    expect(memberIdHex('10276657743932975437')).toBe('8e9e05c52164694d');
    // Above 2^53: exact only because the id never passes through a JS number.
    expect(memberIdHex('18446744073709551615')).toBe('ffffffffffffffff');
    expect(memberIdHex('0')).toBe('0');
  });

  it('refuses what is not a decimal uint64 instead of naming another member', () => {
    for (const bad of ['', ' 12', '0x1f', '-1', '1e3', '18446744073709551616', 'cp-1'])
      expect(() => memberIdHex(bad), bad).toThrow(/not a decimal uint64/);
  });
});
