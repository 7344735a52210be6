import { describe, expect, it } from 'vitest';
import type { KitPrepStep } from '../generate/kubeadm-prep/step.js';
import { describeCheck, type KitCheck, kitChecker, settingPath, settingText } from './kit-checks.js';
import { memoryKit } from './testing.js';

const LEGACY = `version: v1alpha1
cluster:
  proxy:
    disabled: true
  network:
    cni: {name: none}
  apiServer:
    certSANs: [k8s-api.lab.example, 10.20.0.10]
    extraArgs:
      api-audiences: https://a.example,https://b.example
      service-account-issuer: [https://a.example, https://b.example]
    admissionControl:
      - name: PodSecurity
        configuration: {defaults: {enforce: privileged}}
machine:
  kubelet:
    extraConfig:
      maxPods: 150
      evictionHard: {memory.available: 300Mi}
`;

const MULTIDOC = `version: v1alpha1
cluster: {etcd: {image: etcd:v3.5.16}}
---
apiVersion: v1alpha1
kind: KubeProxyConfig
enabled: false
---
apiVersion: v1alpha1
kind: KubeAdmissionControlConfig
name: EventRateLimit
configuration: {defaults: {enforce: restricted}}
---
apiVersion: v1alpha1
kind: KubeAdmissionControlConfig
name: PodSecurity
configuration: {defaults: {enforce: privileged}}
`;

const STEP: KitPrepStep = {
  id: '20-sa-issuer',
  title: 'issuer',
  scope: 'each-control-plane',
  nodes: ['cp-1'],
  after: [],
  apply: 'sh kubeadm/20-sa-issuer.sh apply NODE',
  verify: 'sh kubeadm/20-sa-issuer.sh verify NODE',
  undo: 'sh kubeadm/20-sa-issuer.sh undo NODE',
  why: '',
};

const kit = memoryKit;

const value = (
  file: string,
  path: string[],
  test: Extract<KitCheck, { kind: 'value' }>['test'],
  doc?: string,
) => ({ kind: 'value', file, path, test, ...(doc ? { doc } : {}) }) as KitCheck;

describe('kitChecker', () => {
  const check = kitChecker(
    kit(
      { 'cp.yaml': LEGACY, 'v14.yaml': MULTIDOC, 'kubeadm/20-sa-issuer.sh': "ISSUER='https://a.example'" },
      [STEP],
    ),
  );

  it('equals: scalars, and maps and lists as data; numbers match their YAML strings', () => {
    expect(check(value('cp.yaml', ['cluster', 'proxy', 'disabled'], { op: 'equals', value: true })).ok).toBe(
      true,
    );
    expect(check(value('cp.yaml', ['cluster', 'proxy', 'disabled'], { op: 'equals', value: false }))).toEqual(
      {
        ok: false,
        why: 'cp.yaml has cluster.proxy.disabled: true',
      },
    );
    expect(
      check(
        value('cp.yaml', ['machine', 'kubelet', 'extraConfig', 'evictionHard'], {
          op: 'equals',
          value: { 'memory.available': '300Mi' },
        }),
      ).ok,
    ).toBe(true);
    expect(
      check(
        value('cp.yaml', ['machine', 'kubelet', 'extraConfig', 'maxPods'], { op: 'equals', value: '150' }),
      ).ok,
    ).toBe(true);
    expect(
      check(value('cp.yaml', ['machine', 'kubelet', 'extraConfig', 'maxPods'], { op: 'equals', value: 110 }))
        .ok,
    ).toBe(false);
  });

  it('includes and excludes: lists, and the comma-separated strings Talos extraArgs use', () => {
    const sans = ['cluster', 'apiServer', 'certSANs'];
    expect(check(value('cp.yaml', sans, { op: 'includes', values: ['10.20.0.10'] })).ok).toBe(true);
    expect(check(value('cp.yaml', sans, { op: 'includes', values: ['10.20.0.10', '127.0.0.1'] })).ok).toBe(
      false,
    );
    expect(check(value('cp.yaml', sans, { op: 'excludes', values: ['127.0.0.1'] })).ok).toBe(true);
    const aud = ['cluster', 'apiServer', 'extraArgs', 'api-audiences'];
    expect(
      check(value('cp.yaml', aud, { op: 'includes', values: ['https://b.example', 'https://a.example'] })).ok,
    ).toBe(true);
    // An index picks a list item: the first issuer signs.
    const first = ['cluster', 'apiServer', 'extraArgs', 'service-account-issuer', '0'];
    expect(check(value('cp.yaml', first, { op: 'equals', value: 'https://a.example' })).ok).toBe(true);
    expect(check(value('cp.yaml', first, { op: 'equals', value: 'https://b.example' })).ok).toBe(false);
  });

  it('a key=value segment picks the list item, absent means not set', () => {
    const enforce = [
      'cluster',
      'apiServer',
      'admissionControl',
      'name=PodSecurity',
      'configuration',
      'defaults',
      'enforce',
    ];
    expect(check(value('cp.yaml', enforce, { op: 'equals', value: 'privileged' })).ok).toBe(true);
    expect(check(value('cp.yaml', ['cluster', 'coreDNS', 'disabled'], { op: 'absent' })).ok).toBe(true);
    expect(
      check(value('cp.yaml', ['cluster', 'coreDNS', 'disabled'], { op: 'equals', value: true })),
    ).toEqual({
      ok: false,
      why: 'cp.yaml has cluster.coreDNS.disabled: (not set)',
    });
  });

  it('picks v1.14 documents by kind, and by name among documents of one kind', () => {
    expect(check(value('v14.yaml', ['enabled'], { op: 'equals', value: false }, 'KubeProxyConfig')).ok).toBe(
      true,
    );
    // Without `doc`: the v1alpha1 document, whose kind is none.
    expect(check(value('v14.yaml', ['enabled'], { op: 'absent' })).ok).toBe(true);
    expect(
      check(value('v14.yaml', ['enabled'], { op: 'equals', value: false }, 'KubeCoreDNSConfig')),
    ).toEqual({
      ok: false,
      why: 'v14.yaml (KubeCoreDNSConfig): no such document',
    });
    const enforce = ['configuration', 'defaults', 'enforce'];
    const first = {
      kind: 'value',
      file: 'v14.yaml',
      doc: 'KubeAdmissionControlConfig',
      path: enforce,
    } as const;
    expect(check({ ...first, test: { op: 'equals', value: 'restricted' } }).ok).toBe(true);
    expect(check({ ...first, docName: 'PodSecurity', test: { op: 'equals', value: 'privileged' } }).ok).toBe(
      true,
    );
    expect(check({ ...first, docName: 'PodSecurity', test: { op: 'equals', value: 'restricted' } }).ok).toBe(
      false,
    );
  });

  it('a step must be in steps.json and its script name what is asked', () => {
    expect(
      check({ kind: 'step', script: 'kubeadm/20-sa-issuer.sh', mentions: ['https://a.example'] }).ok,
    ).toBe(true);
    expect(
      check({ kind: 'step', script: 'kubeadm/20-sa-issuer.sh', mentions: ['https://c.example'] }),
    ).toEqual({
      ok: false,
      why: 'kubeadm/20-sa-issuer.sh does not name https://c.example',
    });
    expect(check({ kind: 'step', script: 'kubeadm/10-apiserver-sans.sh', mentions: [] })).toEqual({
      ok: false,
      why: 'kubeadm/steps.json has no step running kubeadm/10-apiserver-sans.sh',
    });
    // Listed but not a step: the script alone does nothing.
    const noStep = kitChecker(kit({ 'kubeadm/20-sa-issuer.sh': 'x' }));
    expect(noStep({ kind: 'step', script: 'kubeadm/20-sa-issuer.sh', mentions: [] }).ok).toBe(false);
  });

  it('a secret file counts when listed and is never read; a missing or broken file fails', () => {
    const k = kitChecker(kit({ 'kubeadm/encryption/phase2.yaml': { secret: true }, 'bad.yaml': 'a: [' }));
    expect(k({ kind: 'file', file: 'kubeadm/encryption/phase2.yaml', mentions: ['anything'] }).ok).toBe(true);
    expect(k(value('kubeadm/encryption/phase2.yaml', ['kind'], { op: 'absent' }))).toEqual({
      ok: false,
      why: 'kubeadm/encryption/phase2.yaml is secret (not read)',
    });
    expect(k({ kind: 'file', file: 'cilium/agents.sh', mentions: [] })).toEqual({
      ok: false,
      why: 'the kit has no cilium/agents.sh',
    });
    const broken = k(value('bad.yaml', ['a'], { op: 'absent' }));
    expect(broken.ok).toBe(false);
    expect(!broken.ok && broken.why).toMatch(/^bad\.yaml is not valid YAML/);
  });
});

describe('how checks read', () => {
  it('as remediations name settings, and as resolutions say what the kit does', () => {
    expect(settingText({ path: ['cluster', 'proxy', 'disabled'] }, { op: 'equals', value: true })).toBe(
      'cluster.proxy.disabled: true',
    );
    expect(settingText({ doc: 'KubeProxyConfig', path: ['enabled'] }, { op: 'equals', value: false })).toBe(
      'KubeProxyConfig.enabled: false',
    );
    expect(
      settingPath({
        path: ['cluster', 'apiServer', 'admissionControl', 'name=PodSecurity', 'configuration'],
      }),
    ).toBe('cluster.apiServer.admissionControl[name=PodSecurity].configuration');
    expect(
      settingPath({ doc: 'KubeAdmissionControlConfig', docName: 'PodSecurity', path: ['configuration'] }),
    ).toBe('KubeAdmissionControlConfig(PodSecurity).configuration');
    expect(
      describeCheck(value('cp.yaml', ['cluster', 'certSANs'], { op: 'includes', values: ['a', 'b'] })),
    ).toBe('cp.yaml sets cluster.certSANs listing a, b');
    expect(describeCheck({ kind: 'step', script: 'kubeadm/20-sa-issuer.sh', mentions: ['https://a'] })).toBe(
      'kubeadm/steps.json runs kubeadm/20-sa-issuer.sh (https://a)',
    );
  });
});
