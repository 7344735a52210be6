import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors.js';
import { known, missingFact } from '../facts/decide.js';
import type { EtcdTopology, Fact, Facts } from '../facts/model.js';
import type { SourceRef } from '../snapshot/model.js';
import { refuseExternalEtcd } from './topology.js';

const withTopology = (topology: Fact<EtcdTopology>) => ({ etcd: { topology } }) as unknown as Facts;
const external = (source: SourceRef) =>
  withTopology(
    known('etcd.topology', 'etcd topology', { mode: 'external', servers: ['https://10.0.1.5:2379'] }, [
      source,
    ]),
  );

function refusal(facts: Facts): FerryError {
  try {
    refuseExternalEtcd(facts);
  } catch (e) {
    if (e instanceof FerryError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('refuseExternalEtcd', () => {
  it('lets stacked and unknown topologies through (the other refusals of buildPlan judge those)', () => {
    const stacked = known('etcd.topology', 'etcd topology', { mode: 'stacked' as const, servers: [] }, []);
    expect(() => refuseExternalEtcd(withTopology(stacked))).not.toThrow();
    expect(() => refuseExternalEtcd(withTopology(missingFact('etcd.topology', 't', 'x')))).not.toThrow();
  });

  it('refuses an external etcd with exit 2, pointing where the topology was read', () => {
    const manifest: SourceRef = { kind: 'file', path: 'c/manifests/cp-1/kube-apiserver.yaml', line: 1 };
    const e = refusal(
      external({
        kind: 'flag',
        component: 'kube-apiserver',
        node: 'cp-1',
        flag: 'etcd-servers',
        from: manifest,
      }),
    );
    expect(e.exitCode).toBe(2);
    expect(e.message).toMatch(/^etcd topology is external \(the apiservers use https:\/\/10\.0\.1\.5:2379\)/);
    expect(e.location).toEqual({
      file: 'c/manifests/cp-1/kube-apiserver.yaml',
      line: 1,
      object: 'kube-apiserver@cp-1 --etcd-servers',
    });
    const mirror: SourceRef = {
      kind: 'object',
      objectKind: 'Pod',
      namespace: 'kube-system',
      name: 'kube-apiserver-cp-1',
    };
    expect(
      refusal(
        external({
          kind: 'flag',
          component: 'kube-apiserver',
          node: 'cp-1',
          flag: 'etcd-servers',
          from: mirror,
        }),
      ).location,
    ).toEqual({ object: 'kube-apiserver@cp-1 --etcd-servers (Pod kube-system/kube-apiserver-cp-1)' });
    expect(
      refusal(external({ kind: 'file', path: 'c/kubeadm-config.yaml', line: 3, field: 'etcd.external' }))
        .location,
    ).toEqual({ file: 'c/kubeadm-config.yaml', line: 3, field: 'etcd.external' });
  });
});
