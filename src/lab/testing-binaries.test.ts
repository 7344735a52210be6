import { afterEach, expect, it, vi } from 'vitest';
import { realServersRequired, skipFor } from './testing-binaries.js';

afterEach(() => {
  vi.restoreAllMocks();
});

it('real servers are required under CI or FERRY_REQUIRE_REAL_SERVERS, not otherwise', () => {
  expect(realServersRequired({})).toBe(false);
  expect(realServersRequired({ CI: '' })).toBe(false);
  expect(realServersRequired({ CI: 'false', FERRY_REQUIRE_REAL_SERVERS: '0' })).toBe(false);
  expect(realServersRequired({ CI: 'true' })).toBe(true);
  expect(realServersRequired({ CI: '1' })).toBe(true);
  expect(realServersRequired({ FERRY_REQUIRE_REAL_SERVERS: '1' })).toBe(true);
});

it('a present binary never skips', () => {
  expect(skipFor(undefined, {})).toBe(false);
  expect(skipFor(undefined, { CI: '1' })).toBe(false);
});

it('a missing binary skips loudly locally and fails where real servers are required', () => {
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  const why = 'etcd 3.4 is not installed; run `bash scripts/install-etcd.sh` (as root)';
  expect(skipFor(why, {})).toBe(true);
  expect(warn).toHaveBeenCalledWith(expect.stringContaining(why));
  expect(() => skipFor(why, { FERRY_REQUIRE_REAL_SERVERS: '1' })).toThrow(
    /etcd 3\.4 is not installed; run `bash scripts\/install-etcd\.sh`.*FERRY_REQUIRE_REAL_SERVERS/,
  );
  expect(() => skipFor(why, { CI: 'true' })).toThrow(/install-etcd\.sh/);
});
