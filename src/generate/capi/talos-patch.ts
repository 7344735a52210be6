/**
 * The Talos settings machines created by Cluster API need beyond item 2's role patch, as one more
 * strategic patch (CABPT `strategicPatches`, H16): external cloud provider and kubelet server
 * certificate rotation for the CCM that sets providerIDs (H11), Talos API access for it from
 * kube-system (control planes), the install disk, and DHCP / the control-plane VIP on a named
 * interface — what the field notes patched by hand.
 */
import type { TalosDoc } from '../talos/doc.js';
import { renderDocs } from '../talos/doc.js';
import type { Role, TalosValues } from '../talos/model.js';
import type { TalosNodeOptions } from './options.js';

/** The role talos-ccm needs to read node metadata through the Talos API. */
export const CCM_TALOS_ROLE = 'os:reader';
export const CCM_NAMESPACE = 'kube-system';

const doc = (label: string, body: Record<string, unknown>, comment: string[]): TalosDoc => ({
  label,
  body,
  annotations: [],
  comment,
});

export function capiPatchDocs(v: TalosValues, role: Role, o: TalosNodeOptions): TalosDoc[] {
  const cp = role === 'controlplane';
  const multidoc = v.release.configFormat === 'multidoc';
  const kubeletArgs = { 'cloud-provider': 'external', 'rotate-server-certificates': 'true' };
  const apiAccess = { allowedRoles: [CCM_TALOS_ROLE], allowedKubernetesNamespaces: [CCM_NAMESPACE] };
  const why = {
    ccm: 'Talos never sets spec.providerID; the cloud-controller-manager does',
    rotate: 'kubelet serving certificates signed through CSRs the CCM approves',
    access: `talos-ccm reads node metadata through the Talos API from ${CCM_NAMESPACE}`,
  };
  const docs: TalosDoc[] = [];
  if (multidoc) {
    // v1.14 keeps externalCloudProvider (and the install disk's successor) outside the Kube* documents.
    docs.push(
      doc('v1alpha1', { version: 'v1alpha1', cluster: { externalCloudProvider: { enabled: true } } }, [
        why.ccm,
      ]),
    );
    docs.push(
      doc('KubeletConfig', { apiVersion: 'v1alpha1', kind: 'KubeletConfig', extraArgs: kubeletArgs }, [
        why.rotate,
      ]),
    );
    if (cp)
      docs.push(
        doc(
          'KubeTalosAPIAccessConfig',
          { apiVersion: 'v1alpha1', kind: 'KubeTalosAPIAccessConfig', ...apiAccess },
          [why.access],
        ),
      );
    if (o.installDisk)
      docs.push(
        doc(
          'UnattendedInstall',
          {
            apiVersion: 'v1alpha1',
            kind: 'UnattendedInstall',
            provisioning: { diskSelector: { match: `disk.dev_path == ${JSON.stringify(o.installDisk)}` } },
          },
          ['install disk (--capi-install-disk); v1.14 has no machine.install'],
        ),
      );
  } else {
    const machine: Record<string, unknown> = { kubelet: { extraArgs: kubeletArgs } };
    if (cp) machine['features'] = { kubernetesTalosAPIAccess: { enabled: true, ...apiAccess } };
    if (o.installDisk) machine['install'] = { disk: o.installDisk };
    docs.push(
      doc(
        'v1alpha1',
        { version: 'v1alpha1', machine, cluster: { externalCloudProvider: { enabled: true } } },
        [why.ccm, why.rotate, ...(cp ? [why.access] : [])],
      ),
    );
  }
  // Networking is multi-document from v1.13 on: the same documents for both formats.
  if (o.link && o.dhcp)
    docs.push(
      doc('DHCPv4Config', { apiVersion: 'v1alpha1', kind: 'DHCPv4Config', name: o.link }, [
        `DHCP on ${o.link} (--capi-dhcp)`,
      ]),
    );
  if (cp && o.link && o.vip)
    docs.push(
      doc('Layer2VIPConfig', { apiVersion: 'v1alpha1', kind: 'Layer2VIPConfig', name: o.vip, link: o.link }, [
        `control-plane VIP on ${o.link} (--capi-vip): the infrastructure provider creates no load balancer`,
      ]),
    );
  return docs;
}

/** The patch as one string, the form CABPT takes. */
export function capiPatchText(v: TalosValues, role: Role, o: TalosNodeOptions): string {
  return renderDocs([], capiPatchDocs(v, role, o));
}
