/**
 * etcd (blockers.md "etcd"). A Talos control plane joins kubeadm's etcd as a learner, promotes
 * itself and runs the etcd version of its release; that only works when every member is healthy, on
 * a version the Talos member can join, and no member shares a Talos hostname. Facts: etcd.* (members
 * with versions and status, topology, flags), target.talos (its etcd version).
 */
import { planControlPlaneHostnames, reservedNames } from '../../facts/hostnames.js';
import type { EtcdInstance, EtcdMemberFact } from '../../facts/model.js';
import { atField } from '../../facts/sources.js';
import type { Target } from '../../facts/target.js';
import { lastFlag } from '../../facts/view.js';
import { ETCD_DENIED_ARGS, TALOS_RELEASES } from '../../knowledge/talos.js';
import { minEtcdMinorFor, pinnedEtcdImage } from '../../knowledge/talos-config.js';
import type { Flag } from '../../snapshot/model.js';
import { memberIdHex } from '../../util/member-id.js';
import { compareVersions, parseVersion, type Version } from '../../util/semver.js';
import { type Evidence, evidenceFromSource, type Observation, type Subject } from '../findings.js';
import { type KitCheck, patchChecks } from '../kit-checks.js';
import { notApplicable, type Rule, type RuleFinding, skip } from '../rule.js';
import { KIT } from './kit-paths.js';
import { capiShapedNames } from './nodes.js';
import { factEvidence, list, skipFact } from './shared.js';

type Ctx = Parameters<Rule['check']>[0];

const DOCS = (id: string) => `docs/rules.md#${id}`;

/** 3.5.26: the oldest 3.5 patch the etcd docs allow before a 3.6 member joins (etcd.md §4). */
export const ETCD_MIN_35_FOR_36 = '3.5.26';
/** 3.5.1–3.5.19 did not persist learner promotion (etcd#19557); 3.5.24 stops re-spreading it (etcd.md §4). */
const LEARNER_BUG_LAST = '3.5.19';

const v = (text: string): Version => parseVersion(text)!;
const minorText = (x: Version) => `${x.major}.${x.minor}`;
const below = (text: string, limit: string) => {
  const a = parseVersion(text);
  return a !== undefined && compareVersions(a, v(limit)) < 0;
};

// ---------------------------------------------------------------------------------------------
// Evidence and subjects for members

export function memberLabel(m: EtcdMemberFact): string {
  return m.name || `(unstarted ${m.id})`;
}

export function memberSubject(m: EtcdMemberFact): Subject {
  return { kind: 'EtcdMember', name: m.name || m.id, ...(m.node ? { node: m.node } : {}) };
}

export function memberEvidence(m: EtcdMemberFact, field: string, obs: Observation = {}): Evidence {
  return {
    kind: 'etcd-member',
    memberId: m.id,
    ...(m.name ? { name: m.name } : {}),
    ...(m.clientURLs[0] ? { endpoint: m.clientURLs[0] } : {}),
    field,
    ...obs,
  };
}

const CLUSTER_SUBJECT: Subject = { kind: 'EtcdCluster', name: 'etcd' };

/** Fact etcd.topology says the members run off the control planes (kubeadm external etcd). */
function isExternal(ctx: Ctx): boolean {
  return ctx.facts.etcd.topology.value?.mode === 'external';
}

/** Where the operator changes the etcd version: kubeadm's static pods, or the external etcd's hosts. */
function etcdUpgradePath(ctx: Ctx): string {
  return isExternal(ctx)
    ? 'the external etcd, one member at a time on its own hosts (etcd.external: it must also move onto the control planes)'
    : "kubeadm's etcd on every control plane (kubeadm upgrade, or the etcd image tag in /etc/kubernetes/manifests/etcd.yaml one node at a time)";
}

/**
 * A version some source reports: each member's own status when the snapshot has it, else the
 * etcd.version fact (image tags of the static pods). The cluster version is reported separately.
 */
interface VersionSighting {
  version: string;
  label: string;
  evidence: Evidence[];
}

function serverVersions(ctx: Ctx): VersionSighting[] {
  const members = ctx.facts.etcd.members.value ?? [];
  const reported = members.filter((m) => m.version !== null);
  if (reported.length > 0) {
    return reported.map((m) => ({
      version: m.version!,
      label: `member ${memberLabel(m)}`,
      evidence: [memberEvidence(m, 'version', { observed: m.version! })],
    }));
  }
  const fact = ctx.facts.etcd.version;
  if (fact.value === undefined) return [];
  return [
    {
      version: fact.value,
      label: 'the etcd static pods',
      evidence: factEvidence(fact, (x) => x),
    },
  ];
}

function clusterVersion(ctx: Ctx): VersionSighting | undefined {
  const fact = ctx.facts.etcd.clusterVersion;
  if (fact.value === undefined) return undefined;
  return {
    version: fact.value,
    label: 'the cluster version (etcdcluster)',
    evidence: factEvidence(fact, (x) => x),
  };
}

function noVersion(ctx: Ctx) {
  return skip(
    ['etcd.version'],
    ctx.facts.etcd.version.missing ??
      'etcd/endpoint-status.json or etcd/version.json, or the etcd static pod manifests (image tag)',
  );
}

// ---------------------------------------------------------------------------------------------
// Versions

export const versionTooOld: Rule = {
  id: 'etcd.version-too-old',
  family: 'etcd',
  severity: 'blocker',
  title: 'etcd older than 3.5',
  inputs: ['etcd'],
  reads: [],
  // Member status is best, but the static pods' image tags also tell the version.
  requires: [],
  description:
    'etcd cannot skip a minor: 3.4 must go to 3.5 before any 3.6 member joins, and every Talos release from v1.11 ships 3.6 or newer.',
  docs: DOCS('etcd.version-too-old'),
  check(ctx) {
    const sightings = serverVersions(ctx);
    const cluster = clusterVersion(ctx);
    if (sightings.length === 0 && !cluster) return noVersion(ctx);
    const out: RuleFinding[] = [];
    const old = sightings.filter((s) => below(s.version, '3.5.0'));
    const why = `etcd upgrades one minor at a time and Talos ${ctx.target.talosVersion} runs etcd ${ctx.target.talos.etcdVersion}.`;
    const remediation = `Upgrade ${etcdUpgradePath(ctx)} to ${ETCD_MIN_35_FOR_36} or newer first, then re-run the audit.`;
    if (old.length > 0)
      out.push({ ...summarize(old, why), remediation, subject: CLUSTER_SUBJECT, field: 'version' });
    if (cluster && below(cluster.version, '3.5.0')) {
      out.push({ ...summarize([cluster], why), remediation, subject: CLUSTER_SUBJECT, field: 'etcdcluster' });
    }
    return out;
  },
};

/** "etcd 3.4.13 runs on member cp-1, member cp-2: <why>" with every sighting's evidence. */
function summarize(sightings: VersionSighting[], why: string): { message: string; evidence: Evidence[] } {
  const versions = [...new Set(sightings.map((s) => s.version))];
  return {
    message: `etcd ${versions.join(' / ')} runs on ${sightings.map((s) => s.label).join(', ')}: ${why}`,
    evidence: sightings.flatMap((s) => s.evidence),
  };
}

export const versionLearnerBug: Rule = {
  id: 'etcd.version-learner-bug',
  family: 'etcd',
  severity: 'blocker',
  title: 'etcd 3.5 patch affected by the learner-promotion bug',
  inputs: ['etcd', 'target'],
  reads: [],
  requires: [],
  description:
    'etcd 3.5.1–3.5.19 did not persist learner promotion; a 3.6 member then fails with "membership: too many learner members" (etcd#19557, #20793). The etcd docs require 3.5.26+ before 3.6.',
  docs: DOCS('etcd.version-learner-bug'),
  check(ctx) {
    const sightings = serverVersions(ctx);
    if (sightings.length === 0) return noVersion(ctx);
    const target = v(ctx.target.talos.etcdVersion);
    const targetIs36 = compareVersions(target, v('3.6.0')) >= 0;
    const affected = sightings.filter((s) => {
      const sv = parseVersion(s.version);
      if (sv?.major !== 3 || sv.minor !== 5) return false;
      return targetIs36
        ? below(s.version, ETCD_MIN_35_FOR_36)
        : sv.patch >= 1 && compareVersions(sv, v(LEARNER_BUG_LAST)) <= 0;
    });
    if (affected.length === 0) return [];
    const why = targetIs36
      ? `older than ${ETCD_MIN_35_FOR_36}, so the Talos ${ctx.target.talosVersion} member (etcd ${ctx.target.talos.etcdVersion}) can fail to join or upgrade with "membership: too many learner members".`
      : `in 3.5.1–${LEARNER_BUG_LAST}: a Talos learner (etcd ${ctx.target.talos.etcdVersion}) snapshotting from it inherits the unpersisted learner promotion.`;
    return [
      {
        ...summarize(affected, why),
        remediation: `Patch ${etcdUpgradePath(ctx)} to ${ETCD_MIN_35_FOR_36}+ before the first Talos control plane (or restart all members as the etcd#19557 workaround), then re-run the audit.`,
        subject: CLUSTER_SUBJECT,
        field: 'version',
      },
    ];
  },
};

export const versionSkew: Rule = {
  id: 'etcd.version-skew',
  family: 'etcd',
  severity: 'blocker',
  title: "Target Talos etcd is more than one minor away from the cluster's",
  inputs: ['etcd', 'target'],
  reads: [],
  requires: [],
  description:
    'etcd upgrades one minor at a time; a learner of a newer minor joining an older cluster is not supported beyond one minor, and Talos v1.14 runs flags that need etcd 3.6 or newer.',
  docs: DOCS('etcd.version-skew'),
  artifacts: [KIT.controlPlanePatch],
  check(ctx) {
    const sightings = serverVersions(ctx);
    const cluster = clusterVersion(ctx);
    const all = [...sightings, ...(cluster ? [cluster] : [])];
    if (all.length === 0) return noVersion(ctx);
    const target = v(ctx.target.talos.etcdVersion);
    const parsed = all
      .map((s) => ({ s, ver: parseVersion(s.version) }))
      .filter((x): x is { s: VersionSighting; ver: Version } => x.ver !== undefined);
    if (parsed.length === 0) return [];
    const lowest = parsed.reduce((a, b) => (compareVersions(b.ver, a.ver) < 0 ? b : a));
    const highest = parsed.reduce((a, b) => (compareVersions(b.ver, a.ver) > 0 ? b : a));
    const out: RuleFinding[] = [];
    const targetEvidence: Evidence = {
      kind: 'target',
      field: 'talos.etcdVersion',
      observed: ctx.target.talos.etcdVersion,
      note: `Talos ${ctx.target.talosVersion}`,
    };
    const evidence = [...parsed.flatMap((x) => x.s.evidence), targetEvidence];
    // A pin names a server version; etcdcluster is only the protocol version ("3.5.0").
    const servers = parsed.filter((x) => x.s !== cluster);
    const pinFrom = (servers.length ? servers : parsed).reduce((a, b) =>
      compareVersions(b.ver, a.ver) < 0 ? b : a,
    );
    if (target.major === lowest.ver.major && target.minor > lowest.ver.minor + 1) {
      out.push({
        message: `Talos ${ctx.target.talosVersion} runs etcd ${ctx.target.talos.etcdVersion}, ${target.minor - lowest.ver.minor} minors ahead of ${lowest.s.label} (${lowest.s.version}); etcd members may differ by one minor at most.`,
        evidence,
        remediation: skewRemediation(ctx.target, pinFrom.s.version),
        subject: CLUSTER_SUBJECT,
        field: 'minor-skew',
      });
    }
    if (target.major === highest.ver.major && target.minor < highest.ver.minor) {
      out.push({
        message: `Talos ${ctx.target.talosVersion} runs etcd ${ctx.target.talos.etcdVersion}, older than ${highest.s.label} (${highest.s.version}): an etcd cluster cannot be downgraded by joining older members.`,
        evidence,
        remediation: `Choose a Talos release whose etcd is ${minorText(highest.ver)} or ${minorText({ ...highest.ver, minor: highest.ver.minor + 1 })} (${list(releasesWithEtcdMinors([minorText(highest.ver), minorText({ ...highest.ver, minor: highest.ver.minor + 1 })]))}).`,
        subject: CLUSTER_SUBJECT,
        field: 'downgrade',
      });
    }
    return out;
  },
};

function skewRemediation(target: Target, clusterVersion: string): string {
  const need = minEtcdMinorFor(target.talos);
  const cv = parseVersion(clusterVersion)!;
  const within = releasesWithEtcdMinors([minorText(cv), minorText({ ...cv, minor: cv.minor + 1 })]);
  const choose = within.length ? ` or target a Talos release within one etcd minor (${list(within)})` : '';
  const oneWay =
    ' Removing the last kubeadm member is a one-way door (the cluster version moves up): take an etcd snapshot right before it.';
  if (need && compareVersions(cv, v(`${need}.0`)) < 0) {
    return `Talos ${target.talosVersion} needs etcd ${need}+ (its flags are 3.6-only), so pinning a ${minorText(cv)} image does not work: upgrade kubeadm's etcd to ${need} first (via ${ETCD_MIN_35_FOR_36}+)${choose}.${oneWay}`;
  }
  return `Pin cluster.etcd.image to ${pinnedEtcdImage(target.talos, clusterVersion)} on the Talos control planes until every kubeadm member is gone, or upgrade kubeadm's etcd one minor first${choose}.${oneWay}`;
}

/** Talos lines (e.g. "v1.13") whose etcd is one of the given minors ("3.6"). */
function releasesWithEtcdMinors(minors: string[]): string[] {
  const out: string[] = [];
  for (const r of TALOS_RELEASES) {
    const ev = parseVersion(r.etcdVersion);
    if (ev && minors.includes(minorText(ev)) && !out.includes(`v${r.minor}`)) out.push(`v${r.minor}`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Health and membership

export const unhealthy: Rule = {
  id: 'etcd.unhealthy',
  family: 'etcd',
  severity: 'blocker',
  title: 'etcd member unhealthy, unstarted, learner or without a node',
  inputs: ['etcd'],
  reads: [],
  description:
    'Learner-first swaps assume every member is started and healthy with one leader; unstarted or stale members and leftover learners block joins (cluster-api#5509, kubernetes/kubeadm#1432).',
  docs: DOCS('etcd.unhealthy'),
  check(ctx) {
    const membersFact = ctx.facts.etcd.members;
    if (membersFact.value === undefined) return skipFact(membersFact);
    const members = membersFact.value;
    const status = ctx.snapshot.etcd?.endpoints ?? [];
    const haveStatus = status.length > 0;
    const statusIds = new Set(status.map((s) => s.memberId).filter(Boolean));
    // External members run on the etcd hosts: no Node is expected for them (etcd.external says what that means).
    const expectNodes = ctx.snapshot.resources.nodes.length > 0 && !isExternal(ctx);
    const out: RuleFinding[] = [];
    // docs/knowledge/etcd.md §2: remove-first for a failed member.
    const repair =
      'Repair or remove the member before migrating (a failed member is removed first, then replaced); ferry refuses to add a Talos member to an unhealthy cluster.';

    for (const m of members) {
      const name = memberLabel(m);
      if (!m.name || m.clientURLs.length === 0) {
        out.push({
          message: `etcd member ${m.id} was added but never started (empty name or no client URLs): it counts towards quorum while doing no work.`,
          evidence: [memberEvidence(m, 'name', { observed: m.name || '(empty)' })],
          remediation: `Start the member or remove it (etcdctl member remove ${memberIdHex(m.id)}). ${repair}`,
          subject: memberSubject(m),
          field: 'started',
        });
      }
      if (m.isLearner) {
        out.push({
          message: `etcd member ${name} is a learner: a leftover from an interrupted join. etcd allows one learner, which a joining Talos control plane needs.`,
          evidence: [memberEvidence(m, 'isLearner', { observed: 'true' })],
          remediation: `Promote it if it is in sync (etcdctl member promote ${memberIdHex(m.id)}) or remove it (etcdctl member remove ${memberIdHex(m.id)}).`,
          subject: memberSubject(m),
          field: 'isLearner',
        });
      }
      if (m.errors.length > 0) {
        out.push({
          message: `etcd member ${name} reports errors: ${m.errors.join('; ')}.`,
          evidence: [memberEvidence(m, 'errors', { observed: m.errors.join('; ') })],
          remediation: repair,
          subject: memberSubject(m),
          field: 'errors',
        });
      }
      if (haveStatus && m.name && m.clientURLs.length > 0 && !statusIds.has(m.id)) {
        out.push({
          severity: 'risk',
          message: `etcd member ${name} did not report its status: it was unreachable, or endpoint status ran without --cluster.`,
          evidence: [
            memberEvidence(m, 'status', {
              observed: 'no status',
              note: `${status.length} endpoint(s) reported`,
            }),
          ],
          remediation: `Re-collect with etcdctl endpoint status --cluster -w json (or ferry snapshot --etcd-endpoints); if the member is down, ${repair}`,
          subject: memberSubject(m),
          field: 'status',
        });
      }
      if (expectNodes && m.name && m.node === null) {
        out.push({
          message: `etcd member ${name} matches no Node by name or address: a stale member of a removed control plane, or a node renamed after kubeadm join.`,
          evidence: [memberEvidence(m, 'name', { observed: m.name, note: `peer URLs ${list(m.peerURLs)}` })],
          remediation: `If the machine is gone, remove the member (etcdctl member remove ${memberIdHex(m.id)}); otherwise tell ferry which node it runs on by fixing the Node name.`,
          subject: memberSubject(m),
          field: 'node',
        });
      }
    }

    for (const a of ctx.facts.etcd.alarms.value ?? []) {
      const m = members.find((x) => x.id === a.memberId);
      out.push({
        message: `etcd alarm ${a.alarm} is active on member ${m ? memberLabel(m) : a.memberId}: etcd refuses writes (NOSPACE) or distrusts its data (CORRUPT).`,
        evidence: m
          ? [memberEvidence(m, 'alarm', { observed: a.alarm })]
          : factEvidence(ctx.facts.etcd.alarms, () => a.alarm),
        remediation:
          a.alarm === 'NOSPACE'
            ? 'Compact and defragment, raise --quota-backend-bytes if needed, then etcdctl alarm disarm.'
            : 'Restore the corrupt member from a healthy peer (remove it and re-add it with an empty data dir), then etcdctl alarm disarm.',
        subject: m ? memberSubject(m) : { kind: 'EtcdMember', name: a.memberId },
        field: `alarm.${a.alarm}`,
      });
    }

    const leader = ctx.facts.etcd.leader;
    if (haveStatus) {
      if (leader.conflict) {
        out.push({
          message: `etcd members name different leaders (${[...new Set(leader.conflict.candidates.map((c) => c.value))].join(' vs ')}): an election during collection, or a partition.`,
          evidence: factEvidence(leader, (x) => x ?? 'none'),
          remediation:
            'Re-collect the endpoint status; if members still disagree, repair the network between them first.',
          subject: CLUSTER_SUBJECT,
          field: 'leader',
        });
      } else if (!leader.value || leader.value === '0' || !members.some((m) => m.id === leader.value)) {
        out.push({
          message: `etcd has no leader among its members (reported leader: ${leader.value ?? 'none'}): the cluster cannot accept writes.`,
          evidence: factEvidence(leader, (x) => x ?? 'none'),
          // docs/knowledge/etcd.md §1–2
          remediation: 'Restore quorum before anything else.',
          subject: CLUSTER_SUBJECT,
          field: 'leader',
        });
      }
    }

    // Without endpoint status the member list alone cannot show health: say so instead of passing.
    if (!haveStatus && out.length === 0) {
      return skip(
        ['etcd endpoint status'],
        'add etcd/endpoint-status.json (etcdctl endpoint status --cluster -w json) so ferry can see leader, errors and per-member health',
      );
    }
    return out;
  },
};

export const memberCount: Rule = {
  id: 'etcd.member-count',
  family: 'etcd',
  severity: 'risk',
  title: 'etcd voting member count is 1, 2 or even',
  inputs: ['etcd'],
  reads: [],
  description:
    'Two voters: removing either is unsafe. One voter: adding a voter stalls the cluster until it connects. Even counts tolerate no more failures than the odd count below.',
  docs: DOCS('etcd.member-count'),
  check(ctx) {
    // The count matters for the swaps ferry runs; it swaps no member of an external etcd.
    if (isExternal(ctx))
      return notApplicable('etcd is external (see etcd.external): ferry swaps none of its members');
    const fact = ctx.facts.etcd.members;
    if (fact.value === undefined) return skipFact(fact);
    const voters = fact.value.filter((m) => !m.isLearner);
    const n = voters.length;
    if (n === 0 || (n >= 3 && n % 2 === 1)) return [];
    const names = list(voters.map(memberLabel));
    const evidence = factEvidence(fact, () => `${n} voter(s): ${names}`);
    if (n === 2) {
      return [
        {
          severity: 'blocker',
          message: `etcd has 2 voting members (${names}): quorum is 2, so losing or removing either stops the cluster; ferry will not swap members automatically.`,
          evidence,
          remediation:
            'Add a third member first (learner, then promote) so the cluster tolerates one failure, then re-run the audit.',
          subject: CLUSTER_SUBJECT,
          field: 'voters',
        },
      ];
    }
    return [
      {
        message:
          n === 1
            ? `etcd has a single voting member (${names}): it tolerates no failure, and adding a voter directly stalls it until the new member connects.`
            : `etcd has ${n} voting members (${names}): an even count tolerates no more failures than ${n - 1}.`,
        evidence,
        remediation:
          n === 1
            ? 'ferry adds Talos members learner-first (never a voter directly); take an etcd snapshot before the first join.'
            : 'Plan the swaps learner-first so the count never drops below the current quorum; consider ending on an odd count.',
        subject: CLUSTER_SUBJECT,
        field: 'voters',
      },
    ];
  },
};

/** Planned Talos hostnames that equal a current etcd member or Node name (case-insensitive). */
export function nameCollisions(
  planned: readonly string[],
  memberNames: readonly string[],
  nodeNames: readonly string[],
): { hostname: string; member?: string; node?: string }[] {
  const members = new Map(memberNames.filter(Boolean).map((n) => [n.toLowerCase(), n]));
  const nodes = new Map(nodeNames.map((n) => [n.toLowerCase(), n]));
  const out: { hostname: string; member?: string; node?: string }[] = [];
  for (const h of planned) {
    const k = h.toLowerCase();
    const member = members.get(k);
    const node = nodes.get(k);
    if (member || node) out.push({ hostname: h, ...(member ? { member } : {}), ...(node ? { node } : {}) });
  }
  return out;
}

export const memberNameCollision: Rule = {
  id: 'etcd.member-name-collision',
  family: 'etcd',
  severity: 'blocker',
  title: 'Planned Talos hostname equals an etcd member or Node name',
  inputs: ['etcd', 'api', 'target'],
  reads: ['nodes'],
  requires: ['etcd'],
  description:
    'A joining Talos control plane removes any etcd member whose name equals its hostname before adding itself; kubeadm names members after node hostnames, so reusing one removes a live member.',
  docs: DOCS('etcd.member-name-collision'),
  check(ctx) {
    // A Talos control plane looks for etcd on the apiserver addresses (talos.md §4.8, §10.8): it never
    // reaches an external member, so it removes none by name. Node names: nodes.name-reuse.
    if (isExternal(ctx))
      return notApplicable(
        'etcd is external (see etcd.external): a joining Talos control plane reaches none of its members',
      );
    const fact = ctx.facts.etcd.members;
    if (fact.value === undefined) return skipFact(fact);
    const members = fact.value.filter((m) => m.name);
    if (ctx.target.provisioner === 'capi') {
      // Talos control planes are named after their infrastructure machines: "<template>-xxxxx".
      const cluster = ctx.facts.cluster.name;
      if (cluster.value === undefined) return skipFact(cluster);
      const shaped = capiShapedNames(
        cluster.value,
        members.map((m) => m.name),
      ).filter((c) => c.role === 'control plane');
      return shaped.map((c) => {
        const m = members.find((x) => x.name === c.name)!;
        return {
          severity: 'risk' as const,
          message: `etcd member ${c.name} has the shape of the names Cluster API gives Talos control planes (${c.prefix}xxxxx, hostname.source InfrastructureName): a control plane generated with that name would remove this live member when it joins.`,
          evidence: [memberEvidence(m, 'name', { observed: m.name })],
          remediation: `Rename the control-plane template in the generated ${KIT.capi} manifests (e.g. a "-talos" suffix) so that no generated name can equal a kubeadm member, or remove member ${c.name} (with its node) before Cluster API scales the control plane.`,
          subject: { kind: 'EtcdMember', name: m.name },
          field: 'name',
          artifacts: [KIT.capiCluster],
        };
      });
    }
    const cps = ctx.facts.nodes.controlPlane;
    if (cps.value === undefined) return skipFact(cps);
    // The names `ferry generate` gives the Talos control planes (same planner, same inputs).
    const reserved = reservedNames(ctx.facts);
    const planned = planControlPlaneHostnames(cps.value, new Set(reserved.names.keys()));
    const byHostname = new Map(planned.map((p) => [p.hostname, p]));
    const nodeNames = [...ctx.index.nodesByName.keys()];
    return nameCollisions(
      planned.map((p) => p.hostname),
      members.map((m) => m.name),
      nodeNames,
    ).map((c): RuleFinding => {
      const p = byHostname.get(c.hostname)!;
      const clash = c.member ?? c.node!;
      const member = c.member ? members.find((m) => m.name === c.member) : undefined;
      return {
        message: `The Talos control plane replacing ${p.replaces} is planned as ${c.hostname}, the name of live ${c.member ? 'etcd member' : 'Node'} ${clash}: joining, it would remove the etcd member of that name${c.node ? ' and take over the Node' : ''}.`,
        evidence: [
          member
            ? memberEvidence(member, 'name', { observed: member.name })
            : { kind: 'node', node: clash, field: 'metadata.name', observed: clash },
          { kind: 'target', field: 'hostnames', observed: `${p.replaces} → ${c.hostname}` },
        ],
        remediation: `Give the replacement of ${p.replaces} a hostname that is no live member or Node name (HostnameConfig.hostname; machine.network.hostname before v1.12).`,
        subject: { kind: 'EtcdMember', name: clash },
        field: 'name',
        artifacts: [KIT.nodePatch(c.hostname)],
      };
    });
  },
};

// ---------------------------------------------------------------------------------------------
// Topology and flags

export const external: Rule = {
  id: 'etcd.external',
  family: 'etcd',
  severity: 'blocker',
  title: 'External etcd',
  inputs: ['kubeadm', 'flags'],
  reads: [],
  // Either input tells the topology; the fact says what is missing.
  requires: [],
  description:
    'A Talos control plane runs its own etcd member and its kube-apiserver uses only that member; it looks for the etcd to join on the apiserver addresses at port 2379. An etcd on other hosts can neither be used nor joined: it must move onto the control planes first.',
  docs: DOCS('etcd.external'),
  check(ctx) {
    const fact = ctx.facts.etcd.topology;
    if (fact.value === undefined) return skipFact(fact);
    if (fact.value.mode !== 'external') return [];
    const members = ctx.facts.etcd.members.value;
    const off = members?.filter((m) => m.node === null) ?? [];
    const seen =
      members === undefined
        ? 'ferry has not seen its members (no etcd/ part)'
        : `${off.length} of its ${members.length} member(s) run on no Node of the cluster${off.length ? ` (${list(off.map((m) => `${memberLabel(m)} ${m.clientURLs[0] ?? m.peerURLs[0] ?? ''}`.trim()))})` : ''}`;
    return [
      {
        // talos.md §4.1 (--etcd-servers local only; etcd-servers, etcd-cafile/certfile/keyfile denied in
        // extraArgs), §4.8 and §10.8 (join endpoints: apiserver IPs and the endpoint DNS, port 2379);
        // schemas/talos/*/config.schema.json v1alpha1.EtcdConfig has no endpoint setting in any release.
        message: `The apiservers use an external etcd (${list(fact.value.servers)}); ${seen}. A Talos control plane runs its own etcd member, and its kube-apiserver talks only to it (https://127.0.0.1:2379; Talos rejects etcd-servers and etcd-cafile/-certfile/-keyfile in cluster.apiServer.extraArgs, and cluster.etcd has no endpoint setting), while the member looks for the cluster to join on the apiserver addresses at port 2379, where this cluster runs no etcd. Talos can neither keep using this etcd nor join it, so no control-plane swap can start.`,
        evidence: factEvidence(fact, (t) => `${t.mode}: ${list(t.servers)}`, {
          expected: 'stacked: https://127.0.0.1:2379',
        }),
        remediation:
          "Move etcd onto the kubeadm control planes before migrating (ferry does not automate it): one control plane at a time, add a member there to the external cluster as a learner, promote it once in sync, and point that node's kube-apiserver at https://127.0.0.1:2379 (kubeadm-config etcd.local); when every control plane runs a member, remove the external members one at a time (one membership change at a time, learner first; docs/rules.md#etcd.external). Copy the etcd CA (ca.crt and ca.key) to /etc/kubernetes/pki/etcd/ so that Talos can import it (pki.etcd-ca-missing). Then take a new snapshot and re-run the audit.",
        subject: { kind: 'Fact', name: fact.key },
        field: 'mode',
      },
    ];
  },
};

const truthy = (value: string) => value === '' || value.toLowerCase() === 'true';

export const v2Enabled: Rule = {
  id: 'etcd.v2-enabled',
  family: 'etcd',
  severity: 'risk',
  title: 'etcd v2 API enabled',
  inputs: ['flags'],
  reads: [],
  description:
    'etcd 3.6 removes --enable-v2 and --experimental-enable-v2v3; custom v2 data must be migrated or purged before any 3.6 member (every Talos release from v1.11).',
  docs: DOCS('etcd.v2-enabled'),
  check(ctx) {
    const instances = ctx.facts.etcd.instances.value ?? [];
    if (isExternal(ctx) && instances.length === 0)
      return notApplicable(
        'etcd is external (see etcd.external): its flags are on the etcd hosts; the audit checks them once etcd runs on the control planes',
      );
    const hits: { flag: Flag; ev: Evidence }[] = [];
    for (const inst of instances) {
      for (const f of inst.flags) {
        if (!isV2Flag(f)) continue;
        hits.push({ flag: f, ev: instanceFlagEvidence(inst, f) });
      }
    }
    // Without manifests, kubeadm-config's declared extraArgs are the only evidence.
    if (instances.length === 0) {
      const extra = ctx.facts.etcd.extraArgs;
      if (extra.value === undefined) return skipFact(ctx.facts.etcd.instances);
      for (const f of extra.value.filter(isV2Flag))
        hits.push({ flag: f, ev: factEvidence(extra, () => `--${f.name}=${f.value}`)[0]! });
    }
    if (hits.length === 0) return [];
    const flags = [...new Set(hits.map((h) => `--${h.flag.name}=${h.flag.value}`))];
    return [
      {
        message: `etcd runs with ${flags.join(', ')}: removed in etcd 3.6 (Talos ${ctx.target.talosVersion} runs ${ctx.target.talos.etcdVersion}); v2 data other than membership is lost.`,
        evidence: hits.map((h) => h.ev),
        remediation:
          'Run etcdutl check v2store on a member; migrate or purge custom v2 data (a temporary --snapshot-count=1 restart), then drop the flags from the kubeadm etcd manifests before any 3.6 member joins.',
        subject: { kind: 'Component', name: 'etcd' },
        field: 'v2',
      },
    ];
  },
};

function isV2Flag(f: Flag): boolean {
  if (f.name === 'enable-v2') return truthy(f.value);
  return f.name === 'experimental-enable-v2v3' && f.value.trim() !== '';
}

function instanceFlagEvidence(inst: EtcdInstance, f: Flag): Evidence {
  return {
    kind: 'flag',
    component: 'etcd',
    flag: f.name,
    from: inst.source,
    ...(inst.node ? { node: inst.node } : {}),
    observed: f.value,
  };
}

/** Flags whose values must match across members: they steer elections. */
const TIMING_FLAGS = new Set(['heartbeat-interval', 'election-timeout']);

/**
 * Operator-chosen etcd flags: the etcd.extraArgs fact (flags kubeadm does not write, a
 * non-loopback --listen-metrics-urls among them) plus what it cannot show: every flag kubeadm-config
 * declares in etcd.local.extraArgs.
 */
export interface OperatorFlag {
  values: Set<string>;
  evidence: Evidence[];
  /** How many running etcd instances carry it. */
  onInstances: number;
}

export function operatorEtcdFlags(ctx: Ctx): Map<string, OperatorFlag> {
  const byName = new Map<string, OperatorFlag>();
  const add = (f: Flag, ev: Evidence, instance: boolean) => {
    const e = byName.get(f.name) ?? { values: new Set<string>(), evidence: [], onInstances: 0 };
    e.values.add(f.value);
    e.evidence.push(ev);
    if (instance) e.onInstances++;
    byName.set(f.name, e);
  };
  const extra = ctx.facts.etcd.extraArgs.value ?? [];
  const extraNames = new Set(extra.map((f) => f.name));
  const instances = ctx.facts.etcd.instances.value ?? [];
  for (const inst of instances) {
    for (const f of inst.flags) {
      if (extraNames.has(f.name)) add(f, instanceFlagEvidence(inst, f), true);
    }
  }
  const cc = ctx.snapshot.kubeadm.clusterConfiguration;
  for (const f of cc?.etcd.local?.extraArgs ?? []) {
    const ref = atField(cc!.source, `etcd.local.extraArgs[${f.name}]`);
    add(f, evidenceFromSource(ref, { observed: f.value, note: 'declared in kubeadm-config' }), false);
  }
  if (instances.length === 0) {
    for (const f of extra)
      if (!byName.has(f.name)) add(f, factEvidence(ctx.facts.etcd.extraArgs, () => f.value)[0]!, false);
  }
  return byName;
}

export const extraArgs: Rule = {
  id: 'etcd.extra-args',
  family: 'etcd',
  severity: 'risk',
  title: 'etcd flags Talos would not carry over',
  inputs: ['flags'],
  reads: [],
  // The running manifests or kubeadm-config's etcd.local.extraArgs: either tells the flags.
  requires: [],
  description:
    'Talos etcd runs its own defaults unless flags are carried in cluster.etcd.extraArgs; name, data-dir, listen and certificate flags are deny-listed; timing flags that differ across members change election behaviour.',
  docs: DOCS('etcd.extra-args'),
  artifacts: [KIT.controlPlanePatch],
  check(ctx) {
    if (isExternal(ctx)) return notApplicable('etcd is external (see etcd.external)');
    const instances = ctx.facts.etcd.instances.value ?? [];
    const cc = ctx.snapshot.kubeadm.clusterConfiguration;
    if (instances.length === 0 && !cc?.etcd.local) return skipFact(ctx.facts.etcd.extraArgs);
    const denied = new Set<string>(ETCD_DENIED_ARGS);
    // What ferry generate carries: the etcd.extraArgs fact, host paths left out (generate/talos/args.ts).
    const generated = new Set((ctx.facts.etcd.extraArgs.value ?? []).map((f) => f.name));
    const out: RuleFinding[] = [];
    for (const [name, { values, evidence, onInstances }] of operatorEtcdFlags(ctx)) {
      const shown = [...values].map((x) => `--${name}=${x}`).join(' / ');
      const value = [...values][0] ?? '';
      const byKit =
        generated.has(name) && ![...values].some((v) => v.startsWith('/'))
          ? 'ferry generate writes it from the kubeadm manifests'
          : `ferry generate does not carry it: add it to the kit's ${KIT.controlPlanePatch}`;
      let message = `etcd runs with ${shown}, which kubeadm does not set by default; Talos etcd uses its own value unless it is carried over.`;
      let remediation = `Carry it in cluster.etcd.extraArgs (${name}: "${value}"); ${byKit}.`;
      if (denied.has(name)) {
        message = `etcd runs with ${shown}; Talos sets --${name} itself and rejects it in cluster.etcd.extraArgs.`;
        remediation = `Drop it: Talos manages --${name}. If the value matters (e.g. a data path), plan the Talos side without it.`;
      } else if (name === 'listen-metrics-urls') {
        remediation = `Carry it in cluster.etcd.extraArgs (listen-metrics-urls: "${value}"; ${byKit}) and point metrics scrapers at the Talos nodes too; Talos v1.14 also serves health/metrics on 2383 (--listen-client-http-urls).`;
      }
      // Carried means in the patch with the value of every member (one value: members that differ stay open).
      const kitChecks: KitCheck[] =
        denied.has(name) || values.size !== 1
          ? []
          : patchChecks(
              [KIT.controlPlanePatch],
              { path: ['cluster', 'etcd', 'extraArgs', name] },
              { op: 'equals', value },
            );
      if (TIMING_FLAGS.has(name) && (values.size > 1 || onInstances < instances.length)) {
        message += ' Members disagree on it, which changes election behaviour during the swap.';
      }
      out.push({
        message,
        evidence,
        remediation,
        subject: { kind: 'Component', name: 'etcd' },
        field: `--${name}`,
        ...(kitChecks.length ? { kitChecks } : {}),
      });
    }
    return out;
  },
};

/** etcd's default backend quota (2 GiB) when --quota-backend-bytes is not set. */
const DEFAULT_QUOTA = 2 * 1024 * 1024 * 1024;
const mib = (n: number) => `${(n / (1024 * 1024)).toFixed(0)} MiB`;

export const dbSize: Rule = {
  id: 'etcd.db-size',
  family: 'etcd',
  severity: 'info',
  title: 'etcd database size',
  inputs: ['etcd'],
  reads: [],
  description:
    'A joining learner receives a snapshot of the whole database; its size decides how long catch-up and promotion take.',
  docs: DOCS('etcd.db-size'),
  check(ctx) {
    const fact = ctx.facts.etcd.members;
    if (fact.value === undefined) return skipFact(fact);
    const sized = fact.value.filter((m) => m.dbSize !== null);
    if (sized.length === 0)
      return skip(
        ['etcd endpoint status'],
        'add etcd/endpoint-status.json (etcdctl endpoint status --cluster -w json)',
      );
    const largest = sized.reduce((a, b) => (b.dbSize! > a.dbSize! ? b : a));
    const quotaFlag = (ctx.facts.etcd.instances.value ?? [])
      .map((i) => lastFlag(i.flags, 'quota-backend-bytes'))
      .find((q) => q !== undefined);
    const quota = quotaFlag !== undefined && Number(quotaFlag) > 0 ? Number(quotaFlag) : DEFAULT_QUOTA;
    const pct = Math.round((largest.dbSize! / quota) * 100);
    const inUse = largest.dbSizeInUse !== null ? `, ${mib(largest.dbSizeInUse)} in use` : '';
    return [
      {
        message: `The etcd database is up to ${mib(largest.dbSize!)} (member ${memberLabel(largest)}${inUse}; ${pct}% of the ${mib(quota)} quota${quotaFlag !== undefined ? '' : isExternal(ctx) ? ', etcd default assumed: the external members’ flags are not in the snapshot' : ', etcd default'}). ${isExternal(ctx) ? 'Each member that moves etcd onto the control planes (etcd.external), and then each Talos learner,' : 'Each Talos learner'} receives it as a snapshot before it can be promoted.`,
        evidence: sized.map((m) =>
          memberEvidence(m, 'dbSize', {
            observed: `${mib(m.dbSize!)}${m.dbSizeInUse !== null ? ` (${mib(m.dbSizeInUse)} in use)` : ''}`,
          }),
        ),
        remediation:
          pct >= 80
            ? 'Compact and defragment before migrating (the database is close to its quota), and give learner promotion a generous timeout.'
            : 'No action needed; defragmenting before the migration shortens snapshot transfer when much of the database is not in use.',
        subject: CLUSTER_SUBJECT,
        field: 'dbSize',
      },
    ];
  },
};

export const ETCD_RULES: Rule[] = [
  versionTooOld,
  versionLearnerBug,
  versionSkew,
  unhealthy,
  memberCount,
  memberNameCollision,
  external,
  v2Enabled,
  extraArgs,
  dbSize,
];
