/**
 * The CustomResourceDefinitions the lab's Cluster API serves: every CRD of the repository's copy
 * (schemas/capi), and one the copy lacks — ProxmoxMachine, which CAPMOX creates from a
 * ProxmoxMachineTemplate. CAPMOX's template holds the machine spec itself (`spec.template.spec` is
 * a ProxmoxMachineSpec), so the lab derives the ProxmoxMachine CRD from the template's: same
 * group, versions and spec schema; its status is left open (the lab writes only `ready` and
 * addresses). A lab stand-in, not CAPMOX's CRD.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { KubeRequester } from '../../adapters/kube/request.js';
import { capiSchemasDir } from '../../generate/schema/specs.js';
import { isKubeApiError } from '../../ports/kube.js';

type Json = Record<string, unknown>;

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const PROXMOX_TEMPLATES = 'infrastructure.cluster.x-k8s.io_proxmoxmachinetemplates.yaml';

/** The CRDs of schemas/capi, file name order. */
export function capiCrds(): Json[] {
  const dir = capiSchemasDir();
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => parse(readFileSync(join(dir, f), 'utf8')) as Json);
}

/** The lab's ProxmoxMachine CRD, derived from CAPMOX's ProxmoxMachineTemplate CRD (see the header). */
export function proxmoxMachineCrd(): Json {
  const tpl = parse(readFileSync(join(capiSchemasDir(), PROXMOX_TEMPLATES), 'utf8')) as {
    spec: { group: string; versions: Json[] };
  };
  const versions = tpl.spec.versions.map((v) => {
    const schema = (v['schema'] as { openAPIV3Schema: Json }).openAPIV3Schema;
    const props = schema['properties'] as Json;
    const template = ((props['spec'] as Json)['properties'] as Json)['template'] as Json;
    const machineSpec = (template['properties'] as Json)['spec'];
    return {
      name: v['name'],
      served: v['served'],
      storage: v['storage'],
      subresources: { status: {} },
      schema: {
        openAPIV3Schema: {
          description: 'ProxmoxMachine (lab: spec schema from ProxmoxMachineTemplate spec.template.spec)',
          type: 'object',
          properties: {
            apiVersion: props['apiVersion'],
            kind: props['kind'],
            metadata: { type: 'object' },
            spec: machineSpec,
            status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          },
          required: ['spec'],
        },
      },
    };
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `proxmoxmachines.${tpl.spec.group}`,
      labels: { 'cluster.x-k8s.io/provider': 'infrastructure-proxmox', 'clusterctl.cluster.x-k8s.io': '' },
    },
    spec: {
      group: tpl.spec.group,
      names: {
        kind: 'ProxmoxMachine',
        listKind: 'ProxmoxMachineList',
        plural: 'proxmoxmachines',
        singular: 'proxmoxmachine',
        categories: ['cluster-api'],
      },
      scope: 'Namespaced',
      versions,
    },
  };
}

/** Creates every CRD the lab's Cluster API serves; ones already there are left as they are. */
export async function installLabCapiCrds(api: KubeRequester): Promise<void> {
  for (const body of [...capiCrds(), proxmoxMachineCrd()]) {
    try {
      await api.request('POST', CRD_PATH, { body });
    } catch (err) {
      if (!isKubeApiError(err, 409)) throw err;
    }
  }
}
