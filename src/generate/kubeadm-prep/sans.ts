// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell script text, where ${...} is shell syntax

import { atField } from '../../facts/sources.js';
import { KIT, prepCommand, prepStepId } from '../../knowledge/kit-paths.js';
import { LOOPBACK_SANS } from '../../knowledge/kit-values.js';
import type { ClusterConfiguration, SourceRef } from '../../snapshot/model.js';
import { joinHostPort } from '../../util/ip.js';
import { describeRefs } from '../provenance.js';
import {
  editClusterConfigurationText,
  nodeInitConfiguration,
  renderClusterConfiguration,
  yamlDocs,
} from './cluster-config.js';
import { dispatch, type NodeEntry, nodeCase, scriptHeader, shq } from './shell.js';
import type { PrepStep } from './step.js';

export interface SanNode extends NodeEntry {
  criSocket?: string;
  /** SANs of the certificate this node serves now, when ferry has seen it. */
  current?: { sans: string[]; source: SourceRef };
  /** SANs kubeadm puts in an apiserver certificate by itself for this node. */
  automatic: string[];
}

export interface SanStepResult {
  steps: PrepStep[];
  files: { path: string; content: string; provenance: Record<string, SourceRef[]> }[];
  losses: string[];
}

/**
 * Step 10 (each control plane, one at a time): re-issue the kubeadm apiserver certificate with
 * 127.0.0.1 and localhost added, keeping every SAN it has now. Step 15 (once): store the new certSANs
 * in kube-system/kubeadm-config so a later `kubeadm upgrade` keeps them (blockers.md apiserver.san-loopback).
 */
export function apiserverSanSteps(
  cc: ClusterConfiguration,
  nodes: SanNode[],
  generatedBy: string[],
  /** The cluster's own ClusterConfiguration text, edited losslessly when given (cluster-config.ts). */
  sourceText?: { text: string; source: SourceRef },
): SanStepResult {
  const base = uniq([...cc.apiServer.certSANs, ...LOOPBACK_SANS]);
  const certSansSource = atField(cc.source, 'apiServer.certSANs');
  const added: SourceRef = {
    kind: 'derived',
    from: [certSansSource],
    note: 'kubeadm certSANs plus 127.0.0.1 and localhost for KubePrism (apiserver.san-loopback)',
  };
  // Lossless when the cluster's text is there (and readable by current kubeadm); else re-rendered.
  const lossless = sourceText && cc.sourceApiVersion !== 'kubeadm.k8s.io/v1beta2' ? sourceText : undefined;
  const apiVersion =
    cc.sourceApiVersion === 'kubeadm.k8s.io/v1beta4' ? 'kubeadm.k8s.io/v1beta4' : 'kubeadm.k8s.io/v1beta3';
  const clusterDoc = (sans: string[]): { text: string; losses: string[] } => {
    const comment = `certSANs: ${describeRefs([certSansSource])}; 127.0.0.1 and localhost added by ferry for KubePrism (apiserver.san-loopback)`;
    const edited = lossless ? editClusterConfigurationText(lossless.text, sans, comment) : undefined;
    if (edited !== undefined) return { text: edited, losses: [] };
    const r = renderClusterConfiguration(cc, { certSANs: sans });
    return { text: yamlDocs([r.doc]), losses: r.losses };
  };
  const shared = clusterDoc(base);
  const files: SanStepResult['files'] = [
    {
      path: KIT.clusterConfiguration,
      content:
        header('ClusterConfiguration with 127.0.0.1 and localhost in apiServer.certSANs', generatedBy) +
        shared.text,
      provenance: { 'apiServer.certSANs': [added], ClusterConfiguration: [lossless?.source ?? cc.source] },
    },
  ];
  const expect = new Map<string, string[]>();
  for (const n of nodes) {
    // SANs the node's certificate has today that kubeadm would not put back by itself.
    const keep = (n.current?.sans ?? []).filter((s) => !n.automatic.includes(s) && !base.includes(s));
    const clusterText = clusterDoc(uniq([...base, ...keep])).text;
    const init = nodeInitConfiguration(apiVersion, {
      name: n.name,
      advertiseAddress: n.address,
      port: n.port,
      ...(n.criSocket ? { criSocket: n.criSocket } : {}),
    });
    const prov: Record<string, SourceRef[]> = { 'apiServer.certSANs': [added] };
    if (n.current) prov['apiServer.certSANs'] = [added, n.current.source];
    files.push({
      path: KIT.apiserverSansConfig(n.name),
      content:
        header(
          `kubeadm config to re-issue the apiserver certificate of ${n.name} with loopback SANs`,
          generatedBy,
        ) + `${yamlDocs([init])}---\n${clusterText}`,
      provenance: prov,
    });
    expect.set(n.name, uniq([...(n.current?.sans ?? []), ...LOOPBACK_SANS]));
  }
  const certDir = cc.certificatesDir ?? '/etc/kubernetes/pki';
  const script = [
    scriptHeader({
      title:
        'Re-issue the kubeadm apiserver certificate with 127.0.0.1 and localhost (apiserver.san-loopback)',
      usage:
        'sh 10-apiserver-sans.sh apply|verify|undo NODE   (as root on control-plane NODE, one node at a time)',
      lines: generatedBy,
    }),
    `PKI="$ROOT"${shq(certDir)}`,
    'CRT="$PKI/apiserver.crt"',
    'KEY="$PKI/apiserver.key"',
    nodeCase(nodes, (n) => [
      `CONNECT=${shq(connectTarget(n))}`,
      `PORT=${n.port}`,
      `EXPECT=${shq((expect.get(n.name) ?? []).filter((s) => !s.includes(':')).join(' '))}`,
    ]),
    'sans() { openssl x509 -in "$CRT" -noout -ext subjectAltName 2>/dev/null | tr "," "\\n" | sed "s/^ *//"; }',
    'has_san() { sans | grep -qxF "DNS:$1" || sans | grep -qxF "IP Address:$1"; }',
    'apply() {',
    '  if has_san 127.0.0.1 && has_san localhost; then say "$NODE: apiserver.crt already has 127.0.0.1 and localhost"; return 0; fi',
    '  [ -f "$HERE/apiserver-sans/$NODE.yaml" ] || die "missing $HERE/apiserver-sans/$NODE.yaml"',
    '  backup_once "$CRT" apiserver.crt',
    '  backup_once "$KEY" apiserver.key',
    '  # kubeadm keeps an existing certificate; move it away so the new SANs are issued.',
    '  mv "$CRT" "$CRT.ferry-old"; mv "$KEY" "$KEY.ferry-old"',
    '  if ! kubeadm init phase certs apiserver --config "$HERE/apiserver-sans/$NODE.yaml"; then',
    '    mv "$CRT.ferry-old" "$CRT"; mv "$KEY.ferry-old" "$KEY"',
    '    die "kubeadm could not issue the certificate; the old one is back in place"',
    '  fi',
    '  # Check before the apiserver serves it: a certificate that lost a SAN would cut clients off.',
    '  for s in $EXPECT 127.0.0.1 localhost; do',
    '    if ! has_san "$s"; then',
    '      mv "$CRT.ferry-old" "$CRT"; mv "$KEY.ferry-old" "$KEY"',
    '      die "$NODE: the new certificate lacks SAN $s; the old one is back in place (add $s to apiServer.certSANs in apiserver-sans/$NODE.yaml)"',
    '    fi',
    '  done',
    '  rm -f "$CRT.ferry-old" "$KEY.ferry-old"',
    '  restart_apiserver',
    '  verify',
    '}',
    'verify() {',
    '  for s in $EXPECT 127.0.0.1 localhost; do has_san "$s" || die "$NODE: apiserver.crt lacks SAN $s"; done',
    '  wait_apiserver',
    '  # What a KubePrism client sees: the served certificate verifies for 127.0.0.1 and localhost.',
    '  for name in 127.0.0.1 localhost; do',
    '    curl -s -o /dev/null --max-time 5 --cacert "$HERE/ca.crt" --connect-to "$name:$PORT:$CONNECT" "https://$name:$PORT/livez" \\',
    '      || die "$NODE: the served certificate does not verify for $name"',
    '  done',
    '  say "$NODE: apiserver certificate valid for 127.0.0.1 and localhost"',
    '}',
    'undo() {',
    '  [ -e "$FERRY_BACKUP/apiserver.crt" ] || { say "$NODE: no backup, nothing to undo"; return 0; }',
    '  cp -p "$FERRY_BACKUP/apiserver.crt" "$CRT"; cp -p "$FERRY_BACKUP/apiserver.key" "$KEY"',
    '  restart_apiserver',
    '  say "$NODE: previous apiserver certificate restored"',
    '}',
    dispatch(),
  ].join('\n');
  const upload = [
    scriptHeader({
      title: 'Store the new certSANs in kube-system/kubeadm-config so `kubeadm upgrade` keeps them',
      usage:
        'sh 15-kubeadm-config.sh apply|verify|undo   (as root on any one control-plane node, after step 10 on all)',
      lines: generatedBy,
    }),
    'export KUBECONFIG=${KUBECONFIG:-/etc/kubernetes/admin.conf}',
    'current() { kubectl -n kube-system get configmap kubeadm-config -o jsonpath="{.data.ClusterConfiguration}"; }',
    'apply() {',
    '  if verify_quiet; then say "kubeadm-config already lists 127.0.0.1 and localhost"; return 0; fi',
    '  mkdir -p "$FERRY_BACKUP"; chmod 700 "$FERRY_BACKUP"',
    '  [ -e "$FERRY_BACKUP/kubeadm-config.yaml" ] || current > "$FERRY_BACKUP/kubeadm-config.yaml"',
    '  kubeadm init phase upload-config kubeadm --config "$HERE/cluster-configuration.yaml"',
    '  verify',
    '}',
    'verify_quiet() { c=$(current) && echo "$c" | grep -qE "^ *- \\"?127\\.0\\.0\\.1\\"?$" && echo "$c" | grep -qE "^ *- \\"?localhost\\"?$"; }',
    'verify() { verify_quiet || die "kubeadm-config does not list 127.0.0.1 and localhost in certSANs"; say "kubeadm-config has the loopback SANs"; }',
    'undo() {',
    '  [ -e "$FERRY_BACKUP/kubeadm-config.yaml" ] || { say "no backup, nothing to undo"; return 0; }',
    '  kubeadm init phase upload-config kubeadm --config "$FERRY_BACKUP/kubeadm-config.yaml"',
    '}',
    'case "${1:-}" in apply) apply ;; verify) verify ;; undo) undo ;; *) die "usage: $0 apply|verify|undo" ;; esac',
    '',
  ].join('\n');
  files.push(
    { path: KIT.apiserverSans, content: script, provenance: { certSANs: [added] } },
    { path: KIT.kubeadmConfigUpload, content: upload, provenance: { certSANs: [added] } },
  );
  const nodeNames = nodes.map((n) => n.name);
  const steps: PrepStep[] = [
    {
      id: prepStepId(KIT.apiserverSans),
      title: 'Re-issue each kubeadm apiserver certificate with 127.0.0.1 and localhost',
      scope: 'each-control-plane',
      nodes: nodeNames,
      after: [],
      apply: prepCommand(KIT.apiserverSans, 'apply', true),
      verify: prepCommand(KIT.apiserverSans, 'verify', true),
      undo: prepCommand(KIT.apiserverSans, 'undo', true),
      why: 'Talos nodes reach every apiserver through KubePrism on 127.0.0.1:7445; kubeadm certificates lack that SAN (apiserver.san-loopback)',
      provenance: [added, ...nodes.flatMap((n) => (n.current ? [n.current.source] : []))],
    },
    {
      id: prepStepId(KIT.kubeadmConfigUpload),
      title: 'Store the new certSANs in kube-system/kubeadm-config',
      scope: 'cluster',
      nodes: [],
      after: [prepStepId(KIT.apiserverSans)],
      apply: prepCommand(KIT.kubeadmConfigUpload, 'apply', false),
      verify: prepCommand(KIT.kubeadmConfigUpload, 'verify', false),
      undo: prepCommand(KIT.kubeadmConfigUpload, 'undo', false),
      why: 'kubeadm regenerates certificates from this ConfigMap on upgrade; without it the loopback SANs would disappear',
      provenance: [added],
    },
  ];
  return { steps, files, losses: [...new Set(shared.losses)] };
}

/** host:port for curl --connect-to (IPv6 bracketed). */
function connectTarget(n: NodeEntry): string {
  return joinHostPort(n.address, n.port);
}

export function header(title: string, generatedBy: string[]): string {
  return [`# ${title}`, ...generatedBy.map((l) => `# ${l}`), ''].join('\n');
}

function uniq(values: string[]): string[] {
  return [...new Set(values)];
}
