/**
 * The Pod Security Standards "baseline" checks (Kubernetes docs "Pod Security Standards",
 * baseline:latest), as a pure function over one pod template. Talos-generated configs enforce
 * baseline cluster-wide (talos.md §3.3); apiserver.podsecurity-default uses this to find the
 * workloads a Talos apiserver would reject.
 */

export interface Violation {
  /** Field path relative to the pod spec's parent, e.g. "spec.template.spec.hostNetwork". */
  field: string;
  observed: string;
  control: string;
}

/** Capabilities baseline allows to add. */
const ALLOWED_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

/** The "safe" sysctls baseline allows (latest policy version). */
const SAFE_SYSCTLS = new Set([
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.ip_unprivileged_port_start',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports',
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
]);

const SELINUX_TYPES = new Set([
  '',
  'container_t',
  'container_init_t',
  'container_kvm_t',
  'container_engine_t',
]);
const APPARMOR_ANNOTATION = 'container.apparmor.security.beta.kubernetes.io/';

type Obj = Record<string, unknown>;

function rec(x: unknown): Obj | undefined {
  return typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Obj) : undefined;
}

function list(x: unknown): Obj[] {
  return Array.isArray(x) ? (x.map(rec).filter(Boolean) as Obj[]) : [];
}

function securityContextChecks(sc: Obj | undefined, at: string, out: Violation[]): void {
  if (!sc) return;
  const seccomp = rec(sc['seccompProfile'])?.['type'];
  if (seccomp === 'Unconfined')
    out.push({ field: `${at}.seccompProfile.type`, observed: 'Unconfined', control: 'Seccomp' });
  const apparmor = rec(sc['appArmorProfile'])?.['type'];
  if (apparmor === 'Unconfined')
    out.push({ field: `${at}.appArmorProfile.type`, observed: 'Unconfined', control: 'AppArmor' });
  const se = rec(sc['seLinuxOptions']);
  if (se) {
    const type = typeof se['type'] === 'string' ? se['type'] : '';
    if (!SELINUX_TYPES.has(type))
      out.push({ field: `${at}.seLinuxOptions.type`, observed: type, control: 'SELinux' });
    for (const k of ['user', 'role'] as const) {
      if (typeof se[k] === 'string' && se[k] !== '')
        out.push({ field: `${at}.seLinuxOptions.${k}`, observed: String(se[k]), control: 'SELinux' });
    }
  }
  if (rec(sc['windowsOptions'])?.['hostProcess'] === true)
    out.push({ field: `${at}.windowsOptions.hostProcess`, observed: 'true', control: 'HostProcess' });
}

/**
 * Baseline violations of one pod spec. `specPath` is where the spec sits in its object
 * ("spec" for a Pod, "spec.template.spec" for a Deployment); `annotations` are the pod template's,
 * found at `metaPath` ("metadata", "spec.template.metadata").
 */
export function baselineViolations(
  podSpec: unknown,
  specPath: string,
  annotations: Record<string, string> | undefined,
  metaPath: string,
): Violation[] {
  const spec = rec(podSpec) ?? {};
  const out: Violation[] = [];
  for (const k of ['hostNetwork', 'hostPID', 'hostIPC'] as const) {
    if (spec[k] === true)
      out.push({ field: `${specPath}.${k}`, observed: 'true', control: 'Host Namespaces' });
  }
  const podSc = rec(spec['securityContext']);
  securityContextChecks(podSc, `${specPath}.securityContext`, out);
  for (const s of list(podSc?.['sysctls'])) {
    const name = String(s['name'] ?? '');
    if (!SAFE_SYSCTLS.has(name))
      out.push({ field: `${specPath}.securityContext.sysctls[${name}]`, observed: name, control: 'Sysctls' });
  }
  for (const v of list(spec['volumes'])) {
    const hp = rec(v['hostPath']);
    if (hp)
      out.push({
        field: `${specPath}.volumes[${String(v['name'] ?? '?')}].hostPath`,
        observed: String(hp['path'] ?? ''),
        control: 'HostPath Volumes',
      });
  }
  for (const group of ['initContainers', 'containers', 'ephemeralContainers'] as const) {
    for (const c of list(spec[group])) {
      const at = `${specPath}.${group}[${String(c['name'] ?? '?')}]`;
      const sc = rec(c['securityContext']);
      if (sc?.['privileged'] === true)
        out.push({
          field: `${at}.securityContext.privileged`,
          observed: 'true',
          control: 'Privileged Containers',
        });
      const add = rec(sc?.['capabilities'])?.['add'];
      const extra = Array.isArray(add)
        ? add.map(String).filter((cap) => !ALLOWED_CAPABILITIES.has(cap.replace(/^CAP_/, '')))
        : [];
      if (extra.length > 0)
        out.push({
          field: `${at}.securityContext.capabilities.add`,
          observed: extra.join(', '),
          control: 'Capabilities',
        });
      const procMount = sc?.['procMount'];
      if (typeof procMount === 'string' && procMount !== 'Default')
        out.push({
          field: `${at}.securityContext.procMount`,
          observed: procMount,
          control: '/proc Mount Type',
        });
      securityContextChecks(sc, `${at}.securityContext`, out);
      for (const p of list(c['ports'])) {
        const hostPort = p['hostPort'];
        if (typeof hostPort === 'number' && hostPort !== 0)
          out.push({
            field: `${at}.ports[${String(p['containerPort'] ?? '?')}].hostPort`,
            observed: String(hostPort),
            control: 'Host Ports',
          });
      }
    }
  }
  for (const [k, value] of Object.entries(annotations ?? {})) {
    if (!k.startsWith(APPARMOR_ANNOTATION)) continue;
    if (value !== 'runtime/default' && !value.startsWith('localhost/'))
      out.push({ field: `${metaPath}.annotations[${k}]`, observed: value, control: 'AppArmor' });
  }
  return out;
}
