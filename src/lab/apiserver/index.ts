export { issueClientCert, issueServingCert, writeKubeconfig } from './credentials.js';
export { EtcdStore } from './etcd-store.js';
export { EvictionLog } from './eviction-log.js';
export { MemoryStore } from './memory-store.js';
export { LabApiServer } from './server.js';
