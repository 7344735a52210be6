/**
 * How Talos moves between releases, as data. Source: Talos "Upgrading Talos Linux", section
 * "Supported upgrade paths" (https://docs.siderolabs.com/talos/latest/configure-your-talos-cluster/lifecycle-management/upgrading-talos):
 * the configuration migration is tested only between adjacent minors, so the recommended path
 * goes to the latest patch of the current minor, then to the latest patch of every intermediate
 * minor, then to the target. The hard floor of each line (`minUpgradeFrom`, talos.md §8) is in
 * knowledge/talos.ts.
 */
export const TALOS_UPGRADE_PATH = {
  source:
    'https://docs.siderolabs.com/talos/latest/configure-your-talos-cluster/lifecycle-management/upgrading-talos',
  /** Stop at the latest patch of every minor between the current and the target. */
  throughEveryMinor: true,
} as const;

/** Talos Image Factory: where a Proxmox template's nocloud disk image comes from (mgmt.md §4). */
export const IMAGE_FACTORY = 'https://factory.talos.dev';
