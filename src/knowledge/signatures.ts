/**
 * Error signatures for `ferry explain`: text seen during a kubeadm → Talos migration, mapped to the
 * audit rule that predicts it (the catalog, docs/knowledge/blockers.md), the cause and the fix.
 * Users are pointed at docs/rules.md and public upstream threads; a comment in an entry names the
 * notes in docs/knowledge/ behind it, for maintainers. Order matters: more specific signatures
 * first; within a `group` only the first match per line is reported (e.g. the loopback SAN case
 * hides the generic SAN case).
 */

export interface ErrorSignature {
  /** Stable id of the signature itself. */
  id: string;
  /** Any of these matching means the signature applies. Case-insensitive where it helps. */
  patterns: RegExp[];
  /**
   * The audit rule that predicts this error; null for an operational error no rule predicts (its
   * section of docs/rules.md is then named after the signature's id).
   */
  ruleId: string | null;
  /** Other rules worth reading. */
  related?: string[];
  /** Signatures of one group are alternatives: the first match per line wins. */
  group?: string;
  title: string;
  cause: string;
  fix: string;
  /** Public upstream threads a user can read, as `owner/repo#N`. */
  upstream?: string[];
}

export const SIGNATURES: readonly ErrorSignature[] = [
  // ---- service-account tokens ------------------------------------------------------------
  {
    id: 'sa-token-audience',
    patterns: [/token audiences .* is invalid for the target audiences/i, /invalid issuer claim/i],
    ruleId: 'apiserver.sa-issuer',
    group: 'sa-token',
    title: 'Service-account token issuer/audience not accepted',
    cause:
      "Talos apiservers set --service-account-issuer and --api-audiences to the cluster endpoint URL; kubeadm's issuer is usually https://kubernetes.default.svc.<domain>. Tokens minted by one side are rejected by the other.",
    fix: 'Before the first Talos control plane: prepend the Talos endpoint URL as the first --service-account-issuer on every kubeadm apiserver (keep the old one), align --api-audiences, restart one at a time; on Talos accept both issuers (v1.13 extraArgs lists, v1.14 KubeServiceAccountConfig.accepted). Recreate pods after the switch.',
    // docs/knowledge/talos.md §10.1
  },
  {
    id: 'sa-invalid-bearer-token',
    patterns: [/invalid bearer token/i],
    ruleId: 'apiserver.sa-issuer',
    related: ['encryption.key-name', 'bootstrap.token-ttl'],
    group: 'sa-token',
    title: 'invalid bearer token (401)',
    cause:
      'A token signed or scoped by one set of apiservers is rejected by another: most often the service-account issuer/audiences differ between kubeadm and Talos apiservers (Cilium is usually first to fail). Bootstrap tokens unreadable because of an encryption key-name mismatch show the same 401.',
    fix: 'Make the issuer and audiences match on both sides (ferry generate writes the kubeadm-side and Talos-side patches together), then recreate the pods holding old tokens. If the 401s are for bootstrap tokens, check the encryption key names.',
    upstream: ['siderolabs/talos#9029'],
  },

  // ---- encryption at rest -----------------------------------------------------------------
  {
    id: 'encryption-wrong-key',
    patterns: [/output array was not large enough for encryption/i],
    ruleId: 'encryption.key-name',
    title: 'Secret decrypted with the wrong key',
    cause:
      'The apiserver found a key with the name stored in the value prefix (k8s:enc:<provider>:v1:<name>:) but it is a different key: Talos ≤v1.13 names its keys key2 (secretbox) and key1 (aescbc), so a kubeadm key with the same name but other bytes, or a freshly generated Talos key, cannot decrypt existing Secrets.',
    fix: "Put kubeadm's exact key into the Talos secrets bundle under Talos's key name, after a two-phase rotation on the kubeadm side to that name (add as read key, make it the write key, rewrite all Secrets); on v1.14 copy kubeadm's EncryptionConfiguration verbatim into KubeEtcdEncryptionConfig.",
    // docs/knowledge/talos.md §4.6
  },
  {
    id: 'encryption-no-matching-prefix',
    patterns: [/no matching prefix found/i],
    ruleId: 'encryption.key-name',
    title: 'No key for the stored encryption prefix',
    cause:
      "The stored value's prefix names a provider/key this apiserver does not have: Talos apiservers have only key2/key1, kubeadm keys usually have other names.",
    fix: 'Rotate the kubeadm encryption key to the name Talos uses (two phases, then rewrite all Secrets) and put the same key in the bundle; or, on v1.14, use the kubeadm configuration verbatim.',
    upstream: ['siderolabs/talos#7475', 'siderolabs/talos#7506'],
  },
  {
    id: 'encryption-illegal-base64',
    patterns: [/failed to list \*core\.Secret: illegal base64 data/i, /illegal base64 data at input byte/i],
    ruleId: 'encryption.key-name',
    title: 'Secrets unreadable (illegal base64 data)',
    cause:
      'Secrets were written with an encryption configuration this apiserver cannot read (key name or provider mismatch between kubeadm and Talos).',
    fix: 'Align the encryption provider and key name on both sides before the first Talos control plane (see encryption.key-name).',
  },
  {
    id: 'encryption-identity-read-encrypted',
    patterns: [/identity transformer tried to read encrypted data/i],
    ruleId: 'encryption.absent',
    related: ['encryption.key-name'],
    title: 'Plaintext-only apiserver read an encrypted Secret',
    cause:
      'An apiserver without the encrypting key (kubeadm without --encryption-provider-config, or Talos without the kubeadm key) read a value another apiserver encrypted: Talos enables secretbox by default while kubeadm writes plaintext.',
    fix: 'During coexistence use one encryption configuration everywhere: with no kubeadm encryption, remove cluster.secretboxEncryptionSecret (v1.13) or the KubeEtcdEncryptionConfig document (v1.14) from the Talos config; enable encryption after the migration.',
    // docs/knowledge/talos.md §10.2
  },

  // ---- certificates --------------------------------------------------------------------------
  {
    id: 'x509-san-loopback',
    patterns: [/x509: certificate is valid for .*, not (?:127\.0\.0\.1|localhost)\b/i],
    ruleId: 'apiserver.san-loopback',
    group: 'x509-san',
    title: 'kubeadm apiserver certificate lacks 127.0.0.1 (KubePrism)',
    cause:
      "Talos nodes reach every apiserver through KubePrism on 127.0.0.1:7445, so each upstream apiserver certificate needs 127.0.0.1 and localhost as SANs; kubeadm's default SANs omit loopback. machine.certSANs on Talos does not help.",
    fix: 'Re-issue the kubeadm apiserver certificates with 127.0.0.1 and localhost in certSANs (one control plane at a time), or disable KubePrism during coexistence, or on v1.14 set KubePrismConfig.tlsServerName.',
    upstream: ['siderolabs/talos#11105', 'siderolabs/talos#8254'],
  },
  {
    id: 'x509-san-endpoint',
    patterns: [/x509: certificate is valid for .*, not \S+/i],
    ruleId: 'apiserver.san-endpoint',
    group: 'x509-san',
    title: 'Apiserver certificate does not cover the name dialled',
    cause:
      'Clients switch between kubeadm and Talos apiservers behind the same endpoint; every apiserver certificate on both sides must carry the endpoint host (VIP/DNS) and the kubernetes Service IP.',
    fix: 'Add the endpoint host and the kubernetes Service IP to the kubeadm certSANs and re-issue; on Talos set certSANs (v1.13) or certExtraSANs (v1.14).',
  },
  {
    id: 'x509-expired',
    patterns: [/x509: certificate has expired or is not yet valid/i],
    ruleId: 'pki.leaf-expiry',
    related: ['pki.ca-invalid'],
    title: 'Certificate expired',
    cause:
      'A kubeadm leaf (or CA) certificate expired while kubeadm nodes still had to stay healthy during the migration.',
    fix: 'Renew with `kubeadm certs renew` on each kubeadm control plane (restart the static pods); a CA that expires needs rotation before the migration.',
  },
  {
    id: 'x509-unknown-authority',
    patterns: [/x509: certificate signed by unknown authority/i],
    ruleId: 'pki.ca-bundle-multiple',
    related: ['capi.secrets-not-precreated', 'pki.cert-key-mismatch', 'pki.intermediate-ca'],
    title: 'Certificate signed by a CA the peer does not trust',
    cause:
      "The Talos secrets bundle does not hold kubeadm's CA: only the first certificate of a multi-CA ca.crt is imported, a CA key that does not match its certificate signs unverifiable leaves, or (Cluster API) CABPT generated a new bundle because <cluster>-talos was not pre-created.",
    fix: "Build the bundle from kubeadm's ca/etcd/front-proxy CAs and sa.key (ferry generate checks pairs and CA flags); finish any CA rotation or add extra CAs as acceptedCAs; in CAPI mode pre-create <cluster>-talos and <cluster>-ca.",
    // docs/knowledge/capi.md H6
  },
  {
    id: 'pki-unsupported-key-type',
    patterns: [/unsupported key type/i],
    ruleId: 'pki.key-type-unsupported',
    title: 'Talos cannot read a kubeadm private key',
    cause:
      'Talos accepts RSA PRIVATE KEY, EC PRIVATE KEY, ED25519 PRIVATE KEY or PKCS#8 PRIVATE KEY PEM blocks; an encrypted key (ENCRYPTED PRIVATE KEY) or another label is refused.',
    fix: 'Decrypt/convert the key to PKCS#8 (`openssl pkcs8 -topk8 -nocrypt`) before building the bundle.',
    // docs/knowledge/talos.md §2
  },
  {
    id: 'pki-bundle-cert-invalid',
    patterns: [/certs\.(?:k8s|etcd|k8saggregator|k8sserviceaccount|os) is invalid/i],
    ruleId: 'pki.key-type-unsupported',
    related: ['pki.cert-key-mismatch'],
    title: 'Talos secrets bundle certificate or key does not parse',
    cause:
      "Talos's bundle validation only parses each certificate and key; this one is not valid PEM/base64 of PEM, or has an unsupported key type.",
    fix: 'Rebuild the bundle from the kubeadm PKI (values are base64 of the whole PEM text); convert keys to a supported type.',
    // docs/knowledge/talos.md §1 (Validate)
  },
  {
    id: 'pki-etcd-ca-missing',
    patterns: [/open \S*etcd\/ca\.(?:key|crt): no such file or directory/i],
    ruleId: 'pki.etcd-ca-missing',
    group: 'pki-enoent',
    title: 'etcd CA missing from the PKI directory',
    cause:
      'Talos imports etcd/ca.crt and etcd/ca.key; without the etcd CA key Talos etcd cannot peer with the kubeadm members (external etcd setups often lack it).',
    fix: 'Copy /etc/kubernetes/pki/etcd/ca.{crt,key} from a kubeadm control plane; external etcd is unsupported (etcd.external).',
    // docs/knowledge/talos.md §2
  },
  {
    id: 'pki-front-proxy-ca-missing',
    patterns: [/open \S*front-proxy-ca\.(?:key|crt): no such file or directory/i],
    ruleId: 'pki.front-proxy-ca-missing',
    group: 'pki-enoent',
    title: 'front-proxy CA missing from the PKI directory',
    cause:
      'Talos imports front-proxy-ca.{crt,key} as the aggregator CA; the import stops at the first missing file.',
    fix: 'Copy /etc/kubernetes/pki/front-proxy-ca.{crt,key} from a kubeadm control plane.',
    // docs/knowledge/talos.md §2
  },
  {
    id: 'pki-sa-key-missing',
    patterns: [/open \S*\bsa\.key: no such file or directory/i],
    ruleId: 'pki.sa-key-missing',
    group: 'pki-enoent',
    title: 'Service-account key missing from the PKI directory',
    cause:
      'Talos needs sa.key (it derives the public key itself); without it service-account tokens stop verifying.',
    fix: 'Copy /etc/kubernetes/pki/sa.key from a kubeadm control plane.',
    // docs/knowledge/talos.md §2
  },
  {
    id: 'pki-ca-key-missing',
    patterns: [/open (?:\S*\/)?ca\.(?:key|crt): no such file or directory/i],
    ruleId: 'pki.ca-key-missing',
    group: 'pki-enoent',
    title: 'Cluster CA missing from the PKI directory',
    cause: 'Talos re-issues every leaf from ca.key; kubeadm "external CA" mode has no ca.key on the nodes.',
    fix: 'Supply ca.key (from wherever the external CA lives); without it the migration cannot keep the cluster CA.',
    // docs/knowledge/talos.md §2
  },

  // ---- kube-apiserver ----------------------------------------------------------------------
  {
    id: 'talos-extra-arg-denied',
    patterns: [/extra arg "?[\w.-]+"? is not allowed/i],
    ruleId: 'apiserver.extra-arg-denied',
    title: 'Talos refused a carried-over flag',
    cause:
      'Talos renders some control-plane flags itself and denies them in extraArgs (e.g. etcd-servers, authorization-config, tls-min-version on v1.14, cluster-signing-*, root-ca-file). talosctl validate does not catch it; the error appears at render time.',
    fix: 'Drop the flag or express it with the Talos document that owns it (e.g. v1.14 KubeAuthorizerConfig instead of authorization-config); if its meaning cannot be kept, the setup is unsupported.',
    // docs/knowledge/talos.md §4.1
  },
  {
    id: 'podsecurity-baseline',
    patterns: [/violates PodSecurity "baseline(?::[\w.]+)?"/i],
    ruleId: 'apiserver.podsecurity-default',
    title: 'Pod rejected by Talos PodSecurity defaults',
    cause:
      'Talos-generated configs enforce PodSecurity "baseline" cluster-wide (only kube-system exempt); once a Talos apiserver admits pod creations (a Talos KCM leads, or the LB routes there) privileged pods are refused.',
    fix: "Replicate kubeadm's admission configuration on Talos (v1.13 cluster.apiServer.admissionControl, v1.14 KubeAdmissionControlConfig), e.g. enforce privileged, or label the namespaces that need it.",
  },
  {
    id: 'tls13-client',
    patterns: [
      /tls: client offered only unsupported versions/i,
      /tls: (?:protocol version not supported|no supported versions satisfy MinVersion and MaxVersion)/i,
    ],
    ruleId: 'apiserver.tls13-clients',
    title: 'TLS 1.2-only client refused',
    cause:
      'Talos v1.14 apiservers and etcd, and kubelet/KCM/scheduler on all recent Talos releases, require TLS 1.3; old load-balancer health checks, client libraries and scrapers fail the handshake.',
    fix: 'Upgrade the client (or its TLS settings) to TLS 1.3; for the apiserver on v1.14 this is not overridable.',
    // docs/knowledge/talos.md §4.1
  },
  {
    id: 'lb-healthcheck-401',
    patterns: [/Layer7 wrong status, code: 401/i, /health ?check.*\b401\b.*unauthorized/i],
    ruleId: 'apiserver.anonymous-auth-dependents',
    title: 'Load balancer health check gets 401 from Talos apiservers',
    cause:
      'Talos ≤v1.13 runs kube-apiserver with --anonymous-auth=false, so unauthenticated HTTP checks of /healthz, /readyz or /livez get 401 and the LB marks Talos backends down.',
    fix: 'Switch the LB check to TCP (or authenticated HTTPS); or on ≤v1.13 set extraArgs anonymous-auth: "true"; v1.14 allows anonymous access to the health paths with its generated KubeAuthenticationConfig.',
  },

  // ---- etcd ----------------------------------------------------------------------------------
  {
    id: 'etcd-learner-not-in-sync',
    patterns: [/can only promote a learner member which is in sync with leader/i],
    ruleId: 'etcd.db-size',
    related: ['network.port-reachability', 'etcd.unhealthy'],
    title: 'etcd learner not caught up yet',
    cause:
      "A learner can be promoted only once its log is close to the leader's; right after start (or with a large database or slow peer link) it is not. Talos retries its self-promotion for 10 minutes.",
    fix: 'Retry with backoff; if it never succeeds, check peer connectivity on 2380 in both directions and the database size (learner catch-up time), and that the learner process is running.',
    // docs/knowledge/etcd.md §2; docs/knowledge/test-infra.md etcd pitfall 2
  },
  {
    id: 'etcd-unhealthy-cluster',
    patterns: [/etcdserver: unhealthy cluster/i],
    ruleId: 'etcd.unhealthy',
    title: 'etcd refused a membership change (unhealthy cluster)',
    cause:
      'etcd rejects member add/remove until the serving member has been connected to every voter for 5 s: right after a start, join or removal this is normal; if it persists, a voter is down or unreachable.',
    fix: 'Retry with backoff (5–12 s after the previous change); if it persists, repair or remove the failed member first (remove-first rule for unhealthy members).',
    // docs/knowledge/test-infra.md etcd pitfall 1; docs/knowledge/etcd.md §2
  },
  {
    id: 'etcd-not-enough-started-members',
    patterns: [/re-configuration failed due to not enough started members/i],
    ruleId: 'etcd.unhealthy',
    related: ['etcd.member-count'],
    title: 'etcd refused a change that would lose quorum',
    cause:
      'With strict reconfiguration checks, etcd refuses a change when too few members are started: an added member never started (it still counts as a voter) or another member is down.',
    fix: 'Start or remove the unstarted member by ID first; never remove a member from a two-member cluster.',
    // docs/knowledge/etcd.md §2; docs/knowledge/test-infra.md (unstarted voter raises the quorum)
  },
  {
    id: 'etcd-too-many-learners-upgrade',
    patterns: [/membership: too many learner members/i],
    ruleId: 'etcd.version-learner-bug',
    title: 'etcd 3.5 learner-promotion bug',
    cause:
      'etcd 3.5.1–3.5.19 did not persist learner promotion in the v3 store (and a learner snapshotting from such a member inherits it, fixed in 3.5.24); a 3.6 member then sees too many learners.',
    fix: 'Upgrade every kubeadm etcd member to 3.5.26+ (or restart all members) before any 3.6 member joins, then re-audit.',
    upstream: ['etcd-io/etcd#19557', 'etcd-io/etcd#20793'],
    // docs/knowledge/etcd.md §4
  },
  {
    id: 'etcd-too-many-learners',
    patterns: [/etcdserver: too many learner members in cluster/i],
    ruleId: 'etcd.unhealthy',
    title: 'A learner is already in the cluster',
    cause:
      'etcd allows one learner by default; a leftover learner (a node that never finished joining) blocks the next join.',
    fix: 'Promote or remove the leftover learner (by member ID) before adding the next node.',
    // docs/knowledge/etcd.md §2
  },
  {
    id: 'etcd-cluster-version-too-high',
    patterns: [
      /the running cluster version\(\S+\) is higher than the maximum cluster version\(\S+\) supported/i,
    ],
    ruleId: 'etcd.version-skew',
    title: 'etcd member too old for the cluster version',
    cause:
      'A member of an older minor tried to join a cluster that already runs a newer cluster version; it exits at once, but its `member add` already succeeded, leaving an unstarted voter that raises the quorum.',
    fix: 'Remove the unstarted member by ID immediately; join only members of the same or the next minor (pin cluster.etcd.image on Talos).',
    // docs/knowledge/test-infra.md (mixed versions)
  },
  {
    id: 'etcd-member-removed',
    patterns: [/the member has been permanently removed from the cluster/i],
    ruleId: 'etcd.member-name-collision',
    title: 'etcd member was removed from the cluster',
    cause:
      'A joining Talos control plane removes any member whose name equals its hostname before adding itself; kubeadm names members after node hostnames, so reusing a kubeadm node name removes a live member.',
    fix: 'Give Talos nodes hostnames that no current etcd member or Node uses; re-add the lost kubeadm member as a new member (empty data dir) if it is still needed.',
    // docs/knowledge/talos.md §4.8
  },
  {
    id: 'etcd-v2-flag-removed',
    patterns: [/flag provided but not defined: -+(?:enable-v2|experimental-enable-v2v3)\b/i],
    ruleId: 'etcd.v2-enabled',
    title: 'etcd v2 flags removed in 3.6',
    cause: '--enable-v2 and --experimental-enable-v2v3 were removed in etcd 3.6.',
    fix: 'Run `etcdutl check v2store`, migrate or purge custom v2 data, and drop the flags before any 3.6 member.',
    // docs/knowledge/etcd.md §4
  },
  {
    id: 'etcd-not-leader',
    patterns: [/etcdserver: not leader/i],
    ruleId: null,
    title: 'MoveLeader sent to a follower',
    cause: 'MoveLeader must be sent to the current leader.',
    fix: 'Find the leader with Maintenance Status on each endpoint and send the request there.',
    // docs/knowledge/test-infra.md etcd pitfall 3
  },
  {
    id: 'etcd-server-stopped',
    patterns: [/etcdserver: server stopped/i],
    ruleId: null,
    title: 'etcd member stopped while serving a request',
    cause:
      'A member removed while serving a request answers "server stopped" (the removal may still have been applied); a kubeadm apiserver writing only to that local member fails its in-flight write.',
    fix: 'Send MemberRemove to a member other than the one removed; take the kubeadm apiserver out of the load balancer before removing its local member; re-read the member list to confirm.',
    // docs/knowledge/test-infra.md etcd pitfall 4; docs/knowledge/etcd.md §2 (gates)
  },
  {
    id: 'etcd-tocommit-out-of-range',
    patterns: [/tocommit\(\d+\) is out of range/i],
    ruleId: null,
    title: 'Removed etcd member restarted under its old ID',
    cause:
      'A member that was removed cannot come back with an empty data dir under its old ID (raft panics).',
    fix: 'Add it again as a new member (new ID) with an empty data dir.',
    // docs/knowledge/test-infra.md etcd pitfall 5
  },
  {
    id: 'etcd-rpc-not-supported-for-learner',
    patterns: [/rpc not supported for learner/i],
    ruleId: null,
    title: 'Request sent to an etcd learner',
    cause: 'Learners serve only serializable reads and status; most RPCs are refused.',
    fix: 'Send the request to a voting member; wait for the learner to be promoted.',
    // docs/knowledge/test-infra.md etcd pitfall 8; docs/knowledge/etcd.md §2
  },
  {
    id: 'etcd-leader-changed',
    patterns: [/etcdserver: leader changed/i],
    ruleId: null,
    title: 'etcd leader changed under a request',
    cause:
      'A forced election (leader removed or stopped without transferring leadership) costs 1–2 s of write unavailability; clients see "leader changed" or timeouts.',
    fix: 'Move leadership before removing or stopping the leader (MoveLeader / talosctl etcd forfeit-leadership); replace the old leader last.',
    // docs/knowledge/etcd.md §3
  },
  {
    id: 'talos-etcd-waiting-to-join',
    patterns: [/etcd is waiting to join the cluster/i, /please run [`'"]?talosctl bootstrap/i],
    ruleId: 'network.port-reachability',
    related: ['etcd.external', 'capi.bootstrap-split-brain'],
    title: 'Talos etcd waiting to join (never bootstrap)',
    cause:
      "A joining Talos control plane looks for etcd members at the apiserver IPs of default/kubernetes and the endpoint's DNS, port 2379, using the etcd admin certificate; it waits while none answers. External etcd is never found.",
    fix: 'Do NOT run `talosctl bootstrap` in a migration (it starts a second etcd cluster). Check reachability of the kubeadm members on 2379/2380 from the node, that the bundle holds the kubeadm etcd CA, and that etcd is stacked.',
    // docs/knowledge/talos.md §4.8
  },
  {
    id: 'talos-bootstrap-second-cluster',
    patterns: [/new instance is started in bootstrap mode/i],
    ruleId: 'capi.bootstrap-split-brain',
    title: 'Talos bootstrapped a new etcd cluster',
    cause:
      "Talos Bootstrap was called on a control plane still waiting to join kubeadm's etcd (empty data dir): in CAPI mode CACPPT does this when TalosControlPlane status.bootstrapped is false.",
    fix: 'Stop: the node now runs a second etcd cluster. Reset it (it must rejoin as a learner with an empty data dir). In CAPI mode set TCP status.bootstrapped: true before any TCP Machine exists.',
    // docs/knowledge/capi.md H2
  },

  // ---- add-ons and upgrade-k8s ------------------------------------------------------------------
  {
    id: 'kube-proxy-selector-immutable',
    patterns: [/kube-proxy.*spec\.selector.*field is immutable/i],
    ruleId: 'addons.kube-proxy-selector',
    group: 'immutable-selector',
    title: 'talosctl upgrade-k8s cannot take over kubeadm kube-proxy',
    cause:
      "kubeadm's kube-proxy DaemonSet selects only k8s-app=kube-proxy; Talos's manifest adds tier=node, and a DaemonSet selector is immutable, so server-side apply of the Talos manifest fails.",
    fix: 'Re-create the DaemonSet: export it, add the tier: node label to selector and template, delete it with --cascade=orphan, create it again (ferry generate writes the procedure).',
    upstream: ['siderolabs/talos#11973'],
  },
  {
    id: 'selector-immutable',
    patterns: [/spec\.selector.*field is immutable/i],
    ruleId: 'addons.coredns-conflict',
    related: ['addons.kube-proxy-selector'],
    group: 'immutable-selector',
    title: 'Talos manifest conflicts with an existing object selector',
    cause:
      'talosctl upgrade-k8s server-side-applies Talos bootstrap manifests over objects kubeadm created (inventory takeover); a differing immutable selector fails the apply.',
    fix: "Disable the add-on on the Talos side if you manage it yourself (v1.13 cluster.coreDNS.disabled / cluster.proxy.disabled; v1.14 enabled: false), or re-create the object with Talos's labels.",
    // docs/knowledge/talos.md §5 (apply semantics)
  },
  {
    id: 'kube-dns-clusterip-immutable',
    patterns: [/spec\.clusterIPs?(?:\[\d+\])?: Invalid value.*may not change once set/i],
    ruleId: 'network.kube-dns-ip',
    title: 'kube-dns ClusterIP differs from the 10th service IP',
    cause:
      "Talos expects kube-dns at the 10th IP of the service CIDR; kubeadm's Service has another IP, and ClusterIPs cannot change, so talosctl upgrade-k8s fails.",
    fix: 'Set clusterDNS on Talos kubelets to the existing kube-dns IP (v1.13 machine.kubelet.clusterDNS, v1.14 KubeletConfig.clusterDNS) and expect upgrade-k8s to need the Service handled by hand.',
    upstream: ['siderolabs/talos#12618'],
  },
  {
    id: 'talos-health-unexpected-nodes',
    patterns: [/unexpected nodes with IPs/i],
    ruleId: 'talos.health-mixed-cluster',
    title: 'talosctl health fails in a mixed cluster',
    cause:
      'talosctl health requires the Kubernetes node list to equal the Talos node list and etcd members to be Talos nodes; it cannot pass while kubeadm nodes or members exist.',
    fix: 'Expected during the migration; ferry uses its own mixed-cluster checks until the last kubeadm node is gone.',
    // docs/knowledge/talos.md §7
  },
  {
    id: 'talos-discovery-unreachable',
    patterns: [
      /discovery\.talos\.dev\S*.*(?:i\/o timeout|no such host|connection refused|context deadline exceeded|network is unreachable)/i,
    ],
    ruleId: 'talos.discovery-egress',
    title: 'Talos discovery service unreachable',
    cause:
      'The default config points at https://discovery.talos.dev/; nodes without internet egress cannot reach it, and discovery feeds KubePrism and etcd endpoint lists.',
    fix: 'Disable the discovery service or point it at a self-hosted endpoint in the generated config.',
  },
  {
    id: 'bootstrap-token-expired',
    patterns: [/bootstrap(?:-token-| secret | token )\S*.*(?:has )?expired/i],
    ruleId: 'bootstrap.token-ttl',
    title: 'Bootstrap token expired',
    cause:
      "Talos kubelets join with the bundle's bootstrap token; a kubeadm token with a TTL expires (and tokencleaner deletes it), after which new nodes cannot register.",
    fix: 'Create the token with `kubeadm token create --ttl 0` (or a Secret without expiration) and use it in the bundle.',
  },
  {
    id: 'bootstrap-csr-forbidden',
    patterns: [/User "system:bootstrap:[a-z0-9]{6}" cannot create resource "certificatesigningrequests"/i],
    ruleId: 'bootstrap.token-groups',
    title: 'Bootstrap token not allowed to create CSRs',
    cause:
      "The token's auth-extra-groups are not bound to system:node-bootstrapper: Talos binds system:bootstrappers:nodes, kubeadm binds its own token groups; one side's RBAC is missing (e.g. kubeadm bindings removed, or the first Talos CP not up yet).",
    fix: "Keep kubeadm's bootstrap ClusterRoleBindings until every node runs Talos, or give the token both groups (kubeadm's and system:bootstrappers:nodes).",
    // docs/knowledge/talos.md §5
  },

  // ---- workloads ------------------------------------------------------------------------------
  {
    id: 'pdb-eviction-refused',
    patterns: [
      /Cannot evict pod as it would violate the pod's disruption budget/i,
      /The disruption budget \S+ needs \d+ healthy pods and has \d+ currently/i,
    ],
    ruleId: 'workload.pdb-blocking',
    title: 'Drain blocked by a PodDisruptionBudget',
    cause:
      'The PDB allows no disruption (minAvailable equals the healthy pods, maxUnavailable 0, or unhealthy pods under IfHealthyBudget); a drain waits forever.',
    fix: 'Scale the workload up or relax the PDB temporarily; ferry reports "PDB ns/name blocks node X" in the audit and bounds drains.',
    // docs/knowledge/test-infra.md (eviction API)
  },
  {
    id: 'hostpath-read-only-root',
    patterns: [/mkdir \/\S+: read-only file system/i],
    ruleId: 'workload.hostpath-readonly-root',
    title: 'hostPath on the read-only Talos root',
    cause:
      "Talos's root filesystem is a read-only squashfs; only /var, /opt, /etc/cni, /etc/kubernetes and a few tmpfs paths are writable, so a DirectoryOrCreate/writable hostPath elsewhere fails.",
    fix: 'Move the path under /var (and add machine.kubelet.extraMounts on v1.13 where kubelet must see it); plan a data migration for node-local data.',
    upstream: ['hpe-storage/csi-driver#379'],
    // docs/knowledge/talos.md §6
  },
  {
    id: 'hostpath-type-check',
    patterns: [
      /hostPath type check failed: \S+ is not a (?:directory|file|socket)/i,
      /dial unix \/(?:var\/)?run\/docker\.sock: connect: no such file or directory/i,
    ],
    ruleId: 'workload.hostpath-absent',
    title: 'hostPath missing on Talos',
    cause:
      "Talos has no Docker socket, no distribution paths such as /etc/cacert, and none of kubeadm's files under /etc/kubernetes (admin.conf, pki/*, manifests/*).",
    fix: 'Point the workload at a path Talos has (e.g. /etc/ssl/certs) or deliver the file differently (ConfigMap/Secret); containerd replaces the Docker socket.',
    // docs/knowledge/talos.md §6
  },
  {
    id: 'flexvolume-dir',
    patterns: [
      /flexvolume.*\/usr\/libexec\/kubernetes\/kubelet-plugins/i,
      /\/usr\/libexec\/kubernetes\/kubelet-plugins\/volume\/exec.*(?:no such file|read-only)/i,
    ],
    ruleId: 'workload.flexvolume',
    title: 'FlexVolume plugin directory unavailable',
    cause: 'Talos v1.14 removed the FlexVolume host path /usr/libexec/kubernetes/kubelet-plugins.',
    fix: 'Migrate the volume to a CSI driver, or target Talos v1.13.',
    // docs/knowledge/talos.md §6
  },
  {
    id: 'kernel-module-load',
    patterns: [/modprobe: (?:FATAL|ERROR): (?:Module|could not insert)/i],
    ruleId: 'workload.kernel-modules',
    title: 'Workload tried to load a kernel module',
    cause: 'Talos forbids module loading by workloads; modules must be declared in the machine config.',
    fix: 'Declare the module in machine.kernel.modules (v1.14 KernelModuleConfig) and, if needed, add the system extension that ships it.',
  },
  {
    id: 'host-binary-missing',
    patterns: [
      /nsenter: failed to execute \S+: No such file or directory/i,
      /chroot: failed to run command '\S+': No such file or directory/i,
    ],
    ruleId: 'workload.host-binaries',
    related: ['workload.csi-driver'],
    title: 'Workload expects host binaries',
    cause:
      'Talos has no shell, package manager or host tools (iscsiadm, nvme, mount helpers); nsenter/chroot into the host finds nothing.',
    fix: 'Install the matching Talos system extension (e.g. iscsi-tools) or use images that carry the tools.',
  },

  // ---- Cluster API ------------------------------------------------------------------------------
  {
    id: 'capi-providerid-wait',
    patterns: [/Waiting for a Node with spec\.providerID/i],
    ruleId: 'capi.providerid-missing',
    title: 'Machine waits for a Node providerID',
    cause:
      'Talos never sets spec.providerID itself; without a cloud controller manager setting it (and providerID injection), Machines stay Provisioned.',
    fix: 'Deploy a CCM (talos-ccm or proxmox-ccm) and enable metadataSettings.providerIDInjection.',
    // docs/knowledge/capi.md H11
  },
  {
    id: 'capi-skip-node-drain',
    patterns: [/Could not find Node.*skipping Node drain/i],
    ruleId: 'capi.cp-scale-down-no-drain',
    related: ['capi.worker-drain-skipped'],
    title: 'Cluster API deleted a node without draining it',
    cause:
      'CACPPT deletes the workload Node right after the control-plane Machine, so CAPI finds no Node to drain and PDBs are ignored.',
    fix: 'Drain control-plane nodes before deleting their Machines (ferry does it itself).',
    // docs/knowledge/capi.md H3
  },
  {
    id: 'capi-etcd-member-count',
    patterns: [/expected to have \d+ members, got \d+/i],
    ruleId: 'capi.tcp-etcd-audit',
    title: 'TalosControlPlane etcd membership check mismatch',
    cause:
      'CACPPT health checks require etcd members == control-plane Machines; during a mixed kubeadm/Talos control plane (or after a graceful leave) the counts differ and rollouts deadlock, and an unpaused TCP audits away members it does not own.',
    fix: 'Keep the TalosControlPlane paused while kubeadm members exist; let ferry do the etcd swaps; hand control to the TCP only at steady state.',
    // docs/knowledge/capi.md H1, H8
  },
  {
    id: 'capi-provider-not-in-target',
    patterns: [/provider \S+ not found in the target cluster/i],
    ruleId: 'capi.operator-inventory',
    title: 'clusterctl move target has no provider inventory',
    cause:
      'A CAPI Operator-managed management cluster has no clusterctl inventory, so `clusterctl move --to-kubeconfig` fails its provider check.',
    fix: 'Use `clusterctl move --to-directory` / `--from-directory`, or create the inventory Provider objects.',
    // docs/knowledge/capi.md H15
  },
];
