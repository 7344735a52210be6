import { describe, expect, it } from 'vitest';
import { tcpScale } from './tcp-scale.js';

describe('tcpScale', () => {
  it('allows one step up only', () => {
    expect(tcpScale(0, 1)).toEqual({ kind: 'scale', from: 0, to: 1 });
    expect(tcpScale(1, 3)).toMatchObject({
      kind: 'refused',
      remediation: expect.stringMatching(/scale to 2/),
    });
    expect(tcpScale(2, 2).kind).toBe('refused');
  });
  it('refuses any scale-down, saying it would delete a Node undrained (H3)', () => {
    expect(tcpScale(3, 2)).toMatchObject({
      kind: 'refused',
      reason: expect.stringMatching(/delete a Node without draining it/),
    });
  });
});
