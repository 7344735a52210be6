import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CATALOG_IDS } from '../knowledge/rule-catalog.js';
import { SIGNATURES } from '../knowledge/signatures.js';
import { explain, matchSignatures, sourcesOf } from './explain.js';

/** A realistic log line per signature, as the component that prints it would. */
const LINES: Record<string, string[]> = {
  'sa-token-audience': [
    'E0814 10:12:03.118 1 authentication.go:73] "Unable to authenticate the request" err="[invalid bearer token, token audiences [\\"https://k8s-api.lab.example:6443\\"] is invalid for the target audiences [\\"https://kubernetes.default.svc.cluster.local\\"]]"',
    'E0814 10:12:04.002 1 authentication.go:73] "Unable to authenticate the request" err="[invalid bearer token, square/go-jose/jwt: validation failed, invalid issuer claim (iss)]"',
  ],
  'sa-invalid-bearer-token': [
    'E0814 10:12:03.118       1 authentication.go:73] "Unable to authenticate the request" err="[invalid bearer token, service account token has been invalidated]"',
  ],
  'encryption-wrong-key': [
    'E0814 10:15:22.401 1 cacher.go:478] cacher (secrets): unexpected ListAndWatch error: failed to list *core.Secret: unable to transform key "/registry/secrets/kube-system/bootstrap-token-abcdef": output array was not large enough for encryption; reinitializing...',
  ],
  'encryption-no-matching-prefix': [
    'W0814 10:15:22.401 1 reflector.go:561] storage/cacher.go:/secrets: failed to list *core.Secret: unable to transform key "/registry/secrets/default/db-creds": no matching prefix found',
  ],
  'encryption-illegal-base64': [
    'E0814 10:16:00.000 1 cacher.go:478] cacher (secrets): unexpected ListAndWatch error: failed to list *core.Secret: illegal base64 data at input byte 3; reinitializing...',
  ],
  'encryption-identity-read-encrypted': [
    'Error from server (InternalError): Internal error occurred: identity transformer tried to read encrypted data',
  ],
  'x509-san-loopback': [
    'E0814 11:02:10.551 2281 reflector.go:158] "Unhandled Error" err="k8s.io/client-go/informers/factory.go:160: Failed to watch *v1.Node: Get \\"https://127.0.0.1:7445/api/v1/nodes?watch=true\\": tls: failed to verify certificate: x509: certificate is valid for 10.96.0.1, 10.20.0.11, 10.20.0.10, not 127.0.0.1"',
  ],
  'x509-san-endpoint': [
    'Unable to connect to the server: tls: failed to verify certificate: x509: certificate is valid for kubernetes, kubernetes.default, kubernetes.default.svc, kubernetes.default.svc.cluster.local, cp-1, not k8s-api.lab.example',
  ],
  'x509-expired': [
    'E0901 08:00:01.000 1 run.go:72] "command failed" err="unable to load client CA provider: x509: certificate has expired or is not yet valid: current time 2026-09-01T08:00:01Z is after 2026-08-30T12:00:00Z"',
  ],
  'x509-unknown-authority': [
    'E0814 12:00:00.000 1 certificate_manager.go:562] kubernetes.io/kube-apiserver-client-kubelet: Failed while requesting a signed certificate from the control plane: cannot create certificate signing request: Post "https://127.0.0.1:7445/apis/certificates.k8s.io/v1/certificatesigningrequests": tls: failed to verify certificate: x509: certificate signed by unknown authority',
  ],
  'pki-unsupported-key-type': [
    'error generating secrets bundle: failed to load CA from "pki": unsupported key type',
  ],
  'pki-bundle-cert-invalid': [
    'failed to validate secrets bundle: 1 error occurred:\n\t* certs.k8s is invalid: failed to parse PEM block',
  ],
  'pki-etcd-ca-missing': ['error: open /home/ops/pki/etcd/ca.key: no such file or directory'],
  'pki-front-proxy-ca-missing': ['error: open /home/ops/pki/front-proxy-ca.key: no such file or directory'],
  'pki-sa-key-missing': ['error: open /home/ops/pki/sa.key: no such file or directory'],
  'pki-ca-key-missing': ['error: open /home/ops/pki/ca.key: no such file or directory'],
  'talos-extra-arg-denied': [
    '10.20.0.31: user: warning: [talos] controller failed {"component": "controller-runtime", "controller": "k8s.ControlPlaneStaticPodController", "error": "error rendering static pod for \\"kube-apiserver\\": extra arg \\"authorization-config\\" is not allowed"}',
  ],
  'podsecurity-baseline': [
    'Error creating: pods "csi-node-7xk2p" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true), hostPath volumes (volumes "socket-dir", "cacert"), privileged (container "node-driver" must not set securityContext.privileged=true)',
  ],
  'tls13-client': [
    'I0814 13:00:00.000 1 log.go:245] http: TLS handshake error from 10.20.0.5:51234: tls: client offered only unsupported versions: [303 302 301]',
  ],
  'lb-healthcheck-401': [
    'Aug 14 13:05:01 lb-1 haproxy[812]: [WARNING]  (812) : Health check for server k8s-api/cp-4 failed, reason: Layer7 wrong status, code: 401, info: "Unauthorized", check duration: 3ms, status: 2/3 UP.',
  ],
  'etcd-learner-not-in-sync': [
    '10.20.0.31: user: warning: [talos] etcd: promoting member failed {"error": "etcdserver: can only promote a learner member which is in sync with leader"}',
  ],
  'etcd-unhealthy-cluster': [
    '{"level":"warn","ts":"2026-08-14T10:00:00.000Z","caller":"etcdserver/server.go:1540","msg":"rejecting member add request; local member has not been connected to all peers, reconfigure breaks active quorum","error":"etcdserver: unhealthy cluster"}',
  ],
  'etcd-not-enough-started-members': [
    'Error: etcdserver: re-configuration failed due to not enough started members',
  ],
  'etcd-too-many-learners-upgrade': [
    '{"level":"panic","ts":"2026-08-14T10:00:00Z","caller":"membership/cluster.go:290","msg":"failed to validate configuration","error":"membership: too many learner members in cluster"}',
  ],
  'etcd-too-many-learners': ['Error: etcdserver: too many learner members in cluster'],
  'etcd-cluster-version-too-high': [
    '{"level":"fatal","ts":"2026-08-14T10:00:00Z","caller":"etcdmain/etcd.go:204","msg":"discovery failed","error":"the running cluster version(3.5.0) is higher than the maximum cluster version(3.4.0) supported"}',
  ],
  'etcd-member-removed': [
    '{"level":"warn","ts":"2026-08-14T10:00:00Z","caller":"rafthttp/http.go:500","msg":"request sent was ignored by remote peer due to cluster ID mismatch","error":"the member has been permanently removed from the cluster"}',
  ],
  'etcd-v2-flag-removed': ['flag provided but not defined: -enable-v2'],
  'etcd-not-leader': ['Error: rpc error: code = FailedPrecondition desc = etcdserver: not leader'],
  'etcd-server-stopped': ['Error: etcdserver: server stopped'],
  'etcd-tocommit-out-of-range': [
    '{"level":"panic","ts":"2026-08-14T10:00:00Z","logger":"raft","caller":"raft/log.go:203","msg":"tocommit(3151) is out of range [lastIndex(0)]. Was the raft log corrupted, truncated, or lost?"}',
  ],
  'etcd-rpc-not-supported-for-learner': [
    'Error: rpc error: code = Unavailable desc = etcdserver: rpc not supported for learner',
  ],
  'etcd-leader-changed': [
    'E0814 10:00:00.000 1 status.go:71] apiserver received an error that is not an metav1.Status: rpctypes.EtcdError{code:0xe, desc:"etcdserver: leader changed"}: etcdserver: leader changed',
  ],
  'talos-etcd-waiting-to-join': [
    '10.20.0.31: user: warning: [talos] etcd is waiting to join the cluster, if this node is the first node in the cluster, please run `talosctl bootstrap` against one of the following IPs:',
  ],
  'talos-bootstrap-second-cluster': [
    '10.20.0.31: user: warning: [talos] bootstrap request received {"component": "etcd"} Current instance of etcd (not joined yet) is stopped, and new instance is started in bootstrap mode',
  ],
  'kube-proxy-selector-immutable': [
    'error applying manifests: error updating object "kube-system/kube-proxy": DaemonSet.apps "kube-proxy" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"k8s-app":"kube-proxy"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
  ],
  'selector-immutable': [
    'error updating object "kube-system/coredns": Deployment.apps "coredns" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"k8s-app":"kube-dns"}}: field is immutable',
  ],
  'kube-dns-clusterip-immutable': [
    'error updating object "kube-system/kube-dns": Service "kube-dns" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.0.10"}: may not change once set',
  ],
  'talos-health-unexpected-nodes': [
    'waiting for all k8s nodes to report: unexpected nodes with IPs ["10.20.0.11" "10.20.0.12"]',
  ],
  'talos-discovery-unreachable': [
    '10.20.0.31: user: warning: [talos] discovery service error {"error": "rpc error: code = Unavailable desc = connection error: desc = \\"transport: Error while dialing: dial tcp: lookup discovery.talos.dev: i/o timeout\\""}',
  ],
  'bootstrap-token-expired': [
    'I0814 10:00:00.000 1 bootstrap.go:127] Bootstrap secret kube-system/bootstrap-token-abcdef has expired',
  ],
  'bootstrap-csr-forbidden': [
    'E0814 10:00:00.000 2281 certificate_manager.go:562] certificatesigningrequests.certificates.k8s.io is forbidden: User "system:bootstrap:abcdef" cannot create resource "certificatesigningrequests" in API group "certificates.k8s.io" at the cluster scope',
  ],
  'pdb-eviction-refused': [
    'error when evicting pods/"web-6b8f9-2kq8x" -n "shop" (will retry after 5s): Cannot evict pod as it would violate the pod\'s disruption budget.',
    'The disruption budget web needs 2 healthy pods and has 2 currently',
  ],
  'hostpath-read-only-root': [
    'Warning  FailedMount  12s  kubelet  MountVolume.SetUp failed for volume "config" : mkdir /etc/hpe-storage: read-only file system',
  ],
  'hostpath-type-check': [
    'Warning  FailedMount  3s  kubelet  MountVolume.SetUp failed for volume "cacert" : hostPath type check failed: /etc/cacert is not a directory',
    'Cannot connect to the Docker daemon: dial unix /var/run/docker.sock: connect: no such file or directory',
  ],
  'flexvolume-dir': [
    'E0814 10:00:00.000 2281 plugins.go:748] "Error dynamically probing plugins" err="error creating Flexvolume plugin from directory /usr/libexec/kubernetes/kubelet-plugins/volume/exec/: read-only file system"',
  ],
  'kernel-module-load': [
    'modprobe: FATAL: Module wireguard not found in directory /lib/modules/6.12.40-talos',
  ],
  'host-binary-missing': ['nsenter: failed to execute iscsiadm: No such file or directory'],
  'capi-providerid-wait': ['Waiting for a Node with spec.providerID proxmox://4c4c4544-0033-4b10 to exist'],
  'capi-skip-node-drain': [
    'Could not find Node "cp-4" from Machine MachineSet lab/cp-4, skipping Node drain',
  ],
  'capi-etcd-member-count': [
    'failed to reconcile: etcd cluster is not healthy: expected to have 4 members, got 3',
  ],
  'capi-provider-not-in-target': ['Error: provider infrastructure-proxmox not found in the target cluster'],
};

describe('error signatures', () => {
  it('every signature has a realistic line, and every line finds its signature first', () => {
    expect(Object.keys(LINES).sort()).toEqual(SIGNATURES.map((s) => s.id).sort());
    for (const [id, lines] of Object.entries(LINES)) {
      for (const line of lines) {
        const ids = matchSignatures(line).map((s) => s.id);
        expect(ids[0], line).toBe(id);
      }
    }
  });

  it('cite rule ids that exist in the catalog', () => {
    for (const s of SIGNATURES) {
      for (const id of [s.ruleId, ...(s.related ?? [])])
        if (id !== null) expect(CATALOG_IDS.has(id), `${s.id} → ${id}`).toBe(true);
      expect(s.cause.length > 20 && s.fix.length > 20, s.id).toBe(true);
    }
    expect(new Set(SIGNATURES.map((s) => s.id)).size).toBe(SIGNATURES.length);
  });

  it('point users at sections of docs/rules.md that exist, and at public upstream threads', () => {
    const doc = readFileSync(fileURLToPath(new URL('../../docs/rules.md', import.meta.url)), 'utf8');
    const anchors = new Set([...doc.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!));
    for (const s of SIGNATURES) {
      const [docs, ...upstream] = sourcesOf(s);
      expect(docs, s.id).toBe(`docs/rules.md#${s.ruleId ?? s.id}`);
      expect(anchors.has(docs!.slice('docs/rules.md#'.length)), `${s.id}: ${docs}`).toBe(true);
      for (const u of upstream) expect(u, s.id).toMatch(/^[\w.-]+\/[\w.-]+#\d+$/);
    }
    // An error no rule predicts has its own section.
    const own = SIGNATURES.find((s) => s.ruleId === null)!;
    expect(sourcesOf(own)[0]).toBe(`docs/rules.md#${own.id}`);
  });

  it('prefers the specific explanation within a group', () => {
    expect(matchSignatures(LINES['x509-san-loopback']![0]!).map((s) => s.id)).toEqual(['x509-san-loopback']);
    expect(matchSignatures(LINES['kube-proxy-selector-immutable']![0]!).map((s) => s.id)).toEqual([
      'kube-proxy-selector-immutable',
    ]);
    expect(matchSignatures(LINES['pki-etcd-ca-missing']![0]!).map((s) => s.id)).toEqual([
      'pki-etcd-ca-missing',
    ]);
    expect(matchSignatures(LINES['sa-token-audience']![0]!).map((s) => s.id)).toEqual(['sa-token-audience']);
    // The upgrade bug and the leftover-learner error are different explanations.
    expect(matchSignatures(LINES['etcd-too-many-learners']![0]!).map((s) => s.id)).toEqual([
      'etcd-too-many-learners',
    ]);
  });

  it('says nothing about text it does not know', () => {
    expect(
      matchSignatures('E0814 10:00:00 1 controller.go:1 "Reconciler error" err="context canceled"'),
    ).toEqual([]);
    expect(explain('all good').signatures).toEqual([]);
  });
});

describe('explain', () => {
  it('reports matching lines of a log with their numbers', () => {
    const log = [
      'starting',
      LINES['x509-san-loopback']![0],
      'noise',
      '',
      LINES['pdb-eviction-refused']![0],
      LINES['x509-san-loopback']![0],
    ].join('\n');
    const r = explain(log);
    expect(r.lines.map((l) => [l.line, l.signatures.map((s) => s.id)])).toEqual([
      [2, ['x509-san-loopback']],
      [5, ['pdb-eviction-refused']],
      [6, ['x509-san-loopback']],
    ]);
    expect(r.signatures.map((s) => s.ruleId)).toEqual(['apiserver.san-loopback', 'workload.pdb-blocking']);
  });

  it('matches pasted text wrapped over several lines when asked to fold', () => {
    const wrapped =
      'unable to transform key "/registry/secrets/a/b": output array was not large\nenough for encryption';
    expect(explain(wrapped).signatures).toEqual([]);
    expect(explain(wrapped, { foldLines: true }).signatures.map((s) => s.id)).toEqual([
      'encryption-wrong-key',
    ]);
  });
});
