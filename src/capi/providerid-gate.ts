/**
 * H11 (capi.md §1): Talos never sets a Node's spec.providerID, so a Machine CAPI created stays in
 * `Provisioned` ("Waiting for a Node with spec.providerID … to exist") unless a cloud-controller-
 * manager copies the id the infrastructure provider injected (CAPMOX `providerIDInjection`). This
 * gate says which Machines are stuck and which of the two causes it saw, and names the kit's CCM
 * manifest as the fix. What it could not observe (is a CCM running?) is said, never assumed. Pure.
 */
import { ccmInstallCommand } from '../generate/capi/ccm.js';
import { KIT } from '../knowledge/kit-paths.js';
import type { KubeObject } from '../snapshot/model.js';

export type ProviderIdGate =
  | { kind: 'pass' }
  | { kind: 'stop'; machines: string[]; reason: string; remediation: string };

export interface ProviderIdInput {
  /** The cluster's Machines as the management cluster shows them. */
  machines: KubeObject[];
  /** The infrastructure machine templates (ProxmoxMachineTemplate carries metadataSettings). */
  templates: KubeObject[];
  /** Whether a cloud-controller-manager runs in the workload cluster; null: not observed. */
  ccmRunning: boolean | null;
  /** The kit directory, as the operator gave it. */
  kitDir: string;
}

const stuck = (m: KubeObject) =>
  m.status?.['phase'] === 'Provisioned' && typeof m.spec?.['providerID'] !== 'string';

function injectionOff(t: KubeObject): boolean {
  if (t.kind !== 'ProxmoxMachineTemplate') return false;
  const s = (t.spec?.['template'] as { spec?: { metadataSettings?: { providerIDInjection?: unknown } } })
    ?.spec;
  return s?.metadataSettings?.providerIDInjection !== true;
}

export function providerIdGate(input: ProviderIdInput): ProviderIdGate {
  const machines = input.machines.filter(stuck).map((m) => `${m.metadata.namespace}/${m.metadata.name}`);
  if (machines.length === 0) return { kind: 'pass' };
  const causes: string[] = [];
  if (input.ccmRunning === false) causes.push('no cloud-controller-manager runs in the workload cluster');
  if (input.ccmRunning === null)
    causes.push('ferry could not see whether a cloud-controller-manager runs in the workload cluster');
  const off = input.templates.filter(injectionOff).map((t) => t.metadata.name);
  if (off.length > 0)
    causes.push(
      `metadataSettings.providerIDInjection is not true in ProxmoxMachineTemplate ${off.join(', ')}`,
    );
  if (causes.length === 0) causes.push('a cloud-controller-manager runs, but has not set their providerID');
  const fixes = [
    `deploy the kit's CCM on the workload cluster: ${ccmInstallCommand(`${input.kitDir}/${KIT.capiCcmValues}`)}`,
    ...(off.length > 0
      ? [
          'set spec.template.spec.metadataSettings.providerIDInjection: true in the template (generate the kit again) and replace the stuck Machines',
        ]
      : []),
  ];
  return {
    kind: 'stop',
    machines,
    reason: `Machines ${machines.join(', ')} are Provisioned without a providerID (Talos never sets one; a cloud controller manager must): ${causes.join('; ')}`,
    remediation: fixes.join('; then '),
  };
}
