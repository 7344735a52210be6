import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configMap, labCluster } from '../../test/facts/builders.js';
import { deriveFacts } from '../facts/derive.js';
import type { Snapshot } from '../snapshot/model.js';
import type { Artifact } from './artifact.js';
import { ciliumArtifacts } from './cilium.js';

function run(bend: (s: Snapshot) => void = () => {}, opts: Parameters<typeof ciliumArtifacts>[1] = {}) {
  const s = labCluster();
  bend(s);
  return ciliumArtifacts(deriveFacts(s, {}), opts);
}

function artifacts(r: ReturnType<typeof run>): Map<string, Artifact> {
  if (r.kind !== 'ok') throw new Error(`missing ${JSON.stringify(r.missing)}`);
  return new Map(r.artifacts.map((a) => [a.path, a]));
}

describe('Cilium values for Talos', () => {
  it('migration values: Talos agent settings, OnDelete, API address as found', () => {
    const a = artifacts(run()).get('cilium/values-migration.yaml')!;
    const v = parse(a.content);
    expect(v.cgroup).toEqual({ autoMount: { enabled: false }, hostRoot: '/sys/fs/cgroup' });
    expect(v.securityContext.capabilities.ciliumAgent).not.toContain('SYS_MODULE');
    expect(v.securityContext.capabilities.ciliumAgent).toContain('NET_ADMIN');
    expect(v.updateStrategy).toEqual({ type: 'OnDelete' });
    // cilium-config of the builder: k8s-service-host k8s-api.lab.example:6443 — not KubePrism yet.
    expect(v.k8sServiceHost).toBe('k8s-api.lab.example');
    expect(v.k8sServicePort).toBe(6443);
    expect(a.content).toMatch(
      /helm upgrade cilium cilium\/cilium -n kube-system --version 1\.16\.5 --reuse-values -f cilium\/values-migration\.yaml/,
    );
    expect(a.content).toMatch(/cilium\/agents\.sh check/);
    expect(a.provenance['updateStrategy']?.length).toBeGreaterThan(0);
  });

  it('final values: KubePrism localhost:7445 and the update strategy the cluster had', () => {
    const v = parse(artifacts(run()).get('cilium/values-talos.yaml')!.content);
    expect(v.k8sServiceHost).toBe('localhost');
    expect(v.k8sServicePort).toBe(7445);
    expect(v.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } });
  });

  it('kube-proxy replacement without an API address gets the endpoint during the migration', () => {
    const v = parse(
      artifacts(
        run((s) => {
          s.resources.configmaps = s.resources.configmaps.map((c) =>
            c.metadata.name === 'cilium-config'
              ? configMap('kube-system', 'cilium-config', {
                  'kube-proxy-replacement': 'true',
                  ipam: 'kubernetes',
                })
              : c,
          );
        }),
      ).get('cilium/values-migration.yaml')!.content,
    );
    expect(v.k8sServiceHost).toBe('k8s-api.lab.example');
    expect(v.k8sServicePort).toBe(6443);
  });

  it('envoy as found when the current values are given', () => {
    const r = run(() => {}, {
      currentValues: {
        file: 'values.yaml',
        values: { envoy: { enabled: true, prometheus: { enabled: false } } },
      },
    });
    const v = parse(artifacts(r).get('cilium/values-migration.yaml')!.content);
    expect(v.envoy).toEqual({ enabled: true, prometheus: { enabled: false } });
  });

  it('the agents script records and compares pod identities and restart counts', () => {
    const a = artifacts(run()).get('cilium/agents.sh')!;
    expect(a.mode).toBe(0o755);
    expect(a.content).toContain("SELECTOR='k8s-app=cilium'");
    expect(a.content).toMatch(/metadata\.uid/);
    expect(a.content).toMatch(/restartCount/);
  });

  it('no Cilium, no values; no resources, missing input', () => {
    const none = run((s) => {
      s.resources.daemonsets = [];
      s.resources.configmaps = s.resources.configmaps.filter((c) => c.metadata.name !== 'cilium-config');
    });
    expect(none).toMatchObject({ kind: 'ok', artifacts: [] });
    const blind = run((s) => {
      s.resources = { ...s.resources, daemonsets: [], configmaps: [], nodes: [], services: [] };
      s.manifest.parts = s.manifest.parts.filter((p) => p !== 'resources');
    });
    expect(blind.kind).toBe('missing');
  });
});
