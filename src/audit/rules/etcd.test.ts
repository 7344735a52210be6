import { describe, expect, it } from 'vitest';
import { planControlPlaneHostnames, reservedNames } from '../../facts/hostnames.js';
import { exampleSnapshot } from '../../snapshot/testing-example.js';
import { externalEtcdSnapshot } from '../../snapshot/testing-external-etcd.js';
import { runAudit } from '../engine.js';
import {
  dbSize,
  external,
  extraArgs,
  memberCount,
  memberNameCollision,
  nameCollisions,
  unhealthy,
  v2Enabled,
  versionLearnerBug,
  versionSkew,
  versionTooOld,
} from './etcd.js';
import { ALL_RULES } from './index.js';
import { CONTROL_PLANES, etcdState, MEMBER_IDS, member, status } from './testing-etcd.js';
import {
  buildSnapshot,
  clusterConfiguration,
  contextOf,
  controlPlanePods,
  etcdPod,
  findings,
  run,
} from './testing-network.js';

const withEtcd = (state = etcdState(), target = {}) => contextOf(buildSnapshot({ etcd: state }), target);

describe('etcd.version-too-old', () => {
  it('fires for 3.4 members and a 3.4 cluster version, naming each member', () => {
    const fs = findings(versionTooOld.check(withEtcd(etcdState({ version: '3.4.13' }))));
    expect(fs.map((f) => f.field)).toEqual(['version', 'etcdcluster']);
    expect(fs[0]!.message).toContain('etcd 3.4.13 runs on member cp-1, member cp-2, member cp-3');
    expect(fs[0]!.evidence).toHaveLength(3);
    expect(fs[0]!.evidence[0]).toMatchObject({ kind: 'etcd-member', name: 'cp-1', observed: '3.4.13' });
  });

  it('reads the static pod image tag when the snapshot has no etcd state', () => {
    const cps = CONTROL_PLANES.flatMap(([n, ip]) => [
      ...controlPlanePods(n, ip),
      etcdPod(n, ip, [], '3.4.13-0'),
    ]);
    const fs = findings(versionTooOld.check(contextOf(buildSnapshot({ staticPods: cps }))));
    expect(fs).toHaveLength(1);
    expect(fs[0]!.message).toContain('the etcd static pods');
    expect(fs[0]!.evidence[0]).toMatchObject({
      kind: 'file',
      path: 'fixtures/cluster/manifests/cp-1/etcd.yaml',
    });
  });

  it('does not fire for 3.5', () => {
    expect(versionTooOld.check(withEtcd())).toEqual([]);
  });

  it('skips when no source tells the version', () => {
    expect(versionTooOld.check(contextOf(buildSnapshot({ staticPods: [] })))).toMatchObject({
      kind: 'skipped',
    });
  });
});

describe('etcd.version-learner-bug', () => {
  it('fires for 3.5 below 3.5.26 when the target runs etcd 3.6 (default v1.13.9)', () => {
    const fs = findings(versionLearnerBug.check(withEtcd(etcdState({ version: '3.5.16' }))));
    expect(fs).toHaveLength(1);
    expect(fs[0]!.message).toContain('older than 3.5.26');
    expect(fs[0]!.evidence.map((e) => (e.kind === 'etcd-member' ? e.name : ''))).toEqual([
      'cp-1',
      'cp-2',
      'cp-3',
    ]);
  });

  it('does not fire for 3.5.26 or for 3.6 members', () => {
    expect(versionLearnerBug.check(withEtcd(etcdState({ version: '3.5.26' })))).toEqual([]);
    expect(versionLearnerBug.check(withEtcd(etcdState({ version: '3.6.5' })))).toEqual([]);
  });

  it('on a 3.5 target (Talos v1.10) fires only for 3.5.1–3.5.19', () => {
    const target = { talosVersion: 'v1.10.0' };
    expect(
      findings(versionLearnerBug.check(withEtcd(etcdState({ version: '3.5.16' }), target))),
    ).toHaveLength(1);
    expect(versionLearnerBug.check(withEtcd(etcdState({ version: '3.5.21' }), target))).toEqual([]);
  });
});

describe('etcd.version-skew', () => {
  it('fires when Talos v1.14 (etcd 3.7) meets a 3.5 cluster, and says a 3.5 pin cannot work', () => {
    const fs = findings(
      versionSkew.check(withEtcd(etcdState({ version: '3.5.26' }), { talosVersion: 'v1.14' })),
    );
    expect(fs).toHaveLength(1);
    expect(fs[0]!.field).toBe('minor-skew');
    expect(fs[0]!.remediation).toContain('needs etcd 3.6+');
    expect(fs[0]!.remediation).toContain('v1.13');
    expect(fs[0]!.evidence.at(-1)).toMatchObject({ kind: 'target', observed: '3.7.1' });
  });

  it('does not fire one minor apart (3.5 cluster, Talos v1.13 with 3.6)', () => {
    expect(versionSkew.check(withEtcd(etcdState({ version: '3.5.26' })))).toEqual([]);
  });

  it('pins a member server version, never the etcdcluster protocol version', () => {
    const f = findings(versionSkew.check(withEtcd(etcdState({ version: '3.4.13' }))))[0]!;
    expect(f.message).toContain('2 minors ahead of the cluster version (etcdcluster) (3.4.0)');
    expect(f.remediation).toContain('Pin cluster.etcd.image to gcr.io/etcd-development/etcd:v3.4.13');
  });

  it('fires when the target etcd is older than the cluster (a downgrade)', () => {
    const fs = findings(
      versionSkew.check(withEtcd(etcdState({ version: '3.6.5' }), { talosVersion: 'v1.10' })),
    );
    expect(fs.map((f) => f.field)).toEqual(['downgrade']);
  });
});

describe('etcd.unhealthy', () => {
  it('does not fire for three started, healthy voters with one leader', () => {
    expect(unhealthy.check(withEtcd())).toEqual([]);
  });

  it('fires for an unstarted member, a leftover learner, errors and an alarm', () => {
    const members = [
      member('cp-1', MEMBER_IDS[0]!, '10.0.0.11'),
      member('cp-2', MEMBER_IDS[1]!, '10.0.0.12', { isLearner: true }),
      member('cp-3', MEMBER_IDS[2]!, '10.0.0.13'),
      member('', '42', '10.0.0.14'),
    ];
    const state = etcdState({
      members,
      statuses: (ms) =>
        ms
          .filter((m) => m.name)
          .map((m) => status(m, ms[0]!.id, m.name === 'cp-3' ? { errors: ['slow disk'] } : {})),
      alarms: [{ memberId: MEMBER_IDS[0]!, alarm: 'NOSPACE' }],
    });
    const fs = findings(unhealthy.check(withEtcd(state)));
    expect(fs.map((f) => `${f.subject?.name}:${f.field}`).sort()).toEqual([
      '42:started',
      'cp-1:alarm.NOSPACE',
      'cp-2:isLearner',
      'cp-3:errors',
    ]);
    expect(fs.find((f) => f.field === 'started')!.remediation).toContain('member remove 2a');
  });

  it('fires when no leader is reported, or members disagree on it', () => {
    const none = etcdState({ statuses: (ms) => ms.map((m) => status(m, '0')) });
    expect(findings(unhealthy.check(withEtcd(none))).map((f) => f.field)).toEqual(['leader']);
    const split = etcdState({ statuses: (ms) => ms.map((m, i) => status(m, ms[i === 2 ? 1 : 0]!.id)) });
    expect(findings(unhealthy.check(withEtcd(split)))[0]!.message).toContain('different leaders');
  });

  it('fires for a member without a node and, as a risk, for a member that reported no status', () => {
    const members = [
      ...CONTROL_PLANES.map(([n, ip], i) => member(n, MEMBER_IDS[i]!, ip)),
      member('old-cp', '77', '10.0.0.99'),
    ];
    const state = etcdState({ members, statuses: (ms) => ms.slice(0, 3).map((m) => status(m, ms[0]!.id)) });
    const fs = findings(unhealthy.check(withEtcd(state)));
    expect(fs.map((f) => [f.field, f.severity ?? 'blocker'])).toEqual([
      ['status', 'risk'],
      ['node', 'blocker'],
    ]);
  });

  it('skips instead of passing when there is no endpoint status', () => {
    expect(unhealthy.check(withEtcd(etcdState({ statuses: () => [] })))).toMatchObject({
      kind: 'skipped',
      missing: ['etcd endpoint status'],
    });
  });

  it('finds nothing wrong with the example cluster', async () => {
    const s = await exampleSnapshot();
    expect(unhealthy.check(contextOf(s))).toEqual([]);
  });
});

describe('etcd.member-count', () => {
  const withVoters = (n: number, learners = 0) =>
    withEtcd(
      etcdState({
        members: Array.from({ length: n + learners }, (_, i) =>
          member(`cp-${i + 1}`, String(100 + i), `10.0.0.${11 + i}`, { isLearner: i >= n }),
        ),
      }),
    );

  it('does not fire for 3 or 5 voters, learners not counted', () => {
    expect(memberCount.check(withVoters(3))).toEqual([]);
    expect(memberCount.check(withVoters(5))).toEqual([]);
    expect(memberCount.check(withVoters(3, 1))).toEqual([]);
  });

  it('is a blocker for 2 voters and a risk for 1 or an even count', () => {
    expect(findings(memberCount.check(withVoters(2)))[0]!.severity).toBe('blocker');
    expect(findings(memberCount.check(withVoters(1)))[0]).toMatchObject({ field: 'voters' });
    expect(findings(memberCount.check(withVoters(1)))[0]!.severity).toBeUndefined();
    expect(findings(memberCount.check(withVoters(4)))[0]!.message).toContain('4 voting members');
  });
});

describe('etcd.member-name-collision', () => {
  it('finds planned hostnames equal to a member or Node name, case-insensitively', () => {
    expect(
      nameCollisions(['talos-cp-1', 'CP-2', 'worker-1'], ['cp-1', 'cp-2', ''], ['cp-1', 'worker-1']),
    ).toEqual([
      { hostname: 'CP-2', member: 'cp-2' },
      { hostname: 'worker-1', node: 'worker-1' },
    ]);
    expect(nameCollisions(['talos-a', 'talos-b'], ['cp-1'], ['cp-1'])).toEqual([]);
  });

  it('decides on the hostnames ferry generate plans (talos-cp-N), which avoid every member and Node', () => {
    const ctx = withEtcd();
    expect(findings(memberNameCollision.check(ctx))).toEqual([]);
    // The same names the Talos generator writes into talos/nodes/<hostname>.yaml.
    const reserved = new Set(reservedNames(ctx.facts).names.keys());
    expect(planControlPlaneHostnames(ctx.facts.nodes.controlPlane.value!, reserved)).toEqual([
      { hostname: 'talos-cp-1', replaces: 'cp-1' },
      { hostname: 'talos-cp-2', replaces: 'cp-2' },
      { hostname: 'talos-cp-3', replaces: 'cp-3' },
    ]);
  });

  it('plans around a member already named like a planned hostname, and still passes', () => {
    const members = [
      member('cp-1', MEMBER_IDS[0]!, '10.0.0.11'),
      member('talos-cp-2', MEMBER_IDS[1]!, '10.0.0.12'),
      member('cp-3', MEMBER_IDS[2]!, '10.0.0.13'),
    ];
    const ctx = withEtcd(etcdState({ members }));
    expect(findings(memberNameCollision.check(ctx))).toEqual([]);
    const reserved = new Set(reservedNames(ctx.facts).names.keys());
    expect(planControlPlaneHostnames(ctx.facts.nodes.controlPlane.value!, reserved)[1]!.hostname).toBe(
      'talos-cp-2-2',
    );
  });

  it('with Cluster API, fires for a member named like the machines it would create (<cluster>-control-plane-xxxxx)', () => {
    const members = [
      member('test-control-plane-x7k2p', MEMBER_IDS[0]!, '10.0.0.11'),
      member('cp-2', MEMBER_IDS[1]!, '10.0.0.12'),
      member('test-worker-abcde', MEMBER_IDS[2]!, '10.0.0.13'),
    ];
    const fs = findings(memberNameCollision.check(withEtcd(etcdState({ members }), { provisioner: 'capi' })));
    expect(fs).toHaveLength(1);
    expect(fs[0]).toMatchObject({
      severity: 'risk',
      subject: { kind: 'EtcdMember', name: 'test-control-plane-x7k2p' },
    });
    expect(fs[0]!.message).toContain('test-control-plane-xxxxx');
    expect(findings(memberNameCollision.check(withEtcd(etcdState(), { provisioner: 'capi' })))).toEqual([]);
  });

  it('is skipped without the member list, saying what to provide', () => {
    const r = memberNameCollision.check(
      contextOf(buildSnapshot({ parts: ['resources', 'kubeadm', 'flags', 'etcd'] })),
    );
    expect(r).toMatchObject({ kind: 'skipped' });
  });
});

describe('etcd.external', () => {
  it('fires when the apiservers use etcd off their own node', () => {
    const pods = CONTROL_PLANES.flatMap(([n, ip]) =>
      controlPlanePods(n, ip).map((p) =>
        p.component === 'kube-apiserver'
          ? {
              ...p,
              flags: p.flags.map((f) =>
                f.name === 'etcd-servers'
                  ? { ...f, value: 'https://10.0.1.5:2379,https://10.0.1.6:2379' }
                  : f,
              ),
            }
          : p,
      ),
    );
    const fs = findings(external.check(contextOf(buildSnapshot({ staticPods: pods }))));
    expect(fs[0]!.message).toContain('https://10.0.1.5:2379');
    expect(fs[0]!.evidence[0]).toMatchObject({
      kind: 'flag',
      component: 'kube-apiserver',
      flag: 'etcd-servers',
    });
  });

  it('fires from kubeadm-config etcd.external alone', () => {
    const cc = clusterConfiguration({ etcd: { external: { endpoints: ['https://etcd.example:2379'] } } });
    expect(findings(external.check(contextOf(buildSnapshot({ cc, staticPods: [] }))))).toHaveLength(1);
  });

  it('does not fire for stacked etcd on loopback', () => {
    expect(external.check(withEtcd())).toEqual([]);
  });
});

describe('etcd.v2-enabled', () => {
  const pods = (extra: [string, string][]) =>
    CONTROL_PLANES.flatMap(([n, ip]) => [...controlPlanePods(n, ip), etcdPod(n, ip, extra)]);

  it('fires for --enable-v2=true, quoting each member', () => {
    const fs = findings(
      v2Enabled.check(contextOf(buildSnapshot({ staticPods: pods([['enable-v2', 'true']]) }))),
    );
    expect(fs[0]!.evidence).toHaveLength(3);
    expect(fs[0]!.message).toContain('--enable-v2=true');
  });

  it('does not fire without the flags or with --enable-v2=false', () => {
    expect(v2Enabled.check(contextOf(buildSnapshot()))).toEqual([]);
    expect(v2Enabled.check(contextOf(buildSnapshot({ staticPods: pods([['enable-v2', 'false']]) })))).toEqual(
      [],
    );
  });
});

describe('etcd.extra-args', () => {
  const pods = (perNode: (node: string) => [string, string][]) =>
    CONTROL_PLANES.flatMap(([n, ip]) => [...controlPlanePods(n, ip), etcdPod(n, ip, perNode(n))]);

  it('does not fire for kubeadm-default etcd flags', () => {
    expect(extraArgs.check(contextOf(buildSnapshot()))).toEqual([]);
  });

  it('fires per operator flag with each member as evidence', () => {
    const s = buildSnapshot({ staticPods: pods(() => [['quota-backend-bytes', '8589934592']]) });
    const fs = findings(extraArgs.check(contextOf(s)));
    expect(fs.map((f) => f.field)).toEqual(['--quota-backend-bytes']);
    expect(fs[0]!.evidence.map((e) => (e.kind === 'flag' ? e.node : ''))).toEqual(['cp-1', 'cp-2', 'cp-3']);
    expect(fs[0]!.remediation).toContain('cluster.etcd.extraArgs');
  });

  it('notices election timing that differs between members', () => {
    const s = buildSnapshot({
      staticPods: pods((n) =>
        n === 'cp-3' ? [['heartbeat-interval', '250']] : [['heartbeat-interval', '100']],
      ),
    });
    expect(findings(extraArgs.check(contextOf(s)))[0]!.message).toContain('Members disagree');
  });

  it('says deny-listed flags cannot be carried', () => {
    const cc = clusterConfiguration();
    cc.etcd.local!.extraArgs = [{ name: 'auto-tls', value: 'false' }];
    const fs = findings(extraArgs.check(contextOf(buildSnapshot({ cc }))));
    expect(fs[0]!.message).toContain('rejects it');
    expect(fs[0]!.evidence[0]).toMatchObject({
      kind: 'file',
      path: 'fixtures/cluster/kubeadm-config.yaml',
      line: 3,
      field: 'etcd.local.extraArgs[auto-tls]',
    });
  });

  it('finds the example cluster’s listen-metrics-urls (trap 3) in the manifests and kubeadm-config', async () => {
    const fs = findings(extraArgs.check(contextOf(await exampleSnapshot())));
    expect(fs.map((f) => f.field)).toEqual(['--listen-metrics-urls']);
    expect(fs[0]!.evidence).toHaveLength(4);
  });

  it('says whether ferry generate carries the flag: a non-loopback --listen-metrics-urls it does', async () => {
    const [metrics] = findings(extraArgs.check(contextOf(await exampleSnapshot())));
    expect(metrics!.message).toContain('--listen-metrics-urls=http://0.0.0.0:2381');
    expect(metrics!.remediation).toContain('ferry generate writes it from the kubeadm manifests');
    expect(metrics!.kitChecks).toEqual([
      {
        kind: 'value',
        file: 'talos/controlplane-patch.yaml',
        path: ['cluster', 'etcd', 'extraArgs', 'listen-metrics-urls'],
        test: { op: 'equals', value: 'http://0.0.0.0:2381' },
      },
    ]);
  });

  it('does not apply to external etcd', () => {
    const cc = clusterConfiguration({ etcd: { external: { endpoints: ['https://etcd.example:2379'] } } });
    expect(extraArgs.check(contextOf(buildSnapshot({ cc, staticPods: [] })))).toMatchObject({
      kind: 'not-applicable',
    });
  });
});

describe('etcd.db-size', () => {
  it('reports the largest member against the quota', () => {
    const f = findings(dbSize.check(withEtcd()))[0]!;
    expect(f.message).toContain('50 MiB');
    expect(f.message).toContain('2048 MiB quota, etcd default');
  });

  it('uses --quota-backend-bytes and asks for a defrag near the quota', () => {
    const pods = CONTROL_PLANES.flatMap(([n, ip]) => [
      ...controlPlanePods(n, ip),
      etcdPod(n, ip, [['quota-backend-bytes', String(60 * 1024 * 1024)]]),
    ]);
    const f = findings(dbSize.check(contextOf(buildSnapshot({ staticPods: pods, etcd: etcdState() }))))[0]!;
    expect(f.message).toContain('83% of the 60 MiB quota');
    expect(f.remediation).toContain('defragment');
  });

  it('skips without endpoint status', () => {
    expect(dbSize.check(withEtcd(etcdState({ statuses: () => [] })))).toMatchObject({ kind: 'skipped' });
  });
});

describe('the example cluster (trap 16: etcd 3.5.16)', () => {
  it('is a learner-bug blocker on every target from v1.11 and a skew blocker on v1.14 only', async () => {
    const s = await exampleSnapshot();
    expect(findings(run(versionLearnerBug, contextOf(s)))).toHaveLength(1);
    expect(run(versionSkew, contextOf(s))).toEqual([]);
    expect(findings(run(versionSkew, contextOf(s, { talosVersion: 'v1.14' })))).toHaveLength(1);
    expect(run(memberCount, contextOf(s))).toEqual([]);
    expect(run(external, contextOf(s))).toEqual([]);
  });
});

describe('external etcd (src/snapshot/fixtures/external-etcd)', () => {
  const external3 = async () => contextOf(await externalEtcdSnapshot());

  it('etcd.external is one blocker that names the servers, the members and what to do', async () => {
    const fs = findings(external.check(await external3()));
    expect(fs).toHaveLength(1);
    expect(fs[0]!.message).toContain(
      'The apiservers use an external etcd (https://10.0.1.5:2379, https://10.0.1.6:2379, https://10.0.1.7:2379); 3 of its 3 member(s) run on no Node of the cluster (etcd-1 https://10.0.1.5:2379',
    );
    expect(fs[0]!.message).toContain('Talos can neither keep using this etcd nor join it');
    expect(fs[0]!.remediation).toMatch(/^Move etcd onto the kubeadm control planes before migrating/);
    expect(fs[0]!.evidence.map((e) => (e.kind === 'flag' ? e.node : e.kind))).toEqual([
      'cp-1',
      'cp-2',
      'cp-3',
      'file',
    ]);
  });

  it('is the only finding about --etcd-servers: apiserver.extra-arg-denied leaves it to etcd.external', async () => {
    const ctx = await external3();
    const report = runAudit({ ...ctx, rules: ALL_RULES, now: new Date('2026-09-01T00:00:00Z') });
    const aboutTopology = report.findings.filter(
      (f) => f.ruleId === 'etcd.external' || f.field === '--etcd-servers',
    );
    expect(aboutTopology.map((f) => f.ruleId)).toEqual(['etcd.external']);
  });

  it('etcd.unhealthy does not report external members for lacking a Node, but still checks their health', async () => {
    expect(unhealthy.check(await external3())).toEqual([]);
    const s = await externalEtcdSnapshot();
    s.etcd!.members[2]!.isLearner = true;
    s.etcd!.endpoints[0]!.errors = ['etcdserver: request timed out'];
    const fs = findings(unhealthy.check(contextOf(s)));
    expect(fs.map((f) => `${f.subject?.name}:${f.field}`).sort()).toEqual([
      'etcd-1:errors',
      'etcd-3:isLearner',
    ]);
    // The same members in a stacked cluster are stale: they match no Node.
    const stacked = await externalEtcdSnapshot();
    delete stacked.kubeadm.clusterConfiguration!.etcd.external;
    for (const p of stacked.staticPods)
      p.flags = p.flags.map((f) =>
        f.name === 'etcd-servers' ? { ...f, value: 'https://127.0.0.1:2379' } : f,
      );
    expect(findings(unhealthy.check(contextOf(stacked))).map((f) => f.field)).toEqual([
      'node',
      'node',
      'node',
    ]);
  });

  it('version and size checks still judge the external members', async () => {
    const ctx = await external3();
    const bug = findings(versionLearnerBug.check(ctx));
    expect(bug).toHaveLength(1);
    expect(bug[0]!.message).toContain('etcd 3.5.21 runs on member etcd-1, member etcd-2, member etcd-3');
    expect(bug[0]!.remediation).toContain('Patch the external etcd, one member at a time on its own hosts');
    expect(findings(versionTooOld.check(ctx))).toEqual([]);
    expect(findings(versionSkew.check(ctx))).toEqual([]);
    const size = findings(dbSize.check(ctx))[0]!;
    expect(size.message).toContain('up to 120 MiB (member etcd-1, 90 MiB in use');
    expect(size.message).toContain(
      'etcd default assumed: the external members’ flags are not in the snapshot',
    );
    expect(size.message).toContain('Each member that moves etcd onto the control planes (etcd.external)');
  });

  it('rules about swapping or carrying kubeadm members do not apply', async () => {
    const ctx = await external3();
    for (const rule of [memberCount, memberNameCollision, v2Enabled, extraArgs])
      expect(rule.check(ctx), rule.id).toMatchObject({
        kind: 'not-applicable',
        reason: expect.stringMatching(/^etcd is external \(see etcd\.external\)/),
      });
  });
});
