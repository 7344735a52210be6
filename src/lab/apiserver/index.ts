export {
  issueClientCert,
  issueServingCert,
  type KubeconfigInput,
  renderKubeconfig,
  writeKubeconfig,
} from './credentials.js';
export { EtcdStore, type EtcdStoreOptions } from './etcd-store.js';
export { type BudgetSnapshot, EvictionLog, type EvictionRecord } from './eviction-log.js';
export { MemoryStore } from './memory-store.js';
export { BUILTIN_RESOURCES, type ResourceDef } from './resources.js';
export { type DownMode, LabApiServer, type LabApiServerOptions } from './server.js';
export type { Status } from './status.js';
export { CompactedError, type Store, StoreUnavailableError } from './store.js';
export type { EvictionFault } from './subresources.js';
