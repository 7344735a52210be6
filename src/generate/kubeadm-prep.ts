/**
 * Item 5 of the kit: the kubeadm-side preparation that must happen before the first Talos control
 * plane joins — loopback SANs on the apiserver certificates, the Talos service-account issuer first,
 * and the encryption key renamed to Talos's name. Each step is an idempotent script with apply,
 * verify and undo (kubeadm-prep/*.ts); steps.json lists them for the plan.
 */
import type { ControlPlaneNodeFact } from '../facts/model.js';
import { KIT } from '../knowledge/kit-paths.js';
import { KIT_ENCRYPTION_KEY_LABEL, LOOPBACK_SANS } from '../knowledge/kit-values.js';
import type { SourceRef } from '../snapshot/model.js';
import type { Artifact, GenerateNote, GeneratorResult, MissingInput } from './artifact.js';
import { type GenerateContext, type Generator, need } from './context.js';
import { encryptionRenameSteps } from './kubeadm-prep/encryption.js';
import { type IssuerNode, serviceAccountIssuerStep } from './kubeadm-prep/issuer.js';
import { apiserverSanSteps, type SanNode } from './kubeadm-prep/sans.js';
import type { NodeEntry } from './kubeadm-prep/shell.js';
import { type PrepStep, stepsJson } from './kubeadm-prep/step.js';
import { describeRefs } from './provenance.js';

const KIT_STEP = 20;
const CRI_SOCKET_ANNOTATION = 'kubeadm.alpha.kubernetes.io/cri-socket';

export const kubeadmPrepGenerator: Generator = { name: 'kubeadm-prep', generate: generateKubeadmPrep };

export function generateKubeadmPrep(ctx: GenerateContext): GeneratorResult {
  const { facts, snapshot } = ctx;
  const missing: MissingInput[] = [];
  const notes: GenerateNote[] = [];
  const cps = need(facts.nodes.controlPlane, 'the preparation runs on each control plane in turn', missing);
  const endpoint = need(
    facts.cluster.controlPlaneEndpoint,
    "Talos's service-account issuer is the endpoint URL",
    missing,
  );
  const nodes = (cps ?? []).filter((n) => n.hasApiserver && n.advertiseAddress).map(nodeEntry);
  if (cps && nodes.length === 0) {
    missing.push({
      what: 'the kube-apiserver manifest of each control-plane node (with --advertise-address)',
      why: 'the preparation steps restart and check each kubeadm apiserver',
      provideWith:
        'manifests/NODE/kube-apiserver.yaml in the snapshot directory (or its mirror pods in resources/)',
    });
  }
  const cc = snapshot.kubeadm.clusterConfiguration;
  const sansNeeded = facts.target.kubeprism === 'on';
  if (sansNeeded && !cc) {
    missing.push({
      what: 'the kubeadm ClusterConfiguration',
      why: 'the apiserver certificates are re-issued from it with 127.0.0.1 and localhost added (apiserver.san-loopback)',
      provideWith:
        "kubeadm-config.yaml in the snapshot directory (kubectl -n kube-system get cm kubeadm-config -o jsonpath='{.data.ClusterConfiguration}')",
    });
  }
  const decision = ctx.secrets?.encryption;
  const configFile = facts.encryption.providerConfigFile.value;
  if (decision?.kind === 'rename-needed' && !configFile) {
    missing.push({
      what: 'the path of the EncryptionConfiguration on the control-plane nodes',
      why: 'the key-rename steps replace that file on each node',
      provideWith: 'the kube-apiserver manifests (--encryption-provider-config) in the snapshot',
    });
  }
  if (missing.length > 0 || !cps || !endpoint || !ctx.secrets) return { kind: 'missing', missing, notes };

  const steps: PrepStep[] = [];
  const files: {
    path: string;
    content: string;
    secret?: boolean;
    provenance: Record<string, SourceRef[]>;
  }[] = [];
  const cpByName = new Map((cps ?? []).map((n) => [n.name, n]));

  if (sansNeeded && cc) {
    const sanNodes = nodes.map((n) => sanNode(ctx, n, cpByName.get(n.name)));
    if (sanNodes.every((n) => n.current && LOOPBACK_SANS.every((s) => n.current?.sans.includes(s)))) {
      notes.push({
        severity: 'info',
        message:
          'every kubeadm apiserver certificate already has 127.0.0.1 and localhost: no re-issue needed',
      });
    } else {
      const r = apiserverSanSteps(cc, sanNodes, ctx.generatedBy, ctx.clusterConfigurationText);
      steps.push(...r.steps);
      files.push(...r.files);
      for (const loss of r.losses)
        notes.push({
          severity: 'warning',
          message: `kubeadm/cluster-configuration.yaml: ${loss}`,
          source: cc.source,
        });
    }
  } else if (!sansNeeded) {
    notes.push({
      severity: 'info',
      message: 'KubePrism is off in the target: kubeadm apiserver certificates need no loopback SANs',
    });
  }

  const issuerNodes = issuerNodesOf(ctx, nodes);
  const issuer = serviceAccountIssuerStep(
    endpoint.url,
    facts.cluster.controlPlaneEndpoint.provenance,
    issuerNodes,
    ctx.generatedBy,
  );
  if (issuer) {
    steps.push(issuer.step);
    files.push(...issuer.files);
    // The manifest edit is not recorded in kubeadm-config (v1beta3 cannot even express two issuers),
    // so a kubeadm upgrade regenerates the manifest without it.
    notes.push({
      severity: 'warning',
      message: `kubeadm upgrade (and kubeadm init phase control-plane) rewrites kube-apiserver.yaml and drops the Talos issuer: run ${KIT.saIssuer} apply on each control plane again after any of them (it is idempotent)`,
      ...(cc ? { source: cc.source } : {}),
    });
  } else {
    notes.push({
      severity: 'info',
      message: `every kubeadm apiserver already signs with ${endpoint.url}: no issuer change needed`,
    });
  }

  if (decision?.kind === 'rename-needed' && ctx.encryptionConfig && configFile) {
    const etcdNode = facts.etcd.instances.value?.find((i) => i.node)?.node ?? undefined;
    const r = encryptionRenameSteps({
      cfg: ctx.encryptionConfig,
      nodePath: configFile,
      nodePathSource: facts.encryption.providerConfigFile.provenance,
      nodes,
      etcdPod: etcdNode ? `etcd-${etcdNode}` : undefined,
      reason: decision.reason,
      generatedBy: ctx.generatedBy,
    });
    steps.push(...r.steps);
    files.push(...r.files);
  }

  if (steps.length === 0) return { kind: 'ok', artifacts: [], notes };
  const artifacts: Artifact[] = files.map((f) => ({
    path: f.path,
    content: f.content,
    mode: f.secret ? 0o600 : f.path.endsWith('.sh') ? 0o755 : 0o644,
    purpose: purposeOf(f.path),
    step: KIT_STEP,
    provenance: f.provenance,
    secret: f.secret === true,
  }));
  artifacts.push(
    {
      path: 'kubeadm/ca.crt',
      content: firstCertificate(ctx.secrets.bundle.certs.k8s.crt),
      mode: 0o644,
      purpose: 'the cluster CA certificate (public): the SAN check verifies served certificates against it',
      step: KIT_STEP,
      provenance: { certificate: ctx.secrets.provenance['certs.k8s'] ?? [] },
      secret: false,
    },
    {
      path: KIT.prepSteps,
      content: stepsJson(steps),
      mode: 0o644,
      purpose: 'the kubeadm-side steps in order, each with apply, verify and undo (read by ferry plan)',
      step: KIT_STEP,
      provenance: Object.fromEntries(steps.map((s) => [s.id, s.provenance])),
      secret: false,
    },
    {
      path: 'kubeadm/README.md',
      content: prepReadme(steps),
      mode: 0o644,
      purpose: 'how to run the kubeadm-side preparation, step by step',
      step: KIT_STEP,
      provenance: {},
      secret: false,
    },
  );
  return { kind: 'ok', artifacts, notes };
}

function nodeEntry(n: ControlPlaneNodeFact): NodeEntry {
  return { name: n.name, address: n.advertiseAddress?.address ?? '', port: n.apiserverPort ?? 6443 };
}

function sanNode(ctx: GenerateContext, n: NodeEntry, cp: ControlPlaneNodeFact | undefined): SanNode {
  const { facts, snapshot } = ctx;
  const automatic = [
    n.name,
    'kubernetes',
    'kubernetes.default',
    'kubernetes.default.svc',
    ...(facts.network.dnsDomain.value ? [`kubernetes.default.svc.${facts.network.dnsDomain.value}`] : []),
    ...(facts.network.kubernetesServiceIP.value ? [facts.network.kubernetesServiceIP.value] : []),
    n.address,
    ...(facts.cluster.controlPlaneEndpoint.value ? [facts.cluster.controlPlaneEndpoint.value.host] : []),
  ];
  const out: SanNode = { ...n, automatic };
  const node = snapshot.resources.nodes.find((o) => o.metadata.name === n.name);
  const cri =
    node?.metadata.annotations?.[CRI_SOCKET_ANNOTATION] ??
    snapshot.kubeadm.nodeConfigurations.find((c) => c.nodeRegistration.name === n.name)?.nodeRegistration
      .criSocket;
  if (cri) out.criSocket = cri;
  // What this node serves: a TLS handshake seen by the snapshot, else the PKI copy if it is this node's.
  const served = snapshot.servedCertificates.find(
    (s) => s.role === 'control-plane' && s.node === n.name && s.certificate,
  );
  if (served?.certificate) {
    out.current = {
      sans: [...served.certificate.dnsNames, ...served.certificate.ipAddresses],
      source: { kind: 'tls', address: served.address },
    };
  } else {
    const pkiCert = snapshot.pki?.certificates.find((c) => c.path === 'apiserver.crt' && c.index === 0);
    const mine =
      pkiCert &&
      (pkiCert.dnsNames.includes(n.name) ||
        (cp?.advertiseAddress && pkiCert.ipAddresses.includes(cp.advertiseAddress.address)));
    if (pkiCert && mine) {
      out.current = {
        sans: [...pkiCert.dnsNames, ...pkiCert.ipAddresses],
        source: {
          kind: 'file',
          path: `${snapshot.pki?.root ?? 'pki'}/apiserver.crt`,
          field: 'subjectAltName',
        },
      };
    }
  }
  return out;
}

function issuerNodesOf(ctx: GenerateContext, nodes: NodeEntry[]): IssuerNode[] {
  const instances = ctx.facts.apiserver.instances.value ?? [];
  return nodes.map((n) => {
    const inst = instances.find((i) => i.node === n.name);
    const flags = inst?.flags ?? [];
    return {
      ...n,
      issuers: flags.filter((f) => f.name === 'service-account-issuer').map((f) => f.value),
      audiences: flags
        .filter((f) => f.name === 'api-audiences')
        .flatMap((f) => f.value.split(','))
        .filter((s) => s !== ''),
      source: inst?.source ?? { kind: 'derived', from: [], note: `no kube-apiserver manifest for ${n.name}` },
    };
  });
}

function firstCertificate(pem: string): string {
  const m = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(pem);
  return `${m?.[0] ?? pem.trim()}\n`;
}

function purposeOf(path: string): string {
  if (path === KIT.clusterConfiguration)
    return 'kubeadm ClusterConfiguration with the loopback certSANs (uploaded by step 15)';
  if (path.startsWith('kubeadm/apiserver-sans/'))
    return `kubeadm config for re-issuing ${path.slice(23, -5)}'s apiserver certificate (step 10)`;
  if (path === KIT.apiserverSans)
    return `step 10: re-issue each apiserver certificate with ${LOOPBACK_SANS.join(' and ')}`;
  if (path === KIT.kubeadmConfigUpload) return 'step 15: store the certSANs in kube-system/kubeadm-config';
  if (path === KIT.saIssuer)
    return 'step 20: put the Talos service-account issuer first on each kubeadm apiserver';
  if (path === KIT.encryptionPhase1) return `step 30: add ${KIT_ENCRYPTION_KEY_LABEL} as a read key`;
  if (path === KIT.encryptionPhase2) return `step 31: make ${KIT_ENCRYPTION_KEY_LABEL} the write key`;
  if (path === KIT.reencrypt) return `step 32: re-encrypt every Secret with ${KIT_ENCRYPTION_KEY_LABEL}`;
  if (path === KIT.encryptionPhase1Config) return 'EncryptionConfiguration for phase 1 (holds keys)';
  if (path === KIT.encryptionPhase2Config) return 'EncryptionConfiguration for phase 2 (holds keys)';
  return 'kubeadm-side preparation';
}

function prepReadme(steps: PrepStep[]): string {
  const lines = [
    '# kubeadm-side preparation',
    '',
    'Run these steps before the first Talos control plane joins, in this order. Every script takes',
    '`apply`, `verify` or `undo`; `apply` does nothing when the change is already in place, and ends by',
    'running `verify`. Steps marked *each control plane* run as root on one control-plane node at a time:',
    'copy this directory to the node, run `apply NODE`, and go to the next node only when `verify NODE` passes.',
    'Backups of every file a script changes are kept in /etc/kubernetes/ferry-backup on that node.',
    '',
  ];
  for (const s of steps) {
    lines.push(`## ${s.id}: ${s.title}`, '');
    lines.push(
      `- where: ${s.scope === 'each-control-plane' ? `each control plane, one at a time: ${s.nodes.join(', ')}` : 'once'}`,
    );
    if (s.after.length > 0) lines.push(`- only after: ${s.after.join(', ')} (verified everywhere)`);
    lines.push(`- why: ${s.why}`);
    lines.push(`- apply: \`${s.apply}\``, `- verify: \`${s.verify}\``, `- undo: \`${s.undo}\``);
    if (s.provenance.length > 0) lines.push(`- derived from: ${describeRefs(s.provenance)}`);
    lines.push('');
  }
  return lines.join('\n');
}
