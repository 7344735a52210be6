/**
 * `--full`: complete machine configs = what `talosctl gen config --with-secrets secrets.yaml`
 * writes for the release (goldens in src/generate/schema/fixtures/talos) + ferry's patches, merged the
 * way Talos merges them. Built here rather than by talosctl because talosctl refuses a bundle
 * without an encryption secret, which is exactly the bundle a plaintext cluster needs.
 *
 * Encryption: the key is the one secrets.yaml carries (the cluster's own, imported only when
 * Talos-named); none → no key, Talos writes plaintext like the cluster. v1.14 gets an explicit
 * KubeEtcdEncryptionConfig that keeps `identity` last, as the ≤ v1.13 template does, so Secrets
 * still stored in plaintext stay readable (the v1.14 generator drops identity; talos.md §4.6).
 */

import { TALOS_ENCRYPTION_KEY_NAMES } from '../../knowledge/talos.js';
import {
  genConfigAddsEndpointSan,
  hasHostnameConfig,
  minorNumber,
  POD_SECURITY_CONFIG_API_VERSION,
  TALOS_AUDIT_POLICY,
  TALOS_DISCOVERY_ENDPOINT,
  V114_ANONYMOUS_PATHS,
} from '../../knowledge/talos-config.js';
import type { SourceRef } from '../../snapshot/model.js';
import type { TalosSecretsBundle } from '../secrets/bundle.js';
import { encodeClusterId } from '../secrets/encoding.js';
import { DocBuilder, type TalosDoc } from './doc.js';
import type { Role, TalosValues } from './model.js';

const fromBundle = (field: string): SourceRef[] => [{ kind: 'file', path: 'secrets.yaml', field }];
const b64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');
const head = (kind: string, name?: string) =>
  name ? { apiVersion: 'v1alpha1', kind, name } : { apiVersion: 'v1alpha1', kind };

/** The config `talosctl gen config` would write for this role and release, with the bundle's secrets. */
export function baseConfig(v: TalosValues, bundle: TalosSecretsBundle, role: Role): TalosDoc[] {
  return v.release.configFormat === 'multidoc' ? multidocBase(v, bundle, role) : legacyBase(v, bundle, role);
}

/** The v1alpha1 document's start in both forms: role, trustd token, the Talos API CA (its key on control planes only). */
function machineBase(b: TalosSecretsBundle, role: Role): DocBuilder {
  const d = new DocBuilder('v1alpha1', { version: 'v1alpha1', debug: false });
  d.put(['machine', 'type'], role);
  d.put(['machine', 'token'], b.trustdInfo.token, fromBundle('trustdinfo.token'));
  d.put(
    ['machine', 'ca'],
    { crt: b64(b.certs.os.crt), key: role === 'controlplane' ? b64(b.certs.os.key) : '' },
    fromBundle('certs.os'),
  );
  d.put(['machine', 'certSANs'], []);
  return d;
}

function legacyBase(v: TalosValues, b: TalosSecretsBundle, role: Role): TalosDoc[] {
  const cp = role === 'controlplane';
  const minor = minorNumber(v.release);
  const d = machineBase(b, role);
  d.put(['machine', 'kubelet'], {
    image: v.images.kubelet.value,
    defaultRuntimeSeccompProfileEnabled: true,
    disableManifestsDirectory: true,
  });
  d.put(
    ['machine', 'install'],
    minor >= 12 ? { wipe: false, grubUseUKICmdline: true } : { wipe: false },
    [],
    'set install.disk (or diskSelector) per machine before installing to disk',
  );
  const features: Record<string, unknown> = {
    diskQuotaSupport: true,
    kubePrism: { enabled: true, port: 7445 },
    hostDNS: { enabled: true, forwardKubeDNSToHost: true },
  };
  if (minor <= 11) Object.assign(features, { rbac: true, stableHostname: true, apidCheckExtKeyUsage: true });
  d.put(['machine', 'features'], features);
  if (cp) d.put(['machine', 'nodeLabels'], { 'node.kubernetes.io/exclude-from-external-load-balancers': '' });
  d.put(['cluster', 'id'], encodeClusterId(b.cluster.id, v.release.version), fromBundle('cluster.id'));
  d.put(['cluster', 'secret'], b.cluster.secret, fromBundle('cluster.secret'));
  d.put(['cluster', 'controlPlane', 'endpoint'], v.endpoint.value);
  d.put(['cluster', 'clusterName'], v.clusterName.value);
  d.put(['cluster', 'network'], {
    dnsDomain: v.dnsDomain.value,
    podSubnets: v.podSubnets.value,
    serviceSubnets: v.serviceSubnets.value,
  });
  d.put(['cluster', 'token'], b.secrets.bootstrapToken, fromBundle('secrets.bootstraptoken'));
  if (cp) {
    const sb = b.secrets.secretboxEncryptionSecret;
    const cbc = b.secrets.aescbcEncryptionSecret;
    if (sb)
      d.put(
        ['cluster', 'secretboxEncryptionSecret'],
        sb,
        fromBundle('secrets.secretboxencryptionsecret'),
        "the cluster's own secretbox key (Talos name key2)",
      );
    else if (cbc)
      d.put(
        ['cluster', 'aescbcEncryptionSecret'],
        cbc,
        fromBundle('secrets.aescbcencryptionsecret'),
        "the cluster's own aescbc key (Talos name key1)",
      );
  }
  d.put(
    ['cluster', 'ca'],
    { crt: b64(b.certs.k8s.crt), key: cp ? b64(b.certs.k8s.key) : '' },
    fromBundle('certs.k8s'),
  );
  if (cp) {
    d.put(
      ['cluster', 'aggregatorCA'],
      { crt: b64(b.certs.k8sAggregator.crt), key: b64(b.certs.k8sAggregator.key) },
      fromBundle('certs.k8saggregator'),
    );
    d.put(
      ['cluster', 'serviceAccount'],
      { key: b64(b.certs.k8sServiceAccount.key) },
      fromBundle('certs.k8sserviceaccount'),
    );
    const api: Record<string, unknown> = {
      image: v.images.apiserver.value,
      admissionControl: [{ name: 'PodSecurity', configuration: talosPodSecurityDefault() }],
      auditPolicy: structuredClone(TALOS_AUDIT_POLICY),
    };
    if (genConfigAddsEndpointSan(v.release)) api['certSANs'] = [v.endpointHost];
    d.put(['cluster', 'apiServer'], api);
    d.put(['cluster', 'controllerManager'], { image: v.images.controllerManager.value });
    d.put(['cluster', 'proxy'], { image: v.images.proxy.value });
    d.put(['cluster', 'scheduler'], { image: v.images.scheduler.value });
  }
  d.put(['cluster', 'discovery'], {
    enabled: true,
    registries: { kubernetes: { disabled: true }, service: {} },
  });
  if (cp)
    d.put(
      ['cluster', 'etcd', 'ca'],
      { crt: b64(b.certs.etcd.crt), key: b64(b.certs.etcd.key) },
      fromBundle('certs.etcd'),
    );
  const docs = [d.build()];
  if (hasHostnameConfig(v.release))
    docs.push(new DocBuilder('HostnameConfig', head('HostnameConfig')).put(['auto'], 'stable').build());
  return docs;
}

/** PodSecurity as `talosctl gen config` writes it (the patch relaxes it). talos.md §3.3. */
function talosPodSecurityDefault(): Record<string, unknown> {
  return {
    apiVersion: POD_SECURITY_CONFIG_API_VERSION,
    kind: 'PodSecurityConfiguration',
    defaults: {
      audit: 'restricted',
      'audit-version': 'latest',
      enforce: 'baseline',
      'enforce-version': 'latest',
      warn: 'restricted',
      'warn-version': 'latest',
    },
    exemptions: { namespaces: ['kube-system'], runtimeClasses: [], usernames: [] },
  };
}

function multidocBase(v: TalosValues, b: TalosSecretsBundle, role: Role): TalosDoc[] {
  const cp = role === 'controlplane';
  const docs: TalosDoc[] = [];
  const cfg = machineBase(b, role);
  cfg.put(['machine', 'features'], { diskQuotaSupport: true });
  cfg.put(['cluster', 'token'], b.secrets.bootstrapToken, fromBundle('secrets.bootstraptoken'));
  if (cp)
    cfg.put(
      ['cluster', 'etcd', 'ca'],
      { crt: b64(b.certs.etcd.crt), key: b64(b.certs.etcd.key) },
      fromBundle('certs.etcd'),
    );
  docs.push(cfg.build());
  const plain = (kind: string, body: Record<string, unknown>, sources: SourceRef[] = [], name?: string) => {
    const d = new DocBuilder(name ? `${kind}[${name}]` : kind, head(kind, name));
    for (const [k, val] of Object.entries(body)) d.put([k], val, sources);
    docs.push(d.build());
  };
  plain('DiscoveryServiceConfig', { endpoint: TALOS_DISCOVERY_ENDPOINT }, [], 'default');
  plain(
    'DiscoveryIdentityConfig',
    { clusterID: encodeClusterId(b.cluster.id, v.release.version), clusterSecret: b.cluster.secret },
    fromBundle('cluster'),
  );
  plain('ResolverConfig', { hostDNS: { enabled: true, forwardKubeDNSToHost: true } });
  plain('VolumeConfig', { mount: { secure: true } }, [], 'EPHEMERAL');
  plain('FilesystemTrimConfig', { interval: '168h0m0s' });
  plain('SecurityProfileConfig', { workloadIsolation: true });
  plain('HostnameConfig', { auto: 'stable' });
  plain('KubeClusterConfig', { clusterName: v.clusterName.value, endpoint: v.endpoint.value });
  plain(
    'KubeNodeConfig',
    cp
      ? {
          nodeIP: {},
          labels: {
            'node-role.kubernetes.io/control-plane': '',
            'node.kubernetes.io/exclude-from-external-load-balancers': '',
          },
          taints: { 'node-role.kubernetes.io/control-plane': 'NoSchedule' },
        }
      : { nodeIP: {} },
  );
  plain('KubeletConfig', {
    image: v.images.kubelet.value,
    config: {},
    defaultRuntimeSeccompProfileEnabled: true,
  });
  plain('KubeNetworkConfig', {
    dnsDomain: v.dnsDomain.value,
    podSubnets: v.podSubnets.value,
    serviceSubnets: v.serviceSubnets.value,
  });
  plain(
    'KubeAPIServerCAConfig',
    cp ? { issuingCA: { cert: b.certs.k8s.crt, key: b.certs.k8s.key } } : { acceptedCAs: [b.certs.k8s.crt] },
    fromBundle('certs.k8s'),
  );
  plain('KubePrismConfig', { port: 7445 });
  if (!cp) return docs;
  plain(
    'KubeAggregatorCAConfig',
    { issuingCA: { cert: b.certs.k8sAggregator.crt, key: b.certs.k8sAggregator.key } },
    fromBundle('certs.k8saggregator'),
  );
  plain('KubeAdmissionControlConfig', { configuration: talosPodSecurityDefault() }, [], 'PodSecurity');
  plain('KubeAuditPolicyConfig', { configuration: structuredClone(TALOS_AUDIT_POLICY) });
  plain('KubeAuthenticationConfig', {
    configuration: {
      anonymous: { conditions: V114_ANONYMOUS_PATHS.map((path) => ({ path })), enabled: true },
      jwt: [],
    },
  });
  plain('KubeAuthorizerConfig', { type: 'Node' }, [], 'node');
  plain('KubeAuthorizerConfig', { type: 'RBAC' }, [], 'rbac');
  const enc = encryptionDoc(b);
  if (enc) docs.push(enc);
  plain(
    'KubeServiceAccountConfig',
    { issuer: { privateKey: b.certs.k8sServiceAccount.key, issuerURL: v.endpoint.value } },
    fromBundle('certs.k8sserviceaccount'),
  );
  plain('KubeAPIServerConfig', { image: v.images.apiserver.value });
  plain('KubeControllerManagerConfig', { image: v.images.controllerManager.value });
  plain('KubeSchedulerConfig', { image: v.images.scheduler.value, config: {} });
  plain('KubeProxyConfig', { image: v.images.proxy.value, config: {} });
  plain('KubeFlannelCNIConfig', { backendType: 'vxlan', backendPort: 4789 });
  plain('KubeCoreDNSConfig', { enabled: true });
  return docs;
}

function encryptionDoc(b: TalosSecretsBundle): TalosDoc | undefined {
  const sb = b.secrets.secretboxEncryptionSecret;
  const cbc = b.secrets.aescbcEncryptionSecret;
  if (!sb && !cbc) return undefined;
  const provider = sb
    ? { secretbox: { keys: [{ name: TALOS_ENCRYPTION_KEY_NAMES.secretbox, secret: sb }] } }
    : { aescbc: { keys: [{ name: TALOS_ENCRYPTION_KEY_NAMES.aescbc, secret: cbc }] } };
  return new DocBuilder('KubeEtcdEncryptionConfig', head('KubeEtcdEncryptionConfig'))
    .put(
      ['config'],
      { resources: [{ resources: ['secrets'], providers: [provider, { identity: {} }] }] },
      fromBundle(sb ? 'secrets.secretboxencryptionsecret' : 'secrets.aescbcencryptionsecret'),
      "the cluster's own key under Talos's key name, identity last so plaintext Secrets stay readable",
    )
    .build();
}
