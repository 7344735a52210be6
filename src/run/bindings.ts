/**
 * What the plan could not know and the run learns: the name and address a provisioner gave a
 * Talos replacement, and the etcd member id Talos got. Journalled as `binding` observations so a
 * resumed run refers to the same machine and member.
 */
import type { MemberRef, NodeRef } from '../plan/expected-state.js';
import type { Step } from '../plan/model.js';
import type { EtcdMemberInfo } from '../ports/run.js';

export interface NodeBinding {
  replaces: string;
  name?: string;
  address?: string | null;
  memberId?: string;
}

export class Bindings {
  readonly #byReplaces = new Map<string, NodeBinding>();

  static from(records: NodeBinding[]): Bindings {
    const b = new Bindings();
    for (const r of records) b.merge(r);
    return b;
  }

  /** Merges and returns true when something new was learned. */
  merge(r: NodeBinding): boolean {
    const cur = this.#byReplaces.get(r.replaces) ?? { replaces: r.replaces };
    const next: NodeBinding = { ...cur };
    if (r.name !== undefined) next.name = r.name;
    if (r.address !== undefined) next.address = r.address;
    if (r.memberId !== undefined) next.memberId = r.memberId;
    const changed = JSON.stringify(next) !== JSON.stringify(cur) || !this.#byReplaces.has(r.replaces);
    this.#byReplaces.set(r.replaces, next);
    return changed;
  }

  get(replaces: string): NodeBinding | undefined {
    return this.#byReplaces.get(replaces);
  }

  all(): NodeBinding[] {
    return [...this.#byReplaces.values()];
  }

  /** The Node name a reference stands for now, or undefined while unknown. */
  nodeName(ref: NodeRef): string | undefined {
    if (ref.kind === 'kubeadm') return ref.name;
    return this.#byReplaces.get(ref.replaces)?.name ?? ref.name ?? undefined;
  }

  nodeAddress(ref: NodeRef): string | null {
    if (ref.kind === 'kubeadm') return ref.address;
    const b = this.#byReplaces.get(ref.replaces);
    return b?.address ?? ref.address ?? null;
  }

  memberName(ref: MemberRef): string | undefined {
    if (ref.kind === 'kubeadm') return ref.name;
    return this.#byReplaces.get(ref.replaces)?.name ?? ref.name ?? undefined;
  }
}

export type MemberResolution =
  | { found: true; member: EtcdMemberInfo; how: 'id' | 'name' | 'binding' | 'peer-address' | 'only-unnamed' }
  | { found: false; note?: string };

function peerHost(url: string): string | undefined {
  return /^https?:\/\/\[?([^\]/]+?)\]?:\d+/.exec(url)?.[1];
}

/**
 * Finds the member a reference means in a member list. kubeadm members by their exact id (a member
 * of that name with another id is *not* it: the note says so). Talos members by their bound id, by
 * name, by the peer address of their machine, or, before the member started (etcd lists it without
 * a name), as the only unnamed member that is no kubeadm member of the plan.
 */
export function resolveMember(
  ref: MemberRef,
  members: EtcdMemberInfo[],
  bindings: Bindings,
  kubeadmIds: ReadonlySet<string>,
): MemberResolution {
  if (ref.kind === 'kubeadm') {
    const m = members.find((x) => x.id === ref.id);
    if (m) return { found: true, member: m, how: 'id' };
    const sameName = members.find((x) => x.name === ref.name);
    return sameName
      ? {
          found: false,
          note: `a member named ${ref.name} exists with id ${sameName.id}, not ${ref.id} as planned: it is another member (re-added?), not the one the plan means`,
        }
      : { found: false };
  }
  const b = bindings.get(ref.replaces);
  if (b?.memberId) {
    const m = members.find((x) => x.id === b.memberId);
    return m ? { found: true, member: m, how: 'binding' } : { found: false };
  }
  const name = bindings.memberName(ref);
  if (name) {
    const m = members.find((x) => x.name === name);
    if (m) return { found: true, member: m, how: 'name' };
  }
  const unnamed = members.filter((x) => x.name === '' && !kubeadmIds.has(x.id));
  const address = b?.address ?? null;
  if (address) {
    const m = unnamed.find((x) => x.peerURLs.some((u) => peerHost(u) === address));
    if (m) return { found: true, member: m, how: 'peer-address' };
  }
  // Only while exactly one Talos member is joining is an unnamed one unambiguous.
  const namedTalos = members.filter((x) => x.name !== '' && !kubeadmIds.has(x.id));
  if (unnamed.length === 1 && !namedTalos.some((x) => x.name === name)) {
    return { found: true, member: unnamed[0]!, how: 'only-unnamed' };
  }
  return { found: false };
}

/**
 * The Talos members of `steps` found by name in a member list whose id is not bound yet: bound,
 * later looks find them by id.
 */
export function talosMemberIds(
  steps: readonly Step[],
  members: readonly EtcdMemberInfo[],
  bindings: Bindings,
): NodeBinding[] {
  const found = new Map<string, NodeBinding>();
  for (const s of steps) {
    const m = s.target.member;
    if (m?.kind !== 'talos' || bindings.get(m.replaces)?.memberId || found.has(m.replaces)) continue;
    const name = bindings.memberName(m);
    const member = name ? members.find((x) => x.name === name) : undefined;
    if (member) found.set(m.replaces, { replaces: m.replaces, memberId: member.id, name: member.name });
  }
  return [...found.values()];
}
