import { describe, expect, it } from 'vitest';
import { describeSource } from '../snapshot/model.js';
import { deriveFacts } from './derive.js';
import {
  apiserverFlags,
  CONTROL_PLANES,
  emptySnapshot,
  flags,
  labCluster,
  staticPod,
} from './testing-builders.js';

function withApiserverFlags(extra: ReturnType<typeof flags>, declared?: ReturnType<typeof flags>) {
  const s = labCluster();
  s.staticPods = s.staticPods.filter((p) => p.component !== 'kube-apiserver');
  for (const cp of CONTROL_PLANES) {
    s.staticPods.push(
      staticPod(
        'kube-apiserver',
        cp.name,
        'registry.k8s.io/kube-apiserver:v1.32.4',
        apiserverFlags(cp.ip, extra),
      ),
    );
  }
  if (declared) s.kubeadm.clusterConfiguration!.apiServer.extraArgs = declared;
  return s;
}

describe('kube-apiserver facts', () => {
  it('instances carry per-node flags, advertise address, port, version and etcd servers', () => {
    const inst = deriveFacts(labCluster()).apiserver.instances.value!;
    expect(inst.map((i) => [i.node, i.advertiseAddress, i.securePort, i.version])).toEqual([
      ['cp-1', '10.20.0.11', 6443, 'v1.32.4'],
      ['cp-2', '10.20.0.12', 6443, 'v1.32.4'],
      ['cp-3', '10.20.0.13', 6443, 'v1.32.4'],
    ]);
    expect(inst[0]!.etcdServers).toEqual(['https://127.0.0.1:2379']);
    expect(inst[0]!.flags.find((f) => f.name === 'oidc-client-id')?.value).toBe('kubernetes');
  });

  it("kubeadm's default issuer: one issuer, audiences default to it, no JWKS URI", () => {
    const a = deriveFacts(labCluster()).apiserver;
    expect(a.serviceAccountIssuers.value).toEqual(['https://kubernetes.default.svc.cluster.local']);
    expect(a.serviceAccountIssuers.conflict).toBeUndefined();
    // the kubeadm-derived default is one of the agreeing sources
    expect(a.serviceAccountIssuers.provenance.map(describeSource).at(-1)).toMatch(
      /kubeadm writes https:\/\/kubernetes.default.svc/,
    );
    expect(a.apiAudiences.value).toEqual(['https://kubernetes.default.svc.cluster.local']);
    expect(describeSource(a.apiAudiences.provenance[0]!)).toMatch(
      /has no --api-audiences: the apiserver defaults/,
    );
    expect(a.serviceAccountJwksUri.value).toBeNull();
    expect(a.serviceAccountKeyFiles.value).toEqual(['/etc/kubernetes/pki/sa.pub']);
  });

  it('v1beta4 repeated flags: every issuer in order, first signs; declared and live lists agree', () => {
    const issuers = flags(
      '--service-account-issuer=https://k8s-api.lab.example:6443',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      '--api-audiences=https://k8s-api.lab.example:6443,https://kubernetes.default.svc.cluster.local',
      '--service-account-jwks-uri=https://k8s-api.lab.example:6443/openid/v1/jwks',
    );
    const s = withApiserverFlags([], issuers);
    // kubeadm's own issuer flag is replaced by the extraArgs ones, as kubeadm does
    for (const p of s.staticPods.filter((x) => x.component === 'kube-apiserver')) {
      p.flags = [...p.flags.filter((f) => f.name !== 'service-account-issuer'), ...issuers];
    }
    const a = deriveFacts(s).apiserver;
    expect(a.serviceAccountIssuers.value).toEqual([
      'https://k8s-api.lab.example:6443',
      'https://kubernetes.default.svc.cluster.local',
    ]);
    expect(a.serviceAccountIssuers.conflict).toBeUndefined();
    expect(a.serviceAccountIssuers.provenance).toHaveLength(4);
    expect(a.apiAudiences.value).toEqual([
      'https://k8s-api.lab.example:6443',
      'https://kubernetes.default.svc.cluster.local',
    ]);
    expect(a.serviceAccountJwksUri.value).toBe('https://k8s-api.lab.example:6443/openid/v1/jwks');
    expect(
      a.extraFlags.value?.filter((f) => f.name === 'service-account-issuer').map((f) => f.value),
    ).toEqual(['https://k8s-api.lab.example:6443', 'https://kubernetes.default.svc.cluster.local']);
    expect(a.extraFlags.conflict).toBeUndefined();
  });

  it('issuer order differing between control planes is a conflict (the first issuer signs)', () => {
    const s = labCluster();
    const cp2 = s.staticPods.find((p) => p.component === 'kube-apiserver' && p.node === 'cp-2')!;
    cp2.flags = [...flags('--service-account-issuer=https://k8s-api.lab.example:6443'), ...cp2.flags];
    const fact = deriveFacts(s).apiserver.serviceAccountIssuers;
    expect(fact.conflict).toBeDefined();
    expect(fact.value).toEqual(['https://kubernetes.default.svc.cluster.local']);
    expect(fact.conflict?.candidates[1]?.value).toEqual([
      'https://k8s-api.lab.example:6443',
      'https://kubernetes.default.svc.cluster.local',
    ]);
  });

  it('extra flags are exactly the ones kubeadm does not write; OIDC picked out', () => {
    const a = deriveFacts(labCluster()).apiserver;
    expect(a.extraFlags.value).toEqual(
      flags(
        '--encryption-provider-config=/etc/kubernetes/enc/config.yaml',
        '--oidc-issuer-url=https://sso.lab.example/realms/k8s',
        '--oidc-client-id=kubernetes',
      ),
    );
    expect(a.extraFlags.conflict).toBeUndefined();
    expect(a.oidc.value).toEqual(
      flags('--oidc-issuer-url=https://sso.lab.example/realms/k8s', '--oidc-client-id=kubernetes'),
    );
  });

  it('a kubeadm flag with a changed constant value counts as extra (admission plugins)', () => {
    const s = withApiserverFlags([], []);
    for (const p of s.staticPods.filter((x) => x.component === 'kube-apiserver')) {
      p.flags = p.flags.map((f) =>
        f.name === 'enable-admission-plugins'
          ? { ...f, value: 'NodeRestriction,PodSecurity,EventRateLimit' }
          : f,
      );
      p.flags.push(...flags('--admission-control-config-file=/etc/kubernetes/admission.yaml'));
    }
    s.kubeadm.clusterConfiguration!.apiServer.extraArgs = flags(
      '--enable-admission-plugins=NodeRestriction,PodSecurity,EventRateLimit',
      '--admission-control-config-file=/etc/kubernetes/admission.yaml',
    );
    const a = deriveFacts(s).apiserver;
    expect(a.extraFlags.value?.map((f) => f.name)).toEqual([
      'enable-admission-plugins',
      'admission-control-config-file',
    ]);
    expect(a.admission.value).toEqual({
      enabled: ['NodeRestriction', 'PodSecurity', 'EventRateLimit'],
      disabled: [],
      configFile: '/etc/kubernetes/admission.yaml',
    });
    expect(a.podSecurityDefaults.value).toBeUndefined();
    expect(a.podSecurityDefaults.missing).toMatch(/\/etc\/kubernetes\/admission.yaml/);
  });

  it('a manifest edited by hand: live extra flags differ from kubeadm-config extraArgs', () => {
    const s = labCluster();
    const cp1 = s.staticPods.find((p) => p.component === 'kube-apiserver' && p.node === 'cp-1')!;
    cp1.flags.push(...flags('--audit-log-path=/var/log/kubernetes/audit.log'));
    const fact = deriveFacts(s).apiserver.extraFlags;
    expect(fact.conflict).toBeDefined();
    expect(fact.value?.map((f) => f.name)).toContain('audit-log-path');
    expect(fact.conflict?.reason).toMatch(/edited by hand/);
    expect(fact.conflict?.candidates).toHaveLength(4);
  });

  it('anonymous auth, authorization and PodSecurity defaults', () => {
    const a = deriveFacts(labCluster()).apiserver;
    expect(a.anonymousAuth.value).toBe(true);
    expect(describeSource(a.anonymousAuth.provenance[0]!)).toMatch(
      /no --anonymous-auth: the Kubernetes default \(true\)/,
    );
    expect(a.authorization.value).toEqual({ modes: ['Node', 'RBAC'], configFile: null });
    expect(a.podSecurityDefaults.value).toEqual({
      mode: 'built-in',
      enforce: 'privileged',
      audit: 'privileged',
      warn: 'privileged',
    });

    const s = withApiserverFlags(flags('--anonymous-auth=false', '--disable-admission-plugins=PodSecurity'));
    const b = deriveFacts(s).apiserver;
    expect(b.anonymousAuth.value).toBe(false);
    expect(b.podSecurityDefaults.value).toEqual({ mode: 'disabled' });
  });

  it('missing apiserver manifests: every apiserver fact says what to provide', () => {
    const a = deriveFacts(emptySnapshot()).apiserver;
    for (const f of [
      a.instances,
      a.serviceAccountIssuers,
      a.apiAudiences,
      a.oidc,
      a.anonymousAuth,
      a.admission,
    ]) {
      expect(f.value).toBeUndefined();
      expect(f.missing).toMatch(/kube-apiserver/);
    }
    expect(a.certSANs.missing).toMatch(/certSANs/);
  });

  it('kubeadm-config alone still yields declared extraArgs and issuers', () => {
    const s = labCluster();
    s.staticPods = [];
    const a = deriveFacts(s).apiserver;
    expect(a.extraFlags.value?.map((f) => f.name)).toEqual([
      'encryption-provider-config',
      'oidc-issuer-url',
      'oidc-client-id',
    ]);
    expect(a.serviceAccountIssuers.value).toEqual(['https://kubernetes.default.svc.cluster.local']);
    expect(a.instances.value).toBeUndefined();
  });
});
