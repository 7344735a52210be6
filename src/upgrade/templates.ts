/**
 * The machine-image field of the infrastructure templates ferry knows, as data: which field says
 * what a Machine boots, and how --template-id is written there. A Talos upgrade changes only that
 * field (and the bootstrap template's talosVersion); every other field is copied.
 */
import { IMAGE_FACTORY } from '../knowledge/talos-upgrade.js';
import type { KubeObject } from '../snapshot/model.js';

export interface ImageField {
  /** Path under the template object. */
  path: readonly string[];
  /** The value --template-id becomes, or undefined when it is not one. */
  parse(id: string): string | number | undefined;
  /** How to make the image, for the blocker that asks for --template-id. */
  build(talos: string): string[];
  /** What --template-id must be, for messages. */
  expected: string;
}

const proxmoxBuild = (talos: string): string[] => {
  const raw = `/var/tmp/talos-${talos}-nocloud-amd64.raw`;
  return [
    `# on a Proxmox node; SCHEMATIC is the Image Factory schematic of the current template (ferry mgmt bootstrap's has qemu-guest-agent)`,
    `curl -fL -o ${raw}.xz ${IMAGE_FACTORY}/image/SCHEMATIC/${talos}/nocloud-amd64.raw.xz && xz -d ${raw}.xz`,
    `qm create NEW_ID --name talos-${talos} --ostype l26 --cpu host --memory 4096 --balloon 0 --agent enabled=1 --scsihw virtio-scsi-pci --net0 virtio,bridge=BRIDGE`,
    `qm set NEW_ID --scsi0 STORAGE:0,import-from=${raw} --boot order=scsi0 && qm template NEW_ID`,
    `# then: ferry upgrade plan … --template-id NEW_ID`,
  ];
};

const vsphereBuild = (talos: string): string[] => {
  const ova = `/var/tmp/talos-${talos}-vmware-amd64.ova`;
  return [
    `# SCHEMATIC is the Image Factory schematic of the current template (ferry mgmt bootstrap's has vmtoolsd)`,
    `curl -fL -o ${ova} ${IMAGE_FACTORY}/image/SCHEMATIC/${talos}/vmware-amd64.ova`,
    `govc import.ova -ds=DATASTORE -name=talos-${talos} ${ova} && govc vm.markastemplate talos-${talos}`,
    `# then: ferry upgrade plan … --template-id talos-${talos}`,
  ];
};

export const IMAGE_FIELDS: Readonly<Record<string, ImageField>> = {
  // CAPMOX ProxmoxMachineTemplate: spec.template.spec.templateID, a VM id (capi.md, CAPMOX section).
  'infrastructure.cluster.x-k8s.io|ProxmoxMachineTemplate': {
    path: ['spec', 'template', 'spec', 'templateID'],
    parse: (id) => (/^[1-9]\d*$/.test(id) ? Number(id) : undefined),
    build: proxmoxBuild,
    expected: 'a Proxmox VM id (a positive integer)',
  },
  // CAPV VSphereMachineTemplate: spec.template.spec.template, the name (or inventory path) of the VM template.
  'infrastructure.cluster.x-k8s.io|VSphereMachineTemplate': {
    path: ['spec', 'template', 'spec', 'template'],
    parse: (id) => (/^[^\s,]+$/.test(id) ? id : undefined),
    build: vsphereBuild,
    expected: 'a vSphere VM template name',
  },
};

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0]! : '');

export function imageFieldOf(o: KubeObject): ImageField | undefined {
  return IMAGE_FIELDS[`${groupOf(o.apiVersion)}|${o.kind}`];
}

export function getPath(o: unknown, path: readonly string[]): unknown {
  let cur = o;
  for (const k of path)
    cur = typeof cur === 'object' && cur !== null ? (cur as Record<string, unknown>)[k] : undefined;
  return cur;
}

export function setPath(o: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let cur = o;
  for (const k of path.slice(0, -1)) {
    if (typeof cur[k] !== 'object' || cur[k] === null) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[path.at(-1)!] = value;
}

/** A copy fit to create: the old template's spec and labels, none of the server's fields. */
export function freshCopy(o: KubeObject, name: string): KubeObject {
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: {
      name,
      ...(o.metadata.namespace !== undefined && { namespace: o.metadata.namespace }),
      ...(o.metadata.labels && { labels: { ...o.metadata.labels } }),
      ...(o.metadata.annotations && {
        annotations: Object.fromEntries(
          Object.entries(o.metadata.annotations).filter(
            ([k]) => k !== 'kubectl.kubernetes.io/last-applied-configuration',
          ),
        ),
      }),
    },
    spec: structuredClone(o.spec),
  };
}
