import { inputError, type Location } from '../errors.js';
import { parseCommandLine } from './flags.js';
import { describeSource, type KubeObject, type SourceRef, type StaticPod } from './model.js';
import { isRecord } from './validate.js';

/** The annotation the kubelet puts on the API copy (mirror pod) of a static pod. */
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

/**
 * A static pod from a manifest (a copy of /etc/kubernetes/manifests). Any Pod is accepted, not only
 * kubeadm's four: a kube-vip or haproxy static pod matters to the migration too.
 */
export function staticPodFromManifest(doc: unknown, source: SourceRef, node?: string): StaticPod {
  const where = locationOf(source);
  if (!isRecord(doc)) {
    throw inputError(
      'expected a Pod manifest (a YAML mapping), found something else',
      where,
      'keep only static pod manifests (kind: Pod) in manifests/',
    );
  }
  if (doc.kind !== 'Pod') {
    throw inputError(
      `expected kind Pod in a static pod manifest, found ${doc.kind === undefined ? 'no kind' : `kind ${String(doc.kind)}`}`,
      { ...where, field: 'kind' },
      'keep only static pod manifests (kind: Pod) in manifests/; move other files elsewhere',
    );
  }
  return fromPod(doc, source, node, where);
}

/**
 * A static pod from its mirror pod (kube-system/NAME-NODE carrying the kubelet's mirror
 * annotation); undefined for any other pod. Reading mirror pods needs no access to the nodes.
 */
export function staticPodFromMirrorPod(pod: KubeObject): StaticPod | undefined {
  const meta = pod.metadata;
  if (meta.namespace !== 'kube-system' || meta.annotations?.[MIRROR_ANNOTATION] === undefined)
    return undefined;
  const source: SourceRef = { kind: 'object', objectKind: 'Pod', namespace: 'kube-system', name: meta.name };
  const node = typeof pod.spec?.nodeName === 'string' ? (pod.spec.nodeName as string) : undefined;
  return fromPod(pod as unknown as Record<string, unknown>, source, node, locationOf(source));
}

function fromPod(doc: Record<string, unknown>, source: SourceRef, node: string | undefined, where: Location) {
  const meta = isRecord(doc.metadata) ? doc.metadata : {};
  const spec = isRecord(doc.spec) ? doc.spec : undefined;
  const containers = spec && Array.isArray(spec.containers) ? spec.containers.filter(isRecord) : [];
  if (containers.length === 0) {
    throw inputError(
      'the Pod has no containers',
      { ...where, field: 'spec.containers' },
      'copy the manifest again from /etc/kubernetes/manifests on a control-plane node',
    );
  }
  const labels = isRecord(meta.labels) ? meta.labels : {};
  const name = typeof meta.name === 'string' ? meta.name : undefined;
  let component: string | undefined = typeof labels.component === 'string' ? labels.component : undefined;
  if (!component && name)
    component = node && name.endsWith(`-${node}`) ? name.slice(0, -node.length - 1) : name;
  const container =
    containers.find((c) => c.name === component) ?? (containers[0] as Record<string, unknown>);
  if (!component) component = typeof container.name === 'string' ? container.name : 'unknown';

  const command = [
    ...stringList(container.command, where, 'command'),
    ...stringList(container.args, where, 'args'),
  ];
  const hostPathVolumes: StaticPod['hostPathVolumes'] = [];
  if (spec && Array.isArray(spec.volumes)) {
    for (const v of spec.volumes) {
      if (!isRecord(v) || !isRecord(v.hostPath) || typeof v.hostPath.path !== 'string') continue;
      const vol: StaticPod['hostPathVolumes'][number] = { name: String(v.name ?? ''), path: v.hostPath.path };
      if (typeof v.hostPath.type === 'string' && v.hostPath.type !== '') vol.type = v.hostPath.type;
      hostPathVolumes.push(vol);
    }
  }
  const pod: StaticPod = {
    component,
    command,
    flags: parseCommandLine(command).flags,
    hostPathVolumes,
    source,
  };
  if (node !== undefined) pod.node = node;
  if (typeof container.image === 'string') pod.image = container.image;
  return pod;
}

function stringList(v: unknown, where: Location, field: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' || typeof x === 'number')) {
    throw inputError(
      `the container's ${field} must be a list of strings`,
      { ...where, field: `spec.containers[].${field}` },
      'copy the manifest again from /etc/kubernetes/manifests on a control-plane node',
    );
  }
  return v.map(String);
}

function locationOf(source: SourceRef): Location {
  if (source.kind === 'file') {
    const loc: Location = { file: source.path };
    if (source.line !== undefined) loc.line = source.line;
    return loc;
  }
  return { object: describeSource(source) };
}
