/**
 * etcd member ids are uint64s that ferry keeps as decimal strings (a JSON number above 2^53 loses
 * digits). etcdctl's table output, `etcdctl member remove` and `talosctl etcd remove-member` take
 * them in hex (talos.md §7), so every command ferry prints and every plan's idHex comes from here.
 */

const UINT64_MAX = 0xffff_ffff_ffff_ffffn;

/** "10276657743932975437" → "8e9e05c52164694d". Throws on anything but a decimal uint64: a guessed id names another member. */
export function memberIdHex(id: string): string {
  if (!/^\d{1,20}$/.test(id) || BigInt(id) > UINT64_MAX)
    throw new Error(`etcd member id ${JSON.stringify(id)} is not a decimal uint64`);
  return BigInt(id).toString(16);
}
