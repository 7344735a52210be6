/**
 * Every audit rule, assembled from one file per family (`src/audit/rules/<family>.ts`). To add a
 * family: export `<FAMILY>_RULES: Rule[]` from its file and spread it here. Ids come from
 * docs/knowledge/blockers.md and are never renamed or reused.
 */
import type { Rule } from '../rule.js';
import { ADDONS_RULES } from './addons.js';
import { APISERVER_RULES } from './apiserver.js';
import { BOOTSTRAP_RULES } from './bootstrap.js';
import { CAPI_RULES } from './capi.js';
import { CNI_RULES } from './cni.js';
import { ENCRYPTION_RULES } from './encryption.js';
import { ENDPOINT_RULES } from './endpoint.js';
import { ETCD_RULES } from './etcd.js';
import { GITOPS_RULES } from './gitops.js';
import { KUBELET_RULES } from './kubelet.js';
import { NETWORK_RULES } from './network.js';
import { NODES_RULES } from './nodes.js';
import { PKI_RULES } from './pki.js';
import { TALOS_RULES } from './talos.js';
import { VERSION_RULES } from './version.js';
import { WORKLOAD_RULES } from './workload.js';

export const ALL_RULES: readonly Rule[] = [
  ...BOOTSTRAP_RULES,
  ...ETCD_RULES,
  ...NETWORK_RULES,
  ...CNI_RULES,
  ...ADDONS_RULES,
  ...VERSION_RULES,
  ...TALOS_RULES,
  ...ENDPOINT_RULES,
  ...PKI_RULES,
  ...APISERVER_RULES,
  ...ENCRYPTION_RULES,
  ...KUBELET_RULES,
  ...NODES_RULES,
  ...WORKLOAD_RULES,
  ...GITOPS_RULES,
  ...CAPI_RULES,
];
