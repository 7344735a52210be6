import { KIT, prepCommand, prepStepId } from '../../knowledge/kit-paths.js';
import type { SourceRef } from '../../snapshot/model.js';
import { dispatch, type NodeEntry, nodeCase, scriptHeader, shq } from './shell.js';
import type { PrepStep } from './step.js';

export interface IssuerNode extends NodeEntry {
  /** --service-account-issuer values of this node's apiserver, in order (the first one signs). */
  issuers: string[];
  /** --api-audiences values, empty when the flag is not set. */
  audiences: string[];
  source: SourceRef;
}

/**
 * Step 20 (each control plane, one at a time): put Talos's issuer — the cluster endpoint URL
 * (talos.md §4.1, §10.1) — first in the kubeadm apiserver manifest, keeping the old issuers so
 * tokens they signed still verify; and when --api-audiences is set explicitly, add the endpoint URL
 * to it, because Talos apiservers only accept tokens for that audience (blockers.md apiserver.sa-issuer).
 * Returns undefined when every apiserver already signs with the Talos issuer.
 */
export function serviceAccountIssuerStep(
  talosIssuer: string,
  talosIssuerSource: SourceRef[],
  nodes: IssuerNode[],
  generatedBy: string[],
):
  | { step: PrepStep; files: { path: string; content: string; provenance: Record<string, SourceRef[]> }[] }
  | undefined {
  if (nodes.length > 0 && nodes.every((n) => n.issuers[0] === talosIssuer)) return undefined;
  const script = [
    scriptHeader({
      title:
        'Put the Talos service-account issuer first on the kubeadm apiserver, keeping the old issuer(s) for verification',
      usage:
        'sh 20-sa-issuer.sh apply|verify|undo NODE   (as root on control-plane NODE, one node at a time)',
      lines: generatedBy,
    }),
    `ISSUER=${shq(talosIssuer)}`,
    nodeCase(nodes),
    'first_issuer() { grep -m1 -- "- --service-account-issuer=" "$MANIFEST" | sed "s/^[[:space:]]*- --service-account-issuer=//; s/[[:space:]]*$//"; }',
    'running_first_issuer() {',
    '  pid=$(pgrep -o -x kube-apiserver) || return 1',
    '  tr "\\0" "\\n" < "/proc/$pid/cmdline" | grep -m1 -- "^--service-account-issuer=" | sed "s/^--service-account-issuer=//"',
    '}',
    '# Rewrites the manifest outside the manifests directory (kubelet would read a temp file there), then moves it in.',
    'rewrite() {',
    '  awk -v new="$ISSUER" -v mode="$1" \'',
    '    function indent(s) { match(s, /^[[:space:]]*/); return substr(s, 1, RLENGTH) }',
    '    $0 ~ /^[[:space:]]*- --service-account-issuer=/ {',
    '      v = $0; sub(/^[[:space:]]*- --service-account-issuer=/, "", v); sub(/[[:space:]]*$/, "", v)',
    '      if (v == new) next',
    '      if (mode == "apply" && !done) { print indent($0) "- --service-account-issuer=" new; done = 1 }',
    '    }',
    '    $0 ~ /^[[:space:]]*- --api-audiences=/ {',
    '      if (mode == "apply" && index($0, "=" new) == 0 && index($0, "," new) == 0) sub(/--api-audiences=/, "--api-audiences=" new ",")',
    '      if (mode == "undo") { gsub("=" new ",", "="); gsub("," new, "") }',
    '    }',
    '    { print }',
    '  \' "$MANIFEST" > "$K8S/kube-apiserver.yaml.ferry-new"',
    '  chmod 600 "$K8S/kube-apiserver.yaml.ferry-new"',
    '  mv "$K8S/kube-apiserver.yaml.ferry-new" "$MANIFEST"',
    '}',
    'apply() {',
    '  if [ "$(first_issuer)" = "$ISSUER" ]; then say "$NODE: the Talos issuer is already first"; wait_apiserver; return 0; fi',
    '  grep -q -- "- --service-account-issuer=" "$MANIFEST" || die "$NODE: no --service-account-issuer in $MANIFEST"',
    '  backup_once "$MANIFEST" kube-apiserver.yaml.before-issuer',
    '  rewrite apply',
    '  say "$NODE: manifest changed, kubelet restarts kube-apiserver"',
    '  sleep 10',
    '  wait_apiserver',
    '  verify',
    '}',
    'verify() {',
    '  [ "$(first_issuer)" = "$ISSUER" ] || die "$NODE: the first --service-account-issuer in $MANIFEST is not $ISSUER"',
    '  i=0; while [ "$(running_first_issuer || true)" != "$ISSUER" ] && [ "$i" -lt 60 ]; do i=$((i + 1)); sleep 2; done',
    '  [ "$(running_first_issuer || true)" = "$ISSUER" ] || die "$NODE: the running kube-apiserver does not sign with $ISSUER yet"',
    '  wait_apiserver',
    '  say "$NODE: kube-apiserver signs with $ISSUER and still accepts the old issuer(s)"',
    '}',
    'undo() {',
    '  grep -qF -- "$ISSUER" "$MANIFEST" || { say "$NODE: nothing to undo"; return 0; }',
    '  rewrite undo',
    '  sleep 10',
    '  wait_apiserver',
    '  say "$NODE: Talos issuer removed"',
    '}',
    dispatch(),
  ].join('\n');
  const explicitAudiences = nodes.filter((n) => n.audiences.length > 0 && !n.audiences.includes(talosIssuer));
  const step: PrepStep = {
    id: prepStepId(KIT.saIssuer),
    title: 'Sign service-account tokens with the Talos issuer on every kubeadm apiserver',
    scope: 'each-control-plane',
    nodes: nodes.map((n) => n.name),
    after: [],
    apply: prepCommand(KIT.saIssuer, 'apply', true),
    verify: prepCommand(KIT.saIssuer, 'verify', true),
    undo: prepCommand(KIT.saIssuer, 'undo', true),
    why:
      `Talos apiservers issue and accept tokens for ${talosIssuer}; kubeadm's first issuer is ${nodes[0]?.issuers[0] ?? '(unknown)'} ` +
      `(apiserver.sa-issuer). Listing both keeps old tokens valid; recreate pods (or wait for token refresh) before the last kubeadm apiserver goes` +
      (explicitAudiences.length > 0
        ? `; --api-audiences is set explicitly on ${explicitAudiences.map((n) => n.name).join(', ')} and gets ${talosIssuer} added`
        : ''),
    provenance: [...talosIssuerSource, ...nodes.map((n) => n.source)],
  };
  return {
    step,
    files: [{ path: KIT.saIssuer, content: script, provenance: { ISSUER: talosIssuerSource } }],
  };
}
