import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../snapshot/model.js';
import { exampleSnapshot } from '../../snapshot/testing-example.js';
import {
  bootstrapObjects,
  corednsConflict,
  corefileCustomisations,
  kubeProxyConflict,
  kubeProxySelector,
  talosProxyMode,
} from './addons.js';
import {
  buildSnapshot,
  configMap,
  contextOf,
  daemonSet,
  deployment,
  findings,
  service,
} from './testing-network.js';

/** kubeadm's default Corefile (cmd/kubeadm/app/phases/addons/dns/manifests.go). */
const KUBEADM_COREFILE = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
`;

const kubeProxy = (selector: Record<string, string>) => daemonSet('kube-system', 'kube-proxy', { selector });
const coredns = (metadata: Record<string, unknown> = {}) =>
  deployment('kube-system', 'coredns', { labels: { 'k8s-app': 'kube-dns' }, metadata });
const dnsObjects = (corefile = KUBEADM_COREFILE) => ({
  deployments: [coredns()],
  configmaps: [configMap('kube-system', 'coredns', { Corefile: corefile })],
});

const ctxWith = (
  resources: { daemonsets?: KubeObject[]; deployments?: KubeObject[]; configmaps?: KubeObject[] },
  opts: { kubeProxy?: Record<string, unknown>; target?: object } = {},
) =>
  contextOf(
    buildSnapshot({ resources, ...(opts.kubeProxy ? { kubeProxy: opts.kubeProxy } : {}) }),
    opts.target ?? {},
  );

describe('addons.kube-proxy-selector', () => {
  it("fires for kubeadm's selector, naming the immutable field", () => {
    const f = findings(
      kubeProxySelector.check(ctxWith({ daemonsets: [kubeProxy({ 'k8s-app': 'kube-proxy' })] })),
    )[0]!;
    expect(f.message).toContain('selects {k8s-app: kube-proxy}');
    expect(f.field).toBe('spec.selector.matchLabels');
    expect(f.evidence[0]).toMatchObject({
      observed: '{k8s-app: kube-proxy}',
      expected: '{k8s-app: kube-proxy, tier: node}',
    });
  });

  it("does not fire for Talos's selector, and does not apply without kube-proxy", () => {
    const ok = kubeProxy({ 'k8s-app': 'kube-proxy', tier: 'node' });
    expect(kubeProxySelector.check(ctxWith({ daemonsets: [ok] }))).toEqual([]);
    expect(kubeProxySelector.check(ctxWith({}))).toMatchObject({ kind: 'not-applicable' });
  });
});

describe('addons.kube-proxy-conflict', () => {
  it('fires when the cluster has no kube-proxy (example cluster, trap 14), target-dependent fix', async () => {
    const lab = await exampleSnapshot();
    const f = findings(kubeProxyConflict.check(contextOf(lab)))[0]!;
    expect(f.message).toContain('Cilium replaces it (kube-proxy-replacement: true)');
    expect(f.remediation).toContain('cluster.proxy.disabled: true');
    const v114 = findings(kubeProxyConflict.check(contextOf(lab, { talosVersion: 'v1.14' })))[0]!;
    expect(v114.remediation).toContain('KubeProxyConfig.enabled: false');
  });

  it('fires when kube-proxy runs in another mode than Talos renders', () => {
    const ds = kubeProxy({ 'k8s-app': 'kube-proxy' });
    const f = findings(
      kubeProxyConflict.check(ctxWith({ daemonsets: [ds] }, { kubeProxy: { mode: 'ipvs' } })),
    )[0]!;
    expect(f.field).toBe('mode');
    expect(f.message).toContain('ipvs mode');
    expect(f.remediation).toContain('cluster.proxy.mode: ipvs');
    // ferry generate does not write the mode: the text must not say it does, and the kit is checked for it.
    expect(f.remediation).not.toContain('ferry generate carries');
    expect(f.remediation).toContain("the kit's talos/controlplane-patch.yaml does not set it");
    expect(f.kitChecks).toEqual([
      {
        kind: 'value',
        file: 'talos/controlplane-patch.yaml',
        path: ['cluster', 'proxy', 'mode'],
        test: { op: 'equals', value: 'ipvs' },
      },
    ]);
  });

  it('does not fire when the modes agree (an empty mode means iptables, Talos renders nftables from 1.31)', () => {
    const ds = kubeProxy({ 'k8s-app': 'kube-proxy' });
    expect(
      kubeProxyConflict.check(ctxWith({ daemonsets: [ds] }, { kubeProxy: { mode: 'nftables' } })),
    ).toEqual([]);
    const old = ctxWith(
      { daemonsets: [ds] },
      { kubeProxy: { mode: '' }, target: { kubernetesVersion: 'v1.30.5', talosVersion: 'v1.10' } },
    );
    expect(kubeProxyConflict.check(old)).toEqual([]);
    expect(talosProxyMode('v1.31.0')).toBe('nftables');
    expect(talosProxyMode('v1.30.9')).toBe('iptables');
  });
});

describe('addons.coredns-conflict', () => {
  it("does not fire for kubeadm's CoreDNS", () => {
    expect(corednsConflict.check(ctxWith(dnsObjects()))).toEqual([]);
  });

  it('fires for a customised Corefile (example cluster, trap 15)', async () => {
    const f = findings(corednsConflict.check(contextOf(await exampleSnapshot())))[0]!;
    expect(f.message).toContain('server block "lab.example:53"');
    expect(f.evidence[0]).toMatchObject({
      object: { kind: 'ConfigMap', name: 'coredns' },
      field: 'data.Corefile',
    });
    expect(f.remediation).toContain('cluster.coreDNS.disabled: true');
  });

  it('fires for DNS served under another name, Helm-managed CoreDNS and NodeLocal DNS', () => {
    const other = deployment('kube-system', 'kube-dns-autoscaled', { labels: { 'k8s-app': 'kube-dns' } });
    const helm = coredns({ annotations: { 'meta.helm.sh/release-name': 'coredns' } });
    const nodeLocal = daemonSet('kube-system', 'node-local-dns');
    const fs = findings(
      corednsConflict.check(
        ctxWith(
          { deployments: [other, helm], daemonsets: [nodeLocal], configmaps: dnsObjects().configmaps },
          { target: { talosVersion: 'v1.14' } },
        ),
      ),
    );
    expect(fs.map((f) => f.field)).toEqual(['other-dns-deployments', 'managed-by', 'node-local-dns']);
    expect(fs[0]!.remediation).toContain('KubeCoreDNSConfig.enabled: false');
  });

  it('fires when the snapshot shows no cluster DNS at all', () => {
    const s = buildSnapshot({ resources: { services: [service('default', 'kubernetes', '10.96.0.1')] } });
    expect(findings(corednsConflict.check(contextOf(s))).map((f) => f.field)).toEqual(['presence']);
  });

  it('reads Corefile customisations', () => {
    expect(corefileCustomisations(KUBEADM_COREFILE)).toEqual([]);
    const custom = KUBEADM_COREFILE.replace(
      '    loop\n',
      '    loop\n    rewrite name foo.example bar.example\n',
    ).replace('forward . /etc/resolv.conf', 'forward . 1.1.1.1');
    expect(corefileCustomisations(custom)).toEqual(['forward . 1.1.1.1 in .:53', 'plugin "rewrite" in .:53']);
    expect(corefileCustomisations(`${KUBEADM_COREFILE}corp.example:53 {\n  forward . 10.0.0.2\n}\n`)).toEqual(
      ['server block "corp.example:53"'],
    );
  });
});

describe('addons.bootstrap-objects', () => {
  it('lists what Talos creates and what it keeps, with the inventory from v1.13', () => {
    const ctx = ctxWith({ daemonsets: [kubeProxy({ 'k8s-app': 'kube-proxy' })], ...dnsObjects() });
    const f = findings(bootstrapObjects.check(ctx))[0]!;
    expect(f.severity).toBeUndefined();
    expect(f.message).toContain('ConfigMap kube-system/talos-bootstrap-manifests-inventory');
    expect(f.message).toContain(
      'adopted into the inventory; talosctl upgrade-k8s re-applies them later: DaemonSet kube-system/kube-proxy, Deployment kube-system/coredns, Service kube-system/kube-dns, ConfigMap kube-system/coredns',
    );
  });

  it('has no inventory before v1.13', () => {
    const f = findings(
      bootstrapObjects.check(ctxWith(dnsObjects(), { target: { talosVersion: 'v1.12' } })),
    )[0]!;
    expect(f.message).not.toContain('talos-bootstrap-manifests-inventory');
    expect(f.message).toContain('no inventory before v1.13');
  });
});
