/** `ferry lab up` and `ferry lab status` as text: what runs, how to reach it, what was kept. */
import type { LabInfo } from './cluster.js';
import type { LiveStatus } from './live.js';
import type { LabState } from './state.js';

function etcdFlags(e: LabInfo['etcd']): string {
  return `--endpoints=${e.endpoints.join(',')} --cacert=${e.caFile} --cert=${e.certFile} --key=${e.keyFile}`;
}

export function renderLab(state: LabState, extra: string[] = []): string {
  const out: string[] = [];
  const lab = state.lab;
  out.push(
    `lab ${state.phase} (holder pid ${state.holder.pid}, state in ${state.dir}, snapshot ${state.snapshot})`,
  );
  if (state.error) out.push(`  error: ${state.error}`);
  if (lab) {
    // A stopped lab serves nothing: no connection details, only what it was.
    if (state.phase !== 'stopped') {
      out.push(`  kubeconfig:  ${lab.kubeconfig}`, `               export KUBECONFIG=${lab.kubeconfig}`);
      out.push(
        `  endpoint:    ${lab.endpoint.url}${lab.endpoint.real ? `  (stands in for ${lab.endpoint.real})` : ''}`,
      );
      if (lab.canary)
        out.push(
          `  canary:      curl ${lab.canary.url}/   (Service ${lab.canary.service}: ${lab.canary.replicas} lab-owned HTTP listeners)`,
        );
      out.push(
        `  etcd:        etcdctl ${etcdFlags(lab.etcd)}`,
        `               (or: set -a; . ${state.dir}/etcdctl.env; set +a; etcdctl member list)`,
        `               ${lab.etcd.standIn.note}`,
        `               ${lab.etcd.storage}`,
      );
    }
    if (lab.clock) {
      const c = lab.clock;
      out.push(
        `  machines:    boot ${c.bootSeconds} s, decommission ${c.decommissionSeconds} s, each ±${+(c.jitter * 100).toFixed(2)} %`,
      );
    }
    out.push('  nodes:');
    const width = Math.max(...lab.nodes.map((n) => n.name.length), 4);
    for (const n of lab.nodes) {
      const api = lab.apiServers.find((a) => a.node === n.name);
      out.push(
        `    ${n.name.padEnd(width)}  ${`${n.flavor} ${n.role}`.padEnd(22)} ${(n.realAddress ?? '-').padEnd(15)} → ${n.labAddress.padEnd(15)} ${n.state}${api ? `  API ${api.url}` : ''}`,
      );
    }
    if (state.controlSocket)
      out.push(`  run:         ferry run PLAN --provisioner lab --lab-socket ${state.controlSocket} …`);
    for (const l of lab.notLoaded) out.push(`  not loaded:  ${l}`);
    for (const w of lab.warnings) out.push(`  warning:     ${w}`);
  }
  if (state.settled && !state.settled.settled) {
    out.push('  not settled when it reported ready:');
    for (const p of state.settled.pending) out.push(`    ${p}`);
  }
  if (state.kept?.length) {
    out.push(
      ...state.kept.map((k) => `  kept:        ${k}`),
      `               etcd data, PKI and logs of the stopped lab; remove them with \`ferry lab down --dir ${state.dir}\``,
    );
  }
  out.push(...extra);
  if (state.phase === 'ready')
    out.push(`This is a lab, not a real cluster. Stop it with \`ferry lab down --dir ${state.dir}\`.`);
  return `${out.join('\n')}\n`;
}

/** `ferry lab status`: the lab, whether its holder is alive, and what it serves right now. */
export function renderStatus(state: LabState, alive: boolean, live: LiveStatus | undefined): string {
  const extra: string[] = [];
  if (!alive && (state.phase === 'ready' || state.phase === 'starting'))
    extra.push('  the holder process is gone: run `ferry lab down` to clean up what it left');
  if (live) {
    extra.push(`  load balancer ${state.lab?.endpoint.url}: ${live.endpoint}`);
    for (const a of live.apiServers) extra.push(`  API ${a.node} ${a.url}: /readyz ${a.readyz}`);
    extra.push(`  nodes: ${live.nodes}`);
  }
  return renderLab(state, extra);
}
