import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TargetInput } from '../../facts/target.js';
import { issueCertificate, loadIssued } from '../../pki/forge.js';
import { loadSnapshot } from '../../snapshot/load.js';
import type { CertificateInfo, Flag, KubeObject, Snapshot } from '../../snapshot/model.js';
import { certificateInfoFromPem } from '../../snapshot/pki.js';
import type { AuditContext } from '../rule.js';
import { editedContext, findingsWithSubject } from '../testing.js';
import {
  anonymousAuthDependents,
  coexistenceEndpoints,
  coversHost,
  extraArgDenied,
  extraArgsCarryover,
  oidc,
  podSecurityDefault,
  saIssuer,
  saJwksUri,
  sanEndpoint,
  sanLoopback,
  tls13Clients,
} from './apiserver.js';
import { baselineViolations } from './apiserver-baseline.js';

const LAB = fileURLToPath(new URL('../../../examples/lab-cluster', import.meta.url));
const ENDPOINT_URL = 'https://k8s-api.lab.example:6443';
let lab: Snapshot;

beforeAll(async () => {
  lab = await loadSnapshot(LAB, { strictPki: false });
}, 60_000);

const ctxOf = (edit?: (s: Snapshot) => void, target: TargetInput = {}): AuditContext =>
  editedContext(lab, edit, target);
const findings = findingsWithSubject;

function editFlags(s: Snapshot, component: string, fn: (flags: Flag[]) => Flag[]): void {
  for (const p of s.staticPods) if (p.component === component) p.flags = fn(p.flags);
}

const without =
  (...names: string[]) =>
  (flags: Flag[]) =>
    flags.filter(
      (f) => !names.some((n) => f.name === n || (n.endsWith('*') && f.name.startsWith(n.slice(0, -1)))),
    );
const withFlag =
  (name: string, value: string, first = false) =>
  (flags: Flag[]) =>
    first ? [{ name, value }, ...flags] : [...flags, { name, value }];

/** A real apiserver serving certificate from the example cluster's CA, with the given SANs. */
async function servingCert(dnsNames: string[], ipAddresses: string[]): Promise<CertificateInfo> {
  const ca = await loadIssued(
    await readFile(`${LAB}/pki/ca.crt`, 'utf8'),
    await readFile(`${LAB}/pki/ca.key`, 'utf8'),
  );
  const c = await issueCertificate({
    issuer: ca,
    commonName: 'kube-apiserver',
    usage: 'server',
    dnsNames,
    ipAddresses,
    key: { algorithm: 'ECDSA' },
  });
  return certificateInfoFromPem(c.certPem, 'served')[0]!;
}

const KUBEADM_SANS = [
  'kubernetes',
  'kubernetes.default',
  'kubernetes.default.svc',
  'kubernetes.default.svc.cluster.local',
  'k8s-api.lab.example',
];

describe('apiserver.san-loopback', () => {
  it('fires on the example cluster: apiserver.crt lacks 127.0.0.1 and localhost', () => {
    const [f, ...rest] = findings(sanLoopback.check(ctxOf()));
    expect(rest).toEqual([]);
    expect(f!.severity).toBe('blocker');
    expect(f!.subject).toEqual({ kind: 'PkiFile', name: 'apiserver.crt' });
    expect(f!.evidence[0]).toMatchObject({
      kind: 'file',
      path: `${LAB}/pki/apiserver.crt`,
      field: 'subjectAltName',
    });
    expect(f!.artifacts).toContain('kubeadm/10-apiserver-sans.sh');
    expect(f!.remediation).toContain('machine.features.kubePrism.enabled: false');
  });

  it('says which control planes it saw no certificate of, instead of assuming kubeadm issued them alike', async () => {
    const [pkiOnly] = findings(sanLoopback.check(ctxOf()));
    expect(pkiOnly!.message).not.toMatch(/the same way/);
    expect(pkiOnly!.message).toMatch(
      /No certificate served by cp-1, cp-2, cp-3 is in the snapshot \(the PKI copy is of one control plane, which one is not recorded\): check theirs too\.$/,
    );
    const cert = await servingCert(KUBEADM_SANS, ['10.96.0.1']);
    const [served] = findings(
      sanLoopback.check(
        ctxOf((s) => {
          delete s.pki;
          s.servedCertificates = [
            { address: '10.20.0.11:6443', role: 'control-plane', node: 'cp-1', certificate: cert },
          ];
        }),
      ),
    );
    expect(served!.message).toMatch(
      /No certificate served by cp-2, cp-3 is in the snapshot: check theirs too\.$/,
    );
  });

  it('suggests the v1.14 KubePrism options on a v1.14 target', () => {
    const [f] = findings(sanLoopback.check(ctxOf(undefined, { talosVersion: '1.14' })));
    expect(f!.remediation).toContain('KubePrismConfig');
  });

  it('does not apply with KubePrism off', () => {
    expect(sanLoopback.notApplicable?.(ctxOf(undefined, { kubeprism: 'off' }).target)).toMatch(
      /KubePrism is off/,
    );
    expect(sanLoopback.notApplicable?.(ctxOf().target)).toBeUndefined();
  });

  it('passes for a served certificate with loopback SANs, and is a risk when only localhost is missing', async () => {
    const good = await servingCert(['localhost', ...KUBEADM_SANS], ['127.0.0.1', '10.96.0.1']);
    const noName = await servingCert(KUBEADM_SANS, ['127.0.0.1', '10.96.0.1']);
    const served = (c: CertificateInfo) => (s: Snapshot) => {
      delete s.pki;
      s.servedCertificates = [
        { address: '10.20.0.11:6443', role: 'control-plane', node: 'cp-1', certificate: c },
      ];
    };
    expect(sanLoopback.check(ctxOf(served(good)))).toEqual([]);
    const [f] = findings(sanLoopback.check(ctxOf(served(noName))));
    expect(f!.severity).toBe('risk');
    expect(f!.subject).toEqual({ kind: 'Endpoint', name: '10.20.0.11:6443', node: 'cp-1' });
    expect(f!.evidence[0]).toMatchObject({ kind: 'tls', address: '10.20.0.11:6443' });
  });

  it('is skipped without any apiserver certificate', () => {
    expect(sanLoopback.check(ctxOf((s) => delete s.pki))).toMatchObject({
      kind: 'skipped',
      missing: ['pki', 'served-certs'],
    });
  });
});

describe('apiserver.san-endpoint', () => {
  it('on the example cluster: the kubeadm certificate is fine, but the VIP certSAN must be carried to Talos (risk)', () => {
    const [f, ...rest] = findings(sanEndpoint.check(ctxOf()));
    expect(rest).toEqual([]);
    expect(f!.severity).toBe('risk');
    expect(f!.field).toBe('certSANs');
    expect(f!.message).toContain('10.20.0.10');
    expect(f!.remediation).toContain('`cluster.apiServer.certSANs`');
  });

  it('says the extra SANs are what kubeadm-config lists, and whether the certificates seen carry them', () => {
    const [f] = findings(sanEndpoint.check(ctxOf()));
    expect(f!.message).toMatch(
      /^kubeadm-config lists the extra apiserver certificate SANs 10\.20\.0\.10 \(apiServer\.certSANs\), and apiserver\.crt \(the PKI copy of one control plane\) carries them;/,
    );
    const [g] = findings(
      sanEndpoint.check(
        ctxOf((s) => {
          s.kubeadm.clusterConfiguration!.apiServer.certSANs.push('api.other.example');
        }),
      ),
    );
    expect(g!.message).toContain('(apiServer.certSANs); of the certificates seen, none carries them all;');
  });

  it('is a blocker when the certificate lacks the endpoint host and the Service IP', async () => {
    const cert = await servingCert(['cp-1', 'kubernetes'], ['10.20.0.11', '127.0.0.1']);
    const ctx = ctxOf((s) => {
      const i = s.pki!.certificates.findIndex((c) => c.path === 'apiserver.crt');
      s.pki!.certificates[i] = { ...cert, path: 'apiserver.crt' };
      s.kubeadm.clusterConfiguration!.apiServer.certSANs = [];
    });
    const [f, ...rest] = findings(sanEndpoint.check(ctx));
    expect(rest).toEqual([]);
    expect(f!.severity).toBeUndefined();
    expect(f!.message).toMatch(/k8s-api\.lab\.example or the `kubernetes` Service IP 10\.96\.0\.1/);
    expect(f!.evidence.length).toBeGreaterThan(1);
  });

  it("names the kit's re-issue step only when the kit has one (KubePrism on)", async () => {
    const cert = await servingCert(['cp-1', 'kubernetes'], ['10.20.0.11', '127.0.0.1']);
    const edit = (s: Snapshot) => {
      const i = s.pki!.certificates.findIndex((c) => c.path === 'apiserver.crt');
      s.pki!.certificates[i] = { ...cert, path: 'apiserver.crt' };
      s.kubeadm.clusterConfiguration!.apiServer.certSANs = [];
    };
    const [on] = findings(sanEndpoint.check(ctxOf(edit)));
    expect(on!.remediation).toContain("(the kit's kubeadm/10-apiserver-sans.sh)");
    expect(on!.artifacts).toContain('kubeadm/10-apiserver-sans.sh');
    // Without KubePrism ferry generate writes no step 10: the finding must not send the operator there.
    const [off] = findings(sanEndpoint.check(ctxOf(edit, { kubeprism: 'off' })));
    expect(off!.remediation).not.toContain('kubeadm/10-apiserver-sans.sh');
    expect(off!.remediation).toContain('`kubeadm init phase certs apiserver`');
    expect(off!.artifacts).toEqual([]);
  });

  it('matches wildcard DNS SANs one label deep, and IPs canonically', async () => {
    const c = await servingCert(['*.lab.example'], ['fd00::1']);
    expect(coversHost(c, 'k8s-api.lab.example')).toBe(true);
    expect(coversHost(c, 'a.b.lab.example')).toBe(false);
    expect(coversHost(c, 'fd00:0:0::1')).toBe(true);
  });
});

describe('apiserver.sa-issuer', () => {
  it("fires on the example cluster: kubeadm's default issuer is not the endpoint URL", () => {
    const [f] = findings(saIssuer.check(ctxOf()));
    expect(f!.field).toBe('--service-account-issuer');
    expect(f!.evidence[0]).toMatchObject({
      kind: 'flag',
      component: 'kube-apiserver',
      node: 'cp-1',
      observed: 'https://kubernetes.default.svc.cluster.local',
    });
    expect(f!.artifacts).toEqual(['kubeadm/20-sa-issuer.sh', 'talos/controlplane-patch.yaml']);
  });

  it('gives the Talos-side fix for each target line', () => {
    const fix = (talosVersion: string) =>
      findings(saIssuer.check(ctxOf(undefined, { talosVersion })))[0]!.remediation;
    expect(fix('1.12')).toMatch(/single issuer/);
    expect(fix('1.13')).toContain(
      `service-account-issuer: [${ENDPOINT_URL}, https://kubernetes.default.svc.cluster.local]`,
    );
    expect(fix('1.14')).toContain('KubeServiceAccountConfig.accepted.issuers');
  });

  it('passes once the endpoint URL is the first issuer', () => {
    expect(
      saIssuer.check(
        ctxOf((s) => editFlags(s, 'kube-apiserver', withFlag('service-account-issuer', ENDPOINT_URL, true))),
      ),
    ).toEqual([]);
  });

  it('still fires while one control plane lags behind, citing only that one', () => {
    const ctx = ctxOf((s) => {
      for (const p of s.staticPods)
        if (p.component === 'kube-apiserver' && p.node !== 'cp-3')
          p.flags = withFlag('service-account-issuer', ENDPOINT_URL, true)(p.flags);
    });
    const [f] = findings(saIssuer.check(ctx));
    expect(f!.message).toMatch(/^1 of 3 kubeadm apiservers still sign/);
    expect(f!.evidence[0]).toMatchObject({ kind: 'flag', node: 'cp-3' });
  });

  it('fires on audiences that do not accept the endpoint URL', () => {
    const ctx = ctxOf((s) =>
      editFlags(s, 'kube-apiserver', (f) =>
        withFlag(
          'api-audiences',
          'https://kubernetes.default.svc.cluster.local',
        )(withFlag('service-account-issuer', ENDPOINT_URL, true)(f)),
      ),
    );
    const [f] = findings(saIssuer.check(ctx));
    expect(f!.field).toBe('--api-audiences');
  });
});

describe('apiserver.sa-jwks-uri', () => {
  it('reports a JWKS URI as info, and nothing on the example cluster', () => {
    expect(saJwksUri.check(ctxOf())).toEqual([]);
    const [f] = findings(
      saJwksUri.check(
        ctxOf((s) =>
          editFlags(
            s,
            'kube-apiserver',
            withFlag('service-account-jwks-uri', 'https://oidc.lab.example/openid/v1/jwks'),
          ),
        ),
      ),
    );
    expect(f!.message).toContain('https://oidc.lab.example/openid/v1/jwks');
    expect(f!.evidence[0]).toMatchObject({
      kind: 'flag',
      flag: 'service-account-jwks-uri',
      note: 'on cp-1, cp-2, cp-3',
    });
  });
});

describe('apiserver.anonymous-auth-dependents', () => {
  it('≤v1.13: the haproxy /healthz check is a blocker, an in-cluster /version caller a risk', () => {
    const result = findings(anonymousAuthDependents.check(ctxOf()));
    const byName = Object.fromEntries(result.map((f) => [f.subject.name, f]));
    expect(byName['haproxy-healthcheck /healthz']!.severity).toBe('blocker');
    expect(byName['haproxy-healthcheck /healthz']!.artifacts).toEqual([
      'rbac/health-probe.yaml',
      'talos/controlplane-patch.yaml',
    ]);
    expect(byName['haproxy-healthcheck /healthz']!.evidence[0]).toMatchObject({
      kind: 'file',
      field: 'user.username=system:anonymous requestURI=/healthz',
    });
    expect(byName['Go-http-client/1.1 /version']!.severity).toBe('risk');
    expect(result).toHaveLength(2);
  });

  it('v1.14: anonymous health checks keep working, other anonymous callers do not', () => {
    const result = findings(anonymousAuthDependents.check(ctxOf(undefined, { talosVersion: '1.14' })));
    expect(result.map((f) => f.subject.name)).toEqual(['Go-http-client/1.1 /version']);
  });

  it('still applies when only some control planes refuse anonymous requests', () => {
    const ctx = ctxOf((s) => {
      for (const p of s.staticPods)
        if (p.component === 'kube-apiserver' && p.node === 'cp-1')
          p.flags = withFlag('anonymous-auth', 'false')(p.flags);
    });
    expect(findings(anonymousAuthDependents.check(ctx))).toHaveLength(2);
  });

  it('without an audit log and with only some control planes refusing, names the ones that accept', () => {
    const [f] = findings(
      anonymousAuthDependents.check(
        ctxOf((s) => {
          delete s.auditLog;
          for (const p of s.staticPods)
            if (p.component === 'kube-apiserver' && p.node === 'cp-1')
              p.flags = withFlag('anonymous-auth', 'false')(p.flags);
        }),
      ),
    );
    expect(f!.message).toMatch(
      /^kube-apiserver on cp-2, cp-3 accepts anonymous requests \(on cp-1 it runs with --anonymous-auth=false\)/,
    );
  });

  it('with an audit log that shows no caller, says what the log shows rather than how long it covers', () => {
    const [f] = findings(
      anonymousAuthDependents.check(
        ctxOf((s) => {
          s.auditLog!.anonymous = [];
        }),
      ),
    );
    expect(f!.message).toMatch(/^The kubeadm apiservers \(3 instances seen\) accept anonymous requests/);
    expect(f!.message).not.toMatch(/short time/);
    expect(f!.message).toMatch(
      /The audit log in the snapshot \(\d+ events?\) shows no anonymous caller Talos apiservers would refuse; callers outside the time it covers are not seen\./,
    );
  });

  it('passes when the kubeadm apiservers already refuse anonymous requests', () => {
    expect(
      anonymousAuthDependents.check(
        ctxOf((s) => editFlags(s, 'kube-apiserver', withFlag('anonymous-auth', 'false'))),
      ),
    ).toEqual([]);
  });

  it('without an audit log, reports the risk with the custom anonymous bindings as evidence', () => {
    const [f, ...rest] = findings(anonymousAuthDependents.check(ctxOf((s) => delete s.auditLog)));
    expect(rest).toEqual([]);
    expect(f!.severity).toBeUndefined();
    expect(f!.message).toContain('lb-healthcheck');
    expect(f!.message).not.toContain('system:public-info-viewer');
    expect(f!.evidence.some((e) => e.kind === 'object' && e.object.name === 'lb-healthcheck')).toBe(true);
  });
});

describe('apiserver.extra-args-carryover', () => {
  it('lists the flags Talos would drop per component, leaving flags other rules own', () => {
    const result = findings(extraArgsCarryover.check(ctxOf()));
    expect(result.map((f) => f.subject.name)).toEqual([
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
    ]);
    const api = result[0]!;
    expect(api.message).toContain('--audit-policy-file=/etc/kubernetes/audit/policy.yaml');
    expect(api.message).not.toContain('oidc');
    expect(api.message).not.toContain('encryption-provider-config');
    expect(api.remediation).toContain('`cluster.apiServer.auditPolicy`');
    expect(api.evidence.find((e) => e.kind === 'flag' && e.flag === 'audit-log-path')).toMatchObject({
      note: 'on cp-1, cp-2, cp-3; names a host file',
    });
  });

  it('one control plane whose manifest has a flag kubeadm-config lacks: manifest against kubeadm-config, not control planes', () => {
    const ctx = ctxOf((s) => {
      const first = s.staticPods.find((p) => p.component === 'kube-apiserver')!.node;
      s.staticPods = s.staticPods.filter((p) => p.node === first);
      editFlags(s, 'kube-apiserver', withFlag('profiling', 'false'));
    });
    const api = findings(extraArgsCarryover.check(ctx)).find((f) => f.subject.name === 'kube-apiserver')!;
    expect(api.message).toContain(
      "The running manifest and kubeadm-config's extraArgs disagree: --profiling=false runs but is not in kubeadm-config",
    );
    expect(api.message).not.toMatch(/control planes (disagree|run different)/);
  });

  it('control planes that differ from each other are named as such', () => {
    const ctx = ctxOf((s) => {
      const first = s.staticPods.find((p) => p.component === 'kube-apiserver')!;
      first.flags = withFlag('profiling', 'false')(first.flags);
    });
    const api = findings(extraArgsCarryover.check(ctx)).find((f) => f.subject.name === 'kube-apiserver')!;
    expect(api.message).toContain('The control planes run different extra flags.');
  });

  it('passes when the components run only kubeadm defaults', () => {
    const ctx = ctxOf((s) => {
      editFlags(s, 'kube-apiserver', without('audit-*'));
      editFlags(s, 'kube-controller-manager', without('bind-address'));
      editFlags(s, 'kube-scheduler', without('bind-address'));
      const cc = s.kubeadm.clusterConfiguration!;
      cc.apiServer.extraArgs = cc.apiServer.extraArgs.filter((f) => !f.name.startsWith('audit-'));
      cc.controllerManager.extraArgs = [];
      cc.scheduler.extraArgs = [];
    });
    expect(extraArgsCarryover.check(ctx)).toEqual([]);
  });
});

describe('apiserver.extra-arg-denied', () => {
  it('passes on the example cluster (encryption-provider-config is the encryption rules’ business)', () => {
    expect(extraArgDenied.check(ctxOf())).toEqual([]);
  });

  it('fires for --authorization-config with the Talos-native replacement per target', () => {
    const edit = (s: Snapshot) =>
      editFlags(s, 'kube-apiserver', withFlag('authorization-config', '/etc/kubernetes/authz.yaml'));
    const [f] = findings(extraArgDenied.check(ctxOf(edit)));
    expect(f!.field).toBe('--authorization-config');
    expect(f!.remediation).toContain('cluster.apiServer.authorizationConfig');
    expect(findings(extraArgDenied.check(ctxOf(edit, { talosVersion: '1.14' })))[0]!.remediation).toContain(
      'KubeAuthorizerConfig',
    );
  });

  it('treats --tls-min-version as denied on v1.14 only, and not at all when it already says TLS 1.3', () => {
    const tls = (v: string) => (s: Snapshot) =>
      editFlags(s, 'kube-apiserver', withFlag('tls-min-version', v));
    expect(extraArgDenied.check(ctxOf(tls('VersionTLS12')))).toEqual([]);
    expect(
      findings(extraArgDenied.check(ctxOf(tls('VersionTLS12'), { talosVersion: '1.14' })))[0]!.field,
    ).toBe('--tls-min-version');
    expect(extraArgDenied.check(ctxOf(tls('VersionTLS13'), { talosVersion: '1.14' }))).toEqual([]);
  });

  it('fires for a controller-manager signing file, not for a scheduler kubeconfig path', () => {
    const ctx = ctxOf((s) => {
      editFlags(
        s,
        'kube-controller-manager',
        withFlag('cluster-signing-key-file', '/etc/kubernetes/pki/signer.key'),
      );
      editFlags(s, 'kube-scheduler', (f) => [
        ...without('kubeconfig')(f),
        { name: 'kubeconfig', value: '/etc/kubernetes/other.conf' },
      ]);
    });
    const result = findings(extraArgDenied.check(ctx));
    expect(result.map((f) => `${f.subject.name} ${f.field}`)).toEqual([
      'kube-controller-manager --cluster-signing-key-file',
    ]);
  });
});

describe('apiserver.oidc', () => {
  it('fires on the example cluster with the --oidc-* flags as evidence', () => {
    const [f] = findings(oidc.check(ctxOf()));
    expect(f!.evidence.map((e) => (e.kind === 'flag' ? e.flag : ''))).toEqual([
      'oidc-client-id',
      'oidc-groups-claim',
      'oidc-issuer-url',
      'oidc-username-claim',
    ]);
    expect(f!.remediation).toContain('cluster.apiServer.extraArgs');
    expect(findings(oidc.check(ctxOf(undefined, { talosVersion: '1.14' })))[0]!.remediation).toContain(
      '`jwt` authenticators',
    );
  });

  it('passes without OIDC', () => {
    const ctx = ctxOf((s) => {
      editFlags(s, 'kube-apiserver', without('oidc-*'));
      const cc = s.kubeadm.clusterConfiguration!;
      cc.apiServer.extraArgs = cc.apiServer.extraArgs.filter((f) => !f.name.startsWith('oidc-'));
    });
    expect(oidc.check(ctx)).toEqual([]);
  });
});

describe('apiserver.podsecurity-default', () => {
  it('is a blocker for default/netshoot (NET_ADMIN in an unlabelled namespace) plus the cluster-level risk', () => {
    const result = findings(podSecurityDefault.check(ctxOf()));
    const blockers = result.filter((f) => f.severity === undefined);
    expect(blockers.map((f) => `${f.subject.kind} ${f.subject.namespace}/${f.subject.name}`)).toEqual([
      'Pod default/netshoot',
    ]);
    expect(blockers[0]!.evidence[0]).toMatchObject({
      field: 'spec.containers[netshoot].securityContext.capabilities.add',
      observed: 'NET_ADMIN, NET_RAW',
    });
    const risk = result.find((f) => f.severity === 'risk')!;
    expect(risk.message).toContain('enforces "privileged" by default');
    // kube-system is exempt: its hostNetwork DaemonSets (Cilium, CSI) are not reported.
    expect(result.some((f) => f.subject.namespace === 'kube-system')).toBe(false);
  });

  it('respects a namespace that chose its own level', () => {
    const ctx = ctxOf((s) => {
      const ns = s.resources.namespaces.find((n) => n.metadata.name === 'default')!;
      ns.metadata.labels = { ...ns.metadata.labels, 'pod-security.kubernetes.io/enforce': 'privileged' };
    });
    expect(findings(podSecurityDefault.check(ctx)).some((f) => f.subject.name === 'netshoot')).toBe(false);
  });

  it('reports a Deployment by its template path', () => {
    const ctx = ctxOf((s) => {
      const d = s.resources.deployments.find((x) => x.metadata.namespace === 'shop')!;
      d.spec.template.spec.hostNetwork = true;
    });
    const f = findings(podSecurityDefault.check(ctx)).find((x) => x.subject.kind === 'Deployment')!;
    expect(f.field).toBe('spec.template.spec');
    expect(f.evidence[0]).toMatchObject({ field: 'spec.template.spec.hostNetwork', observed: 'true' });
    expect(f.subject.group).toBe('apps');
  });
});

describe('baselineViolations', () => {
  it('finds each baseline control and accepts a default pod', () => {
    expect(
      baselineViolations({ containers: [{ name: 'app', image: 'x' }] }, 'spec', undefined, 'metadata'),
    ).toEqual([]);
    const spec = {
      hostPID: true,
      securityContext: {
        sysctls: [
          { name: 'net.core.somaxconn', value: '1024' },
          { name: 'net.ipv4.tcp_syncookies', value: '1' },
        ],
      },
      volumes: [{ name: 'root', hostPath: { path: '/' } }],
      initContainers: [{ name: 'init', securityContext: { privileged: true } }],
      containers: [
        {
          name: 'app',
          ports: [{ containerPort: 80, hostPort: 8080 }],
          securityContext: {
            capabilities: { add: ['NET_BIND_SERVICE', 'SYS_ADMIN'] },
            seccompProfile: { type: 'Unconfined' },
            procMount: 'Unmasked',
          },
        },
      ],
    };
    const controls = baselineViolations(
      spec,
      'spec',
      { 'container.apparmor.security.beta.kubernetes.io/app': 'unconfined' },
      'metadata',
    ).map((v) => `${v.control}: ${v.field}`);
    expect(controls).toEqual([
      'Host Namespaces: spec.hostPID',
      'Sysctls: spec.securityContext.sysctls[net.core.somaxconn]',
      'HostPath Volumes: spec.volumes[root].hostPath',
      'Privileged Containers: spec.initContainers[init].securityContext.privileged',
      'Capabilities: spec.containers[app].securityContext.capabilities.add',
      '/proc Mount Type: spec.containers[app].securityContext.procMount',
      'Seccomp: spec.containers[app].securityContext.seccompProfile.type',
      'Host Ports: spec.containers[app].ports[80].hostPort',
      'AppArmor: metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]',
    ]);
  });
});

describe('apiserver.tls13-clients', () => {
  it('fires on the example cluster (kubelet accepts TLS 1.2 today), with audit-log clients as hints', () => {
    const [f] = findings(tls13Clients.check(ctxOf()));
    expect(f!.message).toContain('kubelet (:10250)');
    expect(f!.message).not.toContain('etcd');
    expect(f!.evidence.some((e) => e.kind === 'file' && e.field === 'userAgent=haproxy-healthcheck')).toBe(
      true,
    );
  });

  it('says what the kubeadm side was seen to accept, or that it was not seen', () => {
    const [f] = findings(tls13Clients.check(ctxOf()));
    expect(f!.message).toContain(
      'On the kubeadm side the kubelets run with tlsMinVersion unset (TLS 1.2 accepted); kube-controller-manager runs with no --tls-min-version (TLS 1.2 accepted); kube-scheduler runs with no --tls-min-version (TLS 1.2 accepted).',
    );
    const [g] = findings(
      tls13Clients.check(
        ctxOf((s) => {
          delete s.kubelet;
          s.staticPods = s.staticPods.filter((p) => p.component === 'kube-apiserver');
        }),
      ),
    );
    expect(g!.message).toContain(
      'On the kubeadm side the KubeletConfiguration is not in the snapshot; no kube-controller-manager manifest is in the snapshot; no kube-scheduler manifest is in the snapshot.',
    );
    expect(g!.message).not.toMatch(/kubeadm side accepts TLS 1\.2/);
  });

  it('passes ≤v1.13 when the kubelet already requires TLS 1.3, but not on v1.14 (apiserver and etcd change too)', () => {
    const tls13 = (s: Snapshot) => {
      s.kubelet!.spec['tlsMinVersion'] = 'VersionTLS13';
    };
    expect(tls13Clients.check(ctxOf(tls13))).toEqual([]);
    const [f] = findings(tls13Clients.check(ctxOf(tls13, { talosVersion: '1.14' })));
    expect(f!.message).toContain('kube-apiserver and etcd');
    const both = (s: Snapshot) => {
      tls13(s);
      editFlags(s, 'kube-apiserver', withFlag('tls-min-version', 'VersionTLS13'));
    };
    expect(tls13Clients.check(ctxOf(both, { talosVersion: '1.14' }))).toEqual([]);
  });
});

describe('apiserver.coexistence-endpoints', () => {
  const kubernetesSlice = (s: Snapshot) =>
    s.resources.endpointslices.find(
      (e) => e.metadata.namespace === 'default' && e.metadata.name === 'kubernetes',
    )!;

  it('reports the addresses default/kubernetes lists, with the control plane each belongs to', () => {
    const [f] = findings(coexistenceEndpoints.check(ctxOf()));
    expect(f!.evidence[0]).toMatchObject({
      kind: 'object',
      object: { kind: 'EndpointSlice', name: 'kubernetes' },
      observed: '10.20.0.11, 10.20.0.12, 10.20.0.13',
    });
    expect(f!.message).toMatch(
      /^EndpointSlice default\/kubernetes of Service default\/kubernetes lists 3 addresses \(10\.20\.0\.11 \(cp-1\), 10\.20\.0\.12 \(cp-2\), 10\.20\.0\.13 \(cp-3\)\)\. Each Talos apiserver adds itself/,
    );
  });

  it('an address that is no known control plane, or not ready, is shown as seen', () => {
    const [f] = findings(
      coexistenceEndpoints.check(
        ctxOf((s) => {
          kubernetesSlice(s).endpoints = [
            { addresses: ['10.20.0.11'], conditions: { ready: true } },
            { addresses: ['10.20.0.99'], conditions: { ready: false } },
          ];
        }),
      ),
    );
    expect(f!.message).toContain('lists 2 addresses (10.20.0.11 (cp-1), 10.20.0.99 (not ready))');
  });

  it('a Service without endpoints says so instead of claiming the kubeadm apiservers', () => {
    const [f] = findings(
      coexistenceEndpoints.check(
        ctxOf((s) => {
          kubernetesSlice(s).endpoints = [];
        }),
      ),
    );
    expect(f!.message).toMatch(
      /^EndpointSlice default\/kubernetes of Service default\/kubernetes lists no endpoints/,
    );
    expect(f!.message).not.toMatch(/kubeadm apiserver/);
    expect(f!.evidence[0]).toMatchObject({ object: { kind: 'EndpointSlice' }, observed: '(none)' });
  });

  it('falls back on the Service when the EndpointSlice is not in the snapshot, and says it could not check', () => {
    const [f] = findings(
      coexistenceEndpoints.check(ctxOf((s) => (s.resources.endpointslices = [] as KubeObject[]))),
    );
    expect(f!.evidence[0]).toMatchObject({
      object: { kind: 'Service', name: 'kubernetes' },
      observed: '10.96.0.1',
    });
    expect(f!.message).toMatch(
      /^Service default\/kubernetes is in the snapshot but no EndpointSlice or Endpoints of it is, so which apiservers it lists could not be checked\./,
    );
    expect(f!.message).not.toMatch(/kubeadm apiserver/);
  });

  it('neither the Service nor its EndpointSlice captured: could not be checked', () => {
    const [f] = findings(
      coexistenceEndpoints.check(
        ctxOf((s) => {
          s.resources.endpointslices = [];
          s.resources.services = s.resources.services.filter(
            (x) => !(x.metadata.namespace === 'default' && x.metadata.name === 'kubernetes'),
          );
        }),
      ),
    );
    expect(f!.message).toMatch(
      /^Neither Service default\/kubernetes nor an EndpointSlice or Endpoints of it is in the snapshot/,
    );
    expect(f!.evidence[0]).toMatchObject({ observed: '(not in the snapshot)' });
  });
});

describe('the example cluster through the engine', () => {
  it('finds the traps of the pki, apiserver and encryption families without rule errors', async () => {
    const { runAudit } = await import('../engine.js');
    const { PKI_RULES } = await import('./pki.js');
    const { APISERVER_RULES } = await import('./apiserver.js');
    const { ENCRYPTION_RULES } = await import('./encryption.js');
    // Judge the PKI as of shortly after it was made, whenever the test runs.
    const ctx = ctxOf((s) => {
      const issued = Date.parse(s.pki!.certificates.find((c) => c.path === 'apiserver.crt')!.notBefore);
      s.manifest.createdAt = new Date(issued + 86_400_000).toISOString();
    });
    const report = runAudit({
      snapshot: ctx.snapshot,
      facts: ctx.facts,
      target: ctx.target,
      rules: [...PKI_RULES, ...APISERVER_RULES, ...ENCRYPTION_RULES],
      now: new Date('2026-12-01T00:00:00Z'),
    });
    expect(report.errors).toEqual([]);
    const fired = new Set(report.findings.map((f) => f.ruleId));
    // README traps 1–6 and 20 (see examples/lab-cluster/README.md).
    for (const id of [
      'apiserver.san-loopback',
      'apiserver.oidc',
      'apiserver.extra-args-carryover',
      'apiserver.sa-issuer',
      'encryption.key-name',
      'apiserver.anonymous-auth-dependents',
      'apiserver.podsecurity-default',
    ])
      expect(fired.has(id), id).toBe(true);
    // "What is deliberately healthy": one self-signed CA per role with its key, a single SA key.
    expect([...fired].filter((id) => id.startsWith('pki.'))).toEqual([]);
    // Fingerprints do not depend on where the snapshot directory sits.
    const loopback = report.findings.find((f) => f.ruleId === 'apiserver.san-loopback')!;
    expect(loopback.subject).toEqual({ kind: 'PkiFile', name: 'apiserver.crt' });
  });
});
