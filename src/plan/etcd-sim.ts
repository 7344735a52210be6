/**
 * The etcd membership as the plan expects it, step by step. build.ts walks the swaps through this
 * model so every step's expectation counts members correctly (3 voters → 3 + 1 learner → 4 voters →
 * 3 …) instead of each step guessing. Pure and tiny: a list of members and their state.
 */
import type {
  Count,
  EtcdExpectation,
  EtcdHealth,
  MemberExpectation,
  MemberRef,
  MemberState,
} from './expected-state.js';

interface Tracked {
  ref: MemberRef;
  state: MemberState;
}

function sameMember(a: MemberRef, b: MemberRef): boolean {
  if (a.kind === 'kubeadm' && b.kind === 'kubeadm') return a.id === b.id;
  if (a.kind === 'talos' && b.kind === 'talos') return a.replaces === b.replaces;
  return false;
}

function count(min: number, max: number): Count {
  return min === max ? min : { min, max };
}

export class EtcdModel {
  private readonly members: Tracked[];

  /** `voters`: started voting members at snapshot time (learners are expected gone before the run). */
  constructor(voters: MemberRef[]) {
    this.members = voters.map((ref) => ({ ref, state: 'voter' as const }));
  }

  private find(ref: MemberRef): Tracked | undefined {
    return this.members.find((m) => sameMember(m.ref, ref));
  }

  private set(ref: MemberRef, state: MemberState): void {
    const m = this.find(ref);
    if (m) m.state = state;
    else this.members.push({ ref, state });
  }

  /** The provisioner booted the Talos node: Talos is adding its member (absent, learner or voter). */
  provisioned(ref: MemberRef): void {
    this.set(ref, 'joining');
  }

  /** The member is in the list, as a learner or already promoted. */
  joined(ref: MemberRef): void {
    this.set(ref, 'learner-or-voter');
  }

  promoted(ref: MemberRef): void {
    this.set(ref, 'voter');
  }

  removed(ref: MemberRef): void {
    this.set(ref, 'absent');
  }

  state(ref: MemberRef): MemberState | undefined {
    return this.find(ref)?.state;
  }

  /** Current voters, in order of appearance (kubeadm members first, then Talos ones as they join). */
  voters(): MemberRef[] {
    return this.members.filter((m) => m.state === 'voter').map((m) => m.ref);
  }

  /** Exact voter count once no member is in transition. */
  voterCount(): number {
    return this.voters().length;
  }

  expectation(
    healthy: EtcdHealth,
    extra: Pick<EtcdExpectation, 'leader' | 'caughtUp'> = {},
  ): EtcdExpectation {
    const n = (s: MemberState) => this.members.filter((m) => m.state === s).length;
    const voters = n('voter');
    const joined = n('learner-or-voter');
    const joining = n('joining');
    const members: MemberExpectation[] = this.members.map((m) => ({ member: m.ref, state: m.state }));
    return {
      voters: count(voters, voters + joined + joining),
      learners: count(0, joined + joining),
      total: count(voters + joined, voters + joined + joining),
      healthy,
      members,
      ...extra,
    };
  }
}
