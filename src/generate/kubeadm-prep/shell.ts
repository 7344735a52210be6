// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell script text, where ${...} is shell syntax
/**
 * Shell building blocks for the kubeadm-side scripts. POSIX sh only: kubeadm nodes have no
 * guaranteed bash. Values that come from the cluster are single-quoted (shq) so nothing in a
 * snapshot can inject a command.
 */
import { joinHostPort } from '../../util/ip.js';

export function shq(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export interface NodeEntry {
  name: string;
  /** Address the apiserver on the node answers on (its advertise address). */
  address: string;
  port: number;
}

/** https://ADDR:PORT, IPv6 bracketed. */
export function apiserverUrl(n: { address: string; port: number }): string {
  return `https://${joinHostPort(n.address, n.port)}`;
}

export function scriptHeader(opts: { title: string; usage: string; lines: string[] }): string {
  return [
    '#!/bin/sh',
    `# ${opts.title}`,
    ...opts.lines.map((l) => `# ${l}`),
    `# usage: ${opts.usage}`,
    '#   apply   make the change (idempotent: does nothing when it is already in place)',
    '#   verify  exit 0 only when the change is in place and the apiserver answers',
    '#   undo    put back what apply changed',
    'set -eu',
    'HERE=$(cd "$(dirname "$0")" && pwd)',
    "# FERRY_ROOT runs the script against a copy of a node's files (dry runs, tests); empty on a real node.",
    'ROOT=${FERRY_ROOT:-}',
    'K8S="$ROOT/etc/kubernetes"',
    'FERRY_BACKUP="$K8S/ferry-backup"',
    'MANIFEST="$K8S/manifests/kube-apiserver.yaml"',
    '',
    'die() { echo "ferry: $*" >&2; exit 1; }',
    'say() { echo "ferry: $*"; }',
    '# Keeps the first copy only, so undo returns to the state before ferry touched the file.',
    'backup_once() { mkdir -p "$FERRY_BACKUP"; chmod 700 "$FERRY_BACKUP"; [ -e "$FERRY_BACKUP/$2" ] || cp -p "$1" "$FERRY_BACKUP/$2"; }',
    'wait_apiserver() {',
    '  i=0',
    '  while [ "$i" -lt 90 ]; do',
    '    if curl -sk -o /dev/null --max-time 3 "$API/livez"; then return 0; fi',
    '    i=$((i + 1)); sleep 2',
    '  done',
    '  die "kube-apiserver at $API did not answer within 180s"',
    '}',
    '# kubelet restarts a static pod when its manifest leaves the directory and comes back.',
    'restart_apiserver() {',
    '  mv "$MANIFEST" "$K8S/kube-apiserver.yaml.ferry-restart"',
    '  if command -v crictl >/dev/null 2>&1; then',
    '    i=0',
    '    while [ "$i" -lt 60 ] && crictl ps -q --name "^kube-apiserver$" 2>/dev/null | grep -q .; do i=$((i + 1)); sleep 2; done',
    '  else',
    '    sleep 20',
    '  fi',
    '  mv "$K8S/kube-apiserver.yaml.ferry-restart" "$MANIFEST"',
    '  sleep 5',
    '  wait_apiserver',
    '}',
    '',
  ].join('\n');
}

/** `case "$NODE" in …` setting API for each control-plane node; an unknown name stops the script. */
export function nodeCase(nodes: NodeEntry[], extra: (n: NodeEntry) => string[] = () => []): string {
  const arms = nodes.map((n) =>
    [
      `  ${shq(n.name)})`,
      `    API=${shq(apiserverUrl(n))}`,
      ...extra(n).map((l) => `    ${l}`),
      '    ;;',
    ].join('\n'),
  );
  return [
    'NODE=${2:-}',
    'case "$NODE" in',
    ...arms,
    `  *) die "give the node name as second argument: one of ${nodes.map((n) => n.name).join(', ')}" ;;`,
    'esac',
    '',
  ].join('\n');
}

export function dispatch(): string {
  return [
    'case "${1:-}" in',
    '  apply) apply ;;',
    '  verify) verify ;;',
    '  undo) undo ;;',
    '  *) die "usage: $0 apply|verify|undo NODE" ;;',
    'esac',
    '',
  ].join('\n');
}
