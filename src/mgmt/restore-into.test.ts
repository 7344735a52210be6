import { describe, expect, it } from 'vitest';
import { KubeRequestError } from '../adapters/kube/request.js';
import { describeError, FerryError } from '../errors.js';
import { serverRefusal } from './restore-into.js';

const answer = (status: number, reason: string, message: string) =>
  new KubeRequestError({
    method: 'GET',
    status,
    reason,
    message,
    path: '/api/v1/secrets',
    address: '127.0.0.1:6443',
    causes: [],
  });

describe('serverRefusal (a restore stopped by an unwrapped API server answer)', () => {
  it("is exit 2, not 4, with the server's message as the cause and the permission to grant", () => {
    const e = serverRefusal(
      answer(403, 'Forbidden', 'secrets is forbidden: User "restorer" cannot list resource "secrets"'),
    );
    expect(e).toBeInstanceOf(FerryError);
    expect(e!.exitCode).toBe(2);
    expect(e!.message).toBe('restore stopped: an API server answered HTTP 403 Forbidden');
    expect(describeError(e)).toContain(
      'caused by: 127.0.0.1:6443 GET /api/v1/secrets: HTTP 403 Forbidden: secrets is forbidden',
    );
    expect(e!.remediation).toContain('may not list secrets');
  });

  it('is exit 2 for a server that fails or throttles too', () => {
    expect(serverRefusal(answer(503, 'ServiceUnavailable', 'etcd is down'))?.kind).toBe('unreachable');
    expect(serverRefusal(answer(503, 'ServiceUnavailable', 'etcd is down'))?.exitCode).toBe(2);
    expect(serverRefusal(answer(422, 'Invalid', 'spec.replicas: Invalid value'))?.kind).toBe('input');
  });

  it('leaves any other error as it is', () => {
    expect(serverRefusal(new Error('a bug'))).toBeUndefined();
    expect(serverRefusal(new FerryError('gate', 'stopped'))).toBeUndefined();
  });
});
