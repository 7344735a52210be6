export {
  type BackendState,
  type BalancerStats,
  LabLoadBalancer,
  type LabLoadBalancerOptions,
} from './balancer.js';
export { type HealthTls, type ProbeResult, probeReadyz } from './health.js';
