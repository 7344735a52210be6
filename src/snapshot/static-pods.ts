import { inputError, type Location } from '../errors.js';
import { parseCommandLine } from './flags.js';
import { describeSource, type Flag, type KubeObject, type SourceRef, type StaticPod } from './model.js';
import { isRecord } from './validate.js';
import { flagProblem } from './value-kinds.js';
import type { FieldPath, ParsedDoc } from './yaml.js';

/** The annotation the kubelet puts on the API copy (mirror pod) of a static pod. */
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';

/**
 * A static pod from a manifest (a copy of /etc/kubernetes/manifests). Any Pod is accepted, not only
 * kubeadm's four: a kube-vip or haproxy static pod matters to the migration too.
 */
export function staticPodFromManifest(
  doc: unknown,
  source: SourceRef,
  node?: string,
  locate?: ParsedDoc['locate'],
): StaticPod {
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
  return fromPod(doc, source, node, where, locate);
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

function fromPod(
  doc: Record<string, unknown>,
  source: SourceRef,
  node: string | undefined,
  where: Location,
  locate?: ParsedDoc['locate'],
) {
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

  const head = stringList(container.command, where, 'command');
  const command = [...head, ...stringList(container.args, where, 'args')];
  const flags = parseCommandLine(command).flags;
  // containers is not empty, so spec.containers is the list it was filtered from.
  const ci = (spec?.containers as unknown[] | undefined)?.indexOf(container) ?? 0;
  const at = (i: number): FieldPath => {
    return i < head.length
      ? ['spec', 'containers', ci, 'command', i]
      : ['spec', 'containers', ci, 'args', i - head.length];
  };
  checkFlagValues(component, node, flags, command, where, (i) => locate?.(at(i)));
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
    flags,
    hostPathVolumes,
    source,
  };
  if (node !== undefined) pod.node = node;
  if (typeof container.image === 'string') pod.image = container.image;
  return pod;
}

/**
 * Every flag whose value has a kind (value-kinds.ts) must hold one: a bad CIDR, address, URL or
 * duration stops the load here, naming the manifest's line and the flag, instead of being carried
 * into the kit.
 */
function checkFlagValues(
  component: string,
  node: string | undefined,
  flags: readonly Flag[],
  argv: readonly string[],
  where: Location,
  position: (argvIndex: number) => { line: number; column: number } | undefined,
): void {
  for (const f of flags) {
    const bad = flagProblem(component, f);
    if (!bad) continue;
    const i = argv.findIndex(
      (t, j) =>
        t === `--${f.name}=${f.value}` ||
        t === `-${f.name}=${f.value}` ||
        ((t === `--${f.name}` || t === `-${f.name}`) && argv[j + 1] === f.value),
    );
    const pos = i >= 0 ? position(i) : undefined;
    throw inputError(
      `${JSON.stringify(f.value)} is ${bad.problem}`,
      {
        ...where,
        ...(pos ? { line: pos.line, column: pos.column } : {}),
        ...(where.object ? {} : { object: `${component} static pod${node ? ` of ${node}` : ''}` }),
        field: `--${f.name}`,
      },
      `correct --${f.name} in the ${component} manifest (/etc/kubernetes/manifests on the control plane) and copy it again; ferry never carries a value it cannot read into the kit`,
    );
  }
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
