/**
 * readMgmt's Deployment list against a scripted requester: read, its controllers summarised;
 * refused (403) or not served (404), recorded as not observed; any other failure, a stop.
 */
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../ports/kube.js';
import { rejected } from '../../testing-errors.js';
import type { KubeRequester } from '../kube/request.js';
import { readMgmt } from './mgmt-reader.js';

const DEPLOYMENTS = '/apis/apps/v1/deployments';

function requester(deployments: (() => unknown) | unknown): KubeRequester & { paths: string[] } {
  const paths: string[] = [];
  return {
    address: '127.0.71.9:6443',
    server: 'https://127.0.71.9:6443',
    paths,
    async request(_method: string, path: string) {
      paths.push(path);
      if (path === DEPLOYMENTS) return typeof deployments === 'function' ? deployments() : deployments;
      return { items: [] };
    },
  };
}

const refused = (status: number, message: string) => () => {
  throw new KubeApiError({ status, message, path: DEPLOYMENTS, address: '127.0.71.9:6443' });
};

describe('readMgmt: the controllers', () => {
  it('lists the Deployments of every namespace and keeps the controllers only', async () => {
    const r = requester({
      items: [
        {
          metadata: {
            name: 'capi-controller-manager',
            namespace: 'capi-system',
            labels: { 'cluster.x-k8s.io/provider': 'cluster-api' },
          },
          spec: {
            replicas: 1,
            template: { spec: { containers: [{ name: 'manager', args: ['--leader-elect'] }] } },
          },
        },
        { metadata: { name: 'coredns', namespace: 'kube-system' }, spec: {} },
      ],
    });
    const m = await readMgmt(r, r.server);
    expect(r.paths).toContain(DEPLOYMENTS);
    expect(m.controllers).toEqual({
      kind: 'observed',
      deployments: [
        {
          namespace: 'capi-system',
          name: 'capi-controller-manager',
          component: 'cluster-api',
          replicas: 1,
          leaderElection: 'on',
          spread: 'none',
        },
      ],
    });
  });

  it('a list refused (403) or not served (404) is not observed, with the server’s words', async () => {
    let m = await readMgmt(
      requester(refused(403, 'deployments.apps is forbidden: User "audit" cannot list')),
      'x',
    );
    expect(m.controllers).toEqual({
      kind: 'not-observed',
      reason: 'forbidden',
      message: 'list deployments.apps: deployments.apps is forbidden: User "audit" cannot list',
    });
    m = await readMgmt(requester(refused(404, 'the server could not find the requested resource')), 'x');
    expect(m.controllers).toMatchObject({ kind: 'not-observed', reason: 'not-served' });
  });

  it('any other failure stops the read, naming the path and the fix', async () => {
    const e = await rejected(readMgmt(requester(refused(500, 'etcdserver: request timed out')), 'x'));
    expect(e.message).toContain(
      'cannot list Deployments in the management cluster (127.0.71.9:6443 /apis/apps/v1/deployments)',
    );
    expect(e.remediation).toMatch(/may list Deployments in every namespace/);
  });
});
