export { LabLoadBalancer } from './balancer.js';
export { probeReadyz } from './health.js';
