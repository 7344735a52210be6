import { describe, expect, it } from 'vitest';
import type { EtcdMemberInfo } from '../ports/run.js';
import type { KubeObject } from '../snapshot/model.js';
import { auditGuard } from './audit-guard.js';

const member = (name: string, id = name): EtcdMemberInfo => ({
  id,
  name,
  peerURLs: [],
  clientURLs: [],
  isLearner: false,
});
const machine = (name: string, node?: string): KubeObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Machine',
  metadata: { name },
  ...(node && { status: { nodeRef: { name: node } } }),
});

describe('auditGuard', () => {
  it('is safe while no control-plane Machine has a Node: the audit waits', () => {
    expect(auditGuard([member('cp-1')], [])).toEqual({ kind: 'safe' });
    expect(auditGuard([member('cp-1')], [machine('tcp-a')])).toEqual({ kind: 'safe' });
  });
  it('refuses once a Machine has a Node and a kubeadm member remains, naming them', () => {
    const g = auditGuard(
      [member('cp-1'), member('CP-2.lab.local'), member('tcp-a')],
      [machine('tcp-a', 'tcp-a')],
    );
    expect(g).toEqual({ kind: 'refused', machinesWithNode: ['tcp-a'], unowned: ['cp-1', 'CP-2.lab.local'] });
  });
  it('is safe once every member is a Machine’s (by nodeRef or Machine name, first label, any case)', () => {
    const ms = [machine('tcp-a', 'node-a'), machine('tcp-b')];
    expect(auditGuard([member('NODE-A.lab'), member('tcp-b')], ms)).toEqual({ kind: 'safe' });
  });
  it('counts an unnamed member (a learner not started) as unowned, by its id', () => {
    expect(auditGuard([member('', '42')], [machine('tcp-a', 'tcp-a')])).toMatchObject({ unowned: ['42'] });
  });
});
