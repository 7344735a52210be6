/**
 * Cluster API mode (blockers.md "Cluster API mode"): checks over the management-cluster part of
 * the snapshot (`mgmt`) against the hazards of capi.md §1 — the TalosControlPlane's etcd audit
 * (H1), bootstrap split-brain (H2), the MachineSet preflight hold (H5), PKI Secrets (H6, H14), the
 * providerID no controller sets (H11) and the v1beta1 contract sunset (H10).
 */
import {
  clusterNameOf,
  clusterOfControlPlane,
  clusters,
  controlPlaneMachines,
  hostLabel,
  isPaused,
  MOVE_LABEL,
  machineDeployments,
  machines,
  ofKind,
  providerVersions,
  SKIP_PREFLIGHT_ANNOTATION,
  secrets,
  spec,
  status,
  talosControlPlanes,
  versionBelow,
} from '../../capi/view.js';
import type { KubeObject, MgmtSnapshot } from '../../snapshot/model.js';
import { type AuditContext, type Rule, type RuleFinding, skip } from '../rule.js';
import { controllersNotHa } from './capi-controllers.js';
import { DOCS, withMgmt } from './capi-mgmt.js';
import { CAPI_MOVE_RULES } from './capi-move.js';
import { CAPI_TALOSCONFIG_RULES } from './capi-talosconfig.js';
import { KIT } from './kit-paths.js';
import { objectEvidence } from './shared.js';

/** CACPPT releases up to v0.5.12 remove members whose name is the infrastructure machine's (cacppt#260). */
export const CACPPT_AUDIT_FIX = 'v0.5.13';
/** CAPI drops the v1beta1 contract CACPPT speaks in v1.16 (H10). */
export const CAPI_V1BETA1_DROPPED = 'v1.16.0';

/** Names of etcd members (or control-plane Nodes) that are not Talos CP Machines: the audit would remove them. */
function kubeadmMembers(ctx: AuditContext, cpMachines: KubeObject[]): { names: string[]; seen: boolean } {
  const machineNames = new Set(
    cpMachines.flatMap((x) => {
      const ref = status(x, 'nodeRef', 'name');
      return [x.metadata.name, ...(typeof ref === 'string' ? [ref] : [])].map(hostLabel);
    }),
  );
  const members = ctx.snapshot.etcd?.members.map((e) => e.name);
  const cpNodes = ctx.snapshot.manifest.parts.includes('resources')
    ? ctx.snapshot.resources.nodes
        .filter((n) => n.metadata.labels?.['node-role.kubernetes.io/control-plane'] !== undefined)
        .map((n) => n.metadata.name)
    : undefined;
  const all = members ?? cpNodes;
  if (all === undefined) return { names: [], seen: false };
  return { names: all.filter((n) => !machineNames.has(hostLabel(n))), seen: true };
}

export const tcpEtcdAudit: Rule = {
  id: 'capi.tcp-etcd-audit',
  family: 'capi',
  severity: 'blocker',
  title: "TalosControlPlane's etcd audit would remove kubeadm members",
  inputs: ['mgmt'],
  reads: [],
  requires: ['mgmt'],
  description:
    'CACPPT removes every etcd member whose name matches no control-plane Machine once all its Machines have a Node: an unpaused TalosControlPlane next to kubeadm members kills the kubeadm apiservers.',
  docs: DOCS('capi.tcp-etcd-audit'),
  artifacts: [KIT.capiCluster],
  check: (ctx) =>
    withMgmt(ctx, (m) => {
      const out: RuleFinding[] = [];
      for (const tcp of talosControlPlanes(m)) {
        const cluster = clusterOfControlPlane(m, tcp);
        const name = cluster?.metadata.name ?? clusterNameOf(tcp) ?? tcp.metadata.name;
        const cps = controlPlaneMachines(m, tcp.metadata.namespace, name);
        if (!isPaused(tcp, cluster)) {
          const members = kubeadmMembers(ctx, cps);
          if (!members.seen)
            return skip(
              ['the etcd members or the Nodes of the workload cluster'],
              'add etcd/ or resources/ to the snapshot: ferry cannot tell whether kubeadm members remain',
            );
          if (members.names.length > 0)
            out.push({
              message: `TalosControlPlane ${tcp.metadata.name} is not paused while kubeadm etcd members ${members.names.join(', ')} exist; its etcd audit removes them once its Machines have Nodes.`,
              evidence: [
                objectEvidence(tcp, `metadata.annotations["cluster.x-k8s.io/paused"]`, {
                  observed: 'absent (Cluster not paused)',
                  expected: 'present until no kubeadm member remains',
                }),
              ],
              remediation: `kubectl -n ${tcp.metadata.namespace ?? 'default'} annotate taloscontrolplane ${tcp.metadata.name} cluster.x-k8s.io/paused=true`,
            });
        }
        // The audit compares member names with nodeRef names: a Talos hostname other than the machine name is removed.
        for (const x of cps) {
          const infra = spec(x, 'infrastructureRef', 'name');
          const node = status(x, 'nodeRef', 'name');
          if (typeof infra === 'string' && typeof node === 'string' && hostLabel(infra) !== hostLabel(node))
            out.push({
              severity: 'risk',
              message: `Machine ${x.metadata.name} runs as Node ${node}, not as its infrastructure machine ${infra}; with a provider that reports the machine name as hostname, the etcd audit removes that member (cacppt#260).`,
              evidence: [objectEvidence(x, 'status.nodeRef.name', { observed: node, expected: infra })],
              remediation:
                'Set hostname.source: InfrastructureName in the TalosControlPlane controlPlaneConfig (the kit does) so the Talos hostname is the machine name.',
            });
        }
      }
      for (const p of providerVersions(m)) {
        if (p.type !== 'ControlPlaneProvider' || p.providerName !== 'talos') continue;
        if (versionBelow(p.version, CACPPT_AUDIT_FIX))
          out.push({
            severity: 'risk',
            message: `CACPPT ${p.version} predates the etcd-audit fix of cacppt#260 (${CACPPT_AUDIT_FIX}): members named after the infrastructure machine are removed.`,
            evidence: [
              objectEvidence(p.object, 'version', { observed: p.version, expected: `≥ ${CACPPT_AUDIT_FIX}` }),
            ],
            remediation: `clusterctl upgrade apply --control-plane talos:${CACPPT_AUDIT_FIX} (or newer); keep the TalosControlPlane paused meanwhile.`,
          });
      }
      return out;
    }),
};

export const bootstrapSplitBrain: Rule = {
  id: 'capi.bootstrap-split-brain',
  family: 'capi',
  severity: 'blocker',
  title: 'TalosControlPlane not marked bootstrapped',
  inputs: ['mgmt'],
  reads: [],
  requires: ['mgmt'],
  description:
    'With status.bootstrapped false CACPPT calls Talos Bootstrap on a control plane still waiting to join: a second etcd cluster.',
  docs: DOCS('capi.bootstrap-split-brain'),
  artifacts: [KIT.capiTcpStatusPatch],
  check: (ctx) =>
    withMgmt(ctx, (m) =>
      talosControlPlanes(m)
        .filter((tcp) => status(tcp, 'bootstrapped') !== true)
        .map((tcp) => ({
          message: `TalosControlPlane ${tcp.metadata.name} has status.bootstrapped ${String(status(tcp, 'bootstrapped') ?? 'unset')}: CACPPT would bootstrap a second etcd cluster on its first Machine.`,
          evidence: [
            objectEvidence(tcp, 'status.bootstrapped', {
              observed: String(status(tcp, 'bootstrapped') ?? 'unset'),
              expected: 'true',
            }),
          ],
          remediation: `kubectl -n ${tcp.metadata.namespace ?? 'default'} patch taloscontrolplane ${tcp.metadata.name} --subresource=status --type=merge -p '{"status":{"bootstrapped":true}}' — before any of its Machines exists, and again after every clusterctl move.`,
        })),
    ),
};

const PURPOSES_MOVED_BY_NAME = ['kubeconfig', 'ca', 'etcd', 'sa', 'proxy', 'apiserver-etcd-client'];

function secretNamed(m: MgmtSnapshot, ns: string | undefined, name: string): KubeObject | undefined {
  return secrets(m).find((s) => s.metadata.namespace === ns && s.metadata.name === name);
}

export const secretsNotPrecreated: Rule = {
  id: 'capi.secrets-not-precreated',
  family: 'capi',
  severity: 'blocker',
  title: 'PKI Secrets missing in the management cluster',
  inputs: ['mgmt'],
  reads: [],
  requires: ['mgmt'],
  description:
    'CABPT generates a new secrets bundle when <cluster>-talos is missing, and Cluster API a new CA without <cluster>-ca: nodes with new CAs cannot join.',
  docs: DOCS('capi.secrets-not-precreated'),
  artifacts: [KIT.capiSecrets],
  check: (ctx) =>
    withMgmt(ctx, (m) => {
      const out: RuleFinding[] = [];
      for (const c of clusters(m)) {
        const ns = c.metadata.namespace;
        for (const [suffix, keys] of [
          ['talos', ['bundle']],
          ['ca', ['tls.crt', 'tls.key']],
        ] as const) {
          const name = `${c.metadata.name}-${suffix}`;
          const s = secretNamed(m, ns, name);
          const data = (s?.['data'] ?? {}) as Record<string, unknown>;
          const absent = keys.filter((k) => !(k in data));
          if (s && absent.length === 0) continue;
          out.push({
            message: s
              ? `Secret ${name} lacks ${absent.join(', ')}: the providers would not reuse the kubeadm PKI.`
              : `Secret ${name} does not exist for Cluster ${c.metadata.name}: the providers generate new PKI.`,
            evidence: [
              objectEvidence(s ?? c, s ? 'data' : 'metadata.name', {
                observed: s ? `keys ${Object.keys(data).join(', ') || 'none'}` : 'absent',
                expected: keys.join(', '),
              }),
            ],
            remediation: `kubectl apply -f ${KIT.capiSecrets} before the Cluster's machines are created.`,
          });
        }
      }
      return out;
    }),
};

export const secretNotMoved: Rule = {
  id: 'capi.secret-not-moved',
  family: 'capi',
  severity: 'risk',
  title: 'A cluster Secret clusterctl move would leave behind',
  inputs: ['mgmt'],
  reads: [],
  requires: ['mgmt'],
  description:
    'clusterctl move carries only Secrets with an ownerRef chain to a Cluster, a known <cluster>-<purpose> name, or the move label; <cluster>-talos is none of these by default.',
  docs: DOCS('capi.secret-not-moved'),
  check: (ctx) =>
    withMgmt(ctx, (m) => {
      const out: RuleFinding[] = [];
      for (const c of clusters(m)) {
        const prefix = `${c.metadata.name}-`;
        for (const s of secrets(m)) {
          if (s.metadata.namespace !== c.metadata.namespace || !s.metadata.name.startsWith(prefix)) continue;
          const purpose = s.metadata.name.slice(prefix.length);
          if (PURPOSES_MOVED_BY_NAME.includes(purpose)) continue;
          if ((s.metadata.ownerReferences ?? []).length > 0 || s.metadata.labels?.[MOVE_LABEL] !== undefined)
            continue;
          out.push({
            message: `Secret ${s.metadata.name} has no ownerRef and no ${MOVE_LABEL} label: clusterctl move leaves it behind, and the target management cluster regenerates it.`,
            evidence: [
              objectEvidence(s, 'metadata.ownerReferences', {
                observed: 'none',
                expected: `ownerRef → Cluster ${c.metadata.name} or label ${MOVE_LABEL}`,
              }),
            ],
            remediation: `kubectl -n ${s.metadata.namespace ?? 'default'} label secret ${s.metadata.name} ${MOVE_LABEL}=`,
          });
        }
      }
      return out;
    }),
};

export const machinesetPreflightHold: Rule = {
  id: 'capi.machineset-preflight-hold',
  family: 'capi',
  severity: 'risk',
  title: 'MachineDeployment without the preflight skip',
  inputs: ['mgmt'],
  reads: [],
  requires: ['mgmt'],
  description:
    'MachineSets stay on hold while the control plane is provisioning — a TalosControlPlane without Machines is — unless the ControlPlaneIsStable preflight check is skipped.',
  docs: DOCS('capi.machineset-preflight-hold'),
  artifacts: [KIT.capiCluster],
  check: (ctx) =>
    withMgmt(ctx, (m) =>
      machineDeployments(m)
        .filter((md) => {
          const skips = (md.metadata.annotations?.[SKIP_PREFLIGHT_ANNOTATION] ?? '')
            .split(',')
            .map((x) => x.trim());
          return !skips.includes('ControlPlaneIsStable') && !skips.includes('All');
        })
        .map((md) => ({
          message: `MachineDeployment ${md.metadata.name} does not skip the ControlPlaneIsStable preflight check: its MachineSets create nothing while the control plane is kubeadm.`,
          evidence: [
            objectEvidence(md, `metadata.annotations["${SKIP_PREFLIGHT_ANNOTATION}"]`, {
              observed: md.metadata.annotations?.[SKIP_PREFLIGHT_ANNOTATION] ?? 'absent',
              expected: 'ControlPlaneIsStable',
            }),
          ],
          remediation: `kubectl -n ${md.metadata.namespace ?? 'default'} annotate machinedeployment ${md.metadata.name} ${SKIP_PREFLIGHT_ANNOTATION}=ControlPlaneIsStable`,
        })),
    ),
};

/** Workloads whose name says they are a cloud-controller-manager (talos-ccm, proxmox-ccm, vSphere CPI). */
function ccmWorkloads(ctx: AuditContext): KubeObject[] {
  const r = ctx.snapshot.resources;
  return [...r.deployments, ...r.daemonsets].filter((o) =>
    /cloud-controller-manager|(^|-)ccm($|-)|cloud-provider/.test(o.metadata.name),
  );
}

export const providerIdMissing: Rule = {
  id: 'capi.providerid-missing',
  family: 'capi',
  severity: 'blocker',
  title: 'Nothing sets spec.providerID on the Talos nodes',
  inputs: ['mgmt', 'api'],
  reads: ['nodes'],
  requires: ['mgmt', 'resources'],
  description:
    'Talos never sets spec.providerID; without a cloud-controller-manager (and CAPMOX provider-ID injection) Machines stay Provisioned, waiting for a Node with their providerID.',
  docs: DOCS('capi.providerid-missing'),
  artifacts: [KIT.capiCcmValues],
  check: (ctx) =>
    withMgmt(ctx, (m) => {
      const out: RuleFinding[] = [];
      const ccm = ccmWorkloads(ctx);
      const capiInUse = clusters(m).length > 0;
      if (capiInUse && ccm.length === 0)
        out.push({
          message:
            'The workload cluster runs no cloud-controller-manager: the Talos nodes Cluster API creates never get a providerID.',
          evidence: [
            objectEvidence(clusters(m)[0]!, 'spec.infrastructureRef', {
              observed: 'no *cloud-controller-manager* Deployment or DaemonSet in the workload cluster',
            }),
          ],
          remediation: `Install talos-ccm before the first Machine: the command in ${KIT.capiCcmValues}.`,
        });
      for (const t of ofKind(m, 'ProxmoxMachineTemplate', 'infrastructure.cluster.x-k8s.io'))
        if (spec(t, 'template', 'spec', 'metadataSettings', 'providerIDInjection') !== true)
          out.push({
            message: `ProxmoxMachineTemplate ${t.metadata.name} does not inject the provider id into the VM metadata, the id the CCM copies.`,
            evidence: [
              objectEvidence(t, 'spec.template.spec.metadataSettings.providerIDInjection', {
                observed: String(
                  spec(t, 'template', 'spec', 'metadataSettings', 'providerIDInjection') ?? 'unset',
                ),
                expected: 'true',
              }),
            ],
            remediation:
              "Templates are immutable: create a new one with metadataSettings.providerIDInjection: true (the kit's do) and point the TalosControlPlane/MachineDeployment at it.",
          });
      for (const x of machines(m))
        if (status(x, 'phase') === 'Provisioned' && spec(x, 'providerID') === undefined)
          out.push({
            message: `Machine ${x.metadata.name} is Provisioned without a providerID: it waits for a Node that never gets one.`,
            evidence: [
              objectEvidence(x, 'spec.providerID', {
                observed: 'unset',
                expected: 'set by the CCM from the VM metadata',
              }),
            ],
            remediation: `Install talos-ccm (${KIT.capiCcmValues}); the Machine proceeds once its Node has the providerID.`,
          });
      return out;
    }),
};

export const contractV1beta1: Rule = {
  id: 'capi.contract-v1beta1',
  family: 'capi',
  severity: 'risk',
  title: 'Cluster API without the v1beta1 contract CACPPT needs',
  inputs: ['mgmt'],
  reads: [],
  requires: ['mgmt'],
  description:
    'CACPPT speaks only the v1beta1 contract; Cluster API plans to drop it in v1.16. Pin core Cluster API at v1.15 or older.',
  docs: DOCS('capi.contract-v1beta1'),
  check: (ctx) =>
    withMgmt(ctx, (m) => {
      const out: RuleFinding[] = [];
      for (const p of providerVersions(m))
        if (p.type === 'CoreProvider' && !versionBelow(p.version, CAPI_V1BETA1_DROPPED))
          out.push({
            message: `Core Cluster API ${p.version} no longer serves the v1beta1 contract the Talos control-plane provider speaks.`,
            evidence: [
              objectEvidence(p.object, 'version', {
                observed: p.version,
                expected: `< ${CAPI_V1BETA1_DROPPED}`,
              }),
            ],
            remediation: 'Keep Cluster API at v1.15 or older until CACPPT speaks v1beta2 (cacppt#269).',
          });
      const clusterCrd = m.crds.find((c) => c.name === 'clusters.cluster.x-k8s.io');
      if (clusterCrd && !clusterCrd.versions.some((v) => v.name === 'v1beta1' && v.served))
        out.push({
          message: 'The Cluster CRD does not serve v1beta1: CACPPT cannot read its Cluster.',
          evidence: [
            {
              kind: 'object',
              object: {
                apiVersion: 'apiextensions.k8s.io/v1',
                kind: 'CustomResourceDefinition',
                name: clusterCrd.name,
              },
              field: 'spec.versions',
              observed: clusterCrd.versions
                .filter((v) => v.served)
                .map((v) => v.name)
                .join(', '),
              expected: 'v1beta1 served',
            },
          ],
          remediation: 'Install a Cluster API release that serves v1beta1 (≤ v1.15).',
        });
      return out;
    }),
};

export const CAPI_RULES: Rule[] = [
  tcpEtcdAudit,
  bootstrapSplitBrain,
  secretsNotPrecreated,
  providerIdMissing,
  machinesetPreflightHold,
  contractV1beta1,
  secretNotMoved,
  ...CAPI_TALOSCONFIG_RULES,
  ...CAPI_MOVE_RULES,
  controllersNotHa,
];
