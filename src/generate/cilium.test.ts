import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { deriveFacts } from '../facts/derive.js';
import { configMap, labCluster } from '../facts/testing-builders.js';
import type { Snapshot } from '../snapshot/model.js';
import type { Artifact } from './artifact.js';
import { ciliumArtifacts } from './cilium.js';

const execFileAsync = promisify(execFile);

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

  it('the agents script records the agent pods and tells a restart or replacement from no change', async () => {
    const a = artifacts(run()).get('cilium/agents.sh')!;
    expect(a.mode).toBe(0o755);
    const dir = await mkdtemp(join(tmpdir(), 'ferry-cilium-agents-'));
    try {
      // kubectl stand-in: records its arguments and prints what the jsonpath would for $PODS.
      await writeFile(join(dir, 'agents.sh'), a.content);
      await writeFile(join(dir, 'kubectl'), '#!/bin/sh\nprintf "%s\\n" "$@" > "$ARGS"\ncat "$PODS"\n', {
        mode: 0o755,
      });
      const pods = (lines: string[]) => writeFile(join(dir, 'pods'), `${lines.join('\n')}\n`);
      const sh = async (...args: string[]) => {
        const env = {
          ...process.env,
          PATH: `${dir}:${process.env['PATH']}`,
          ARGS: join(dir, 'args'),
          PODS: join(dir, 'pods'),
          CILIUM_AGENTS_STATE: join(dir, 'state'),
        };
        try {
          const r = await execFileAsync('sh', [join(dir, 'agents.sh'), ...args], { env });
          return { code: 0, out: r.stdout, err: r.stderr };
        } catch (e) {
          const err = e as { code: number; stdout: string; stderr: string };
          return { code: err.code, out: err.stdout, err: err.stderr };
        }
      };
      const cp1 = 'cilium-abcde uid-1 cp-1 restarts=0';
      const w1 = 'cilium-fghij uid-2 worker-1 restarts=1';
      await pods([w1, cp1]);
      const recorded = await sh('record');
      expect(recorded).toMatchObject({ code: 0, out: expect.stringContaining('recorded 2 agent pod(s)') });
      const args = (await readFile(join(dir, 'args'), 'utf8')).split('\n');
      expect(args.slice(0, 6)).toEqual(['-n', 'kube-system', 'get', 'pods', '-l', 'k8s-app=cilium']);
      expect(args.join(' ')).toMatch(/\.metadata\.uid.*restartCount/);

      await pods([cp1, w1]); // listing order does not matter
      expect(await sh('check')).toMatchObject({
        code: 0,
        out: expect.stringContaining('no Cilium agent was'),
      });
      await pods([cp1, 'cilium-fghij uid-2 worker-1 restarts=2']);
      expect(await sh('check')).toMatchObject({
        code: 1,
        err: expect.stringContaining('Cilium agents changed'),
      });
      await pods([cp1, 'cilium-zzzzz uid-9 worker-1 restarts=0']);
      expect((await sh('check')).code).toBe(1);
      expect((await sh()).code).toBe(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
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
