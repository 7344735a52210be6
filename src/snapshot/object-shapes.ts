/**
 * The types of the fields ferry reads from Kubernetes objects, per kind, checked once when a
 * snapshot is loaded: a Node whose status.addresses is a string, a Pod whose ownerReferences is a
 * number, a PDB whose minAvailable is a list is bad input naming the file, the object and the field,
 * never a TypeError in a rule. Only the fields ferry reads are described; anything else an object
 * carries is kept unchecked. A field set to null is how YAML writes "unset", and the API server
 * drops it when it stores an object: the check drops it too, so readers see it absent.
 */

import { decodeBase64, ipProblem, type ValueKind, valueProblem } from './values.js';

/** What a field must hold. Objects are open: fields they do not name are not checked. */
export type FieldShape =
  | 'string'
  | 'number'
  | 'integer'
  | 'boolean'
  /** intstr.IntOrString: a whole number or a string ("25%"). */
  | 'int-or-string'
  /** A string of standard base64 (Secret data); a wrong one is never quoted. */
  | 'base64'
  /** A string holding a value of a kind (values.ts), or one of `or` (e.g. "None" for a headless clusterIP). */
  | { value: ValueKind; or?: readonly string[] }
  | { object: Record<string, FieldShape> }
  | { list: FieldShape }
  /** A map with string keys, every value of the given shape. */
  | { map: FieldShape };

/** The first field of an object that does not have its shape. */
export interface ShapeProblem {
  /** Path from the object's root, for YAML positions: ['status', 'addresses', 0]. */
  path: (string | number)[];
  expected: string;
  found: unknown;
  /** For a string of the wrong kind of value: what is wrong with it ("not an IP address"). */
  problem?: string;
}

const obj = (fields: Record<string, FieldShape>): FieldShape => ({ object: fields });
const list = (item: FieldShape): FieldShape => ({ list: item });
const map = (value: FieldShape): FieldShape => ({ map: value });
const strings = list('string');
const value = (kind: ValueKind, or?: readonly string[]): FieldShape =>
  or ? { value: kind, or } : { value: kind };
const clusterIP = value('ip', ['None', '']);
const stringMap = map('string');

const labelSelector = obj({
  matchLabels: stringMap,
  matchExpressions: list(obj({ key: 'string', operator: 'string', values: strings })),
});

const nodeSelectorTerms = list(
  obj({
    matchExpressions: list(obj({ key: 'string', operator: 'string', values: strings })),
    matchFields: list(obj({ key: 'string', operator: 'string', values: strings })),
  }),
);

const metadata = obj({
  name: 'string',
  namespace: 'string',
  uid: 'string',
  labels: stringMap,
  annotations: stringMap,
  ownerReferences: list(
    obj({ apiVersion: 'string', kind: 'string', name: 'string', uid: 'string', controller: 'boolean' }),
  ),
  creationTimestamp: 'string',
  deletionTimestamp: 'string',
  resourceVersion: 'string',
  generation: 'integer',
  finalizers: strings,
});

const probe = obj({
  httpGet: obj({ path: 'string', port: 'int-or-string', host: 'string', scheme: 'string' }),
  tcpSocket: obj({ port: 'int-or-string', host: 'string' }),
  exec: obj({ command: strings }),
});

const container = obj({
  name: 'string',
  image: 'string',
  command: strings,
  args: strings,
  env: list(obj({ name: 'string', value: 'string' })),
  ports: list(obj({ containerPort: 'integer', hostPort: 'integer', hostIP: 'string', protocol: 'string' })),
  volumeMounts: list(obj({ name: 'string', mountPath: 'string', readOnly: 'boolean', subPath: 'string' })),
  securityContext: obj({ privileged: 'boolean', capabilities: obj({ add: strings, drop: strings }) }),
  readinessProbe: probe,
  livenessProbe: probe,
  startupProbe: probe,
});

const volume = obj({
  name: 'string',
  hostPath: obj({ path: 'string', type: 'string' }),
  emptyDir: obj({ medium: 'string', sizeLimit: 'int-or-string' }),
  persistentVolumeClaim: obj({ claimName: 'string', readOnly: 'boolean' }),
  flexVolume: obj({ driver: 'string' }),
  csi: obj({ driver: 'string' }),
});

const podSpec = obj({
  nodeName: 'string',
  nodeSelector: stringMap,
  hostNetwork: 'boolean',
  hostPID: 'boolean',
  hostIPC: 'boolean',
  priorityClassName: 'string',
  serviceAccountName: 'string',
  tolerations: list(
    obj({
      key: 'string',
      operator: 'string',
      value: 'string',
      effect: 'string',
      tolerationSeconds: 'integer',
    }),
  ),
  affinity: obj({
    nodeAffinity: obj({
      requiredDuringSchedulingIgnoredDuringExecution: obj({ nodeSelectorTerms }),
    }),
  }),
  containers: list(container),
  initContainers: list(container),
  volumes: list(volume),
  securityContext: obj({ sysctls: list(obj({ name: 'string', value: 'string' })) }),
});

const podTemplate = obj({ metadata, spec: podSpec });

const rollingUpdate = obj({
  maxUnavailable: 'int-or-string',
  maxSurge: 'int-or-string',
  partition: 'integer',
});

const replicas = {
  replicas: 'integer',
  readyReplicas: 'integer',
  availableReplicas: 'integer',
  updatedReplicas: 'integer',
} as const satisfies Record<string, FieldShape>;

const jobSpec = obj({ template: podTemplate, parallelism: 'integer', completions: 'integer' });

/** By kind: the fields ferry reads. Kinds not listed are checked for metadata only. */
export const OBJECT_SHAPES: Readonly<Record<string, Record<string, FieldShape>>> = {
  Namespace: { metadata, status: obj({ phase: 'string' }) },
  Node: {
    metadata,
    spec: obj({
      podCIDR: value('cidrs'),
      podCIDRs: list(value('cidrs')),
      providerID: 'string',
      unschedulable: 'boolean',
      taints: list(obj({ key: 'string', value: 'string', effect: 'string' })),
    }),
    status: obj({
      addresses: list(obj({ type: 'string', address: 'string' })),
      nodeInfo: map('string'),
      conditions: list(obj({ type: 'string', status: 'string', reason: 'string', message: 'string' })),
      allocatable: map('int-or-string'),
      capacity: map('int-or-string'),
    }),
  },
  Pod: {
    metadata,
    spec: podSpec,
    status: obj({
      phase: 'string',
      podIP: 'string',
      conditions: list(obj({ type: 'string', status: 'string' })),
      containerStatuses: list(obj({ name: 'string', ready: 'boolean', restartCount: 'integer' })),
    }),
  },
  Deployment: {
    metadata,
    spec: obj({
      replicas: 'integer',
      selector: labelSelector,
      template: podTemplate,
      strategy: obj({ type: 'string', rollingUpdate }),
    }),
    status: obj(replicas),
  },
  ReplicaSet: {
    metadata,
    spec: obj({ replicas: 'integer', selector: labelSelector, template: podTemplate }),
    status: obj(replicas),
  },
  StatefulSet: {
    metadata,
    spec: obj({
      replicas: 'integer',
      selector: labelSelector,
      template: podTemplate,
      serviceName: 'string',
      updateStrategy: obj({ type: 'string', rollingUpdate }),
      volumeClaimTemplates: list(obj({ metadata })),
    }),
    status: obj(replicas),
  },
  DaemonSet: {
    metadata,
    spec: obj({
      selector: labelSelector,
      template: podTemplate,
      updateStrategy: obj({ type: 'string', rollingUpdate }),
    }),
    status: obj({
      desiredNumberScheduled: 'integer',
      currentNumberScheduled: 'integer',
      numberReady: 'integer',
      numberAvailable: 'integer',
      updatedNumberScheduled: 'integer',
    }),
  },
  Job: { metadata, spec: jobSpec },
  CronJob: {
    metadata,
    spec: obj({ schedule: 'string', suspend: 'boolean', jobTemplate: obj({ metadata, spec: jobSpec }) }),
  },
  PodDisruptionBudget: {
    metadata,
    spec: obj({
      minAvailable: 'int-or-string',
      maxUnavailable: 'int-or-string',
      selector: labelSelector,
      unhealthyPodEvictionPolicy: 'string',
    }),
    status: obj({
      expectedPods: 'integer',
      disruptionsAllowed: 'integer',
      currentHealthy: 'integer',
      desiredHealthy: 'integer',
      disruptedPods: stringMap,
    }),
  },
  Service: {
    metadata,
    spec: obj({
      type: 'string',
      clusterIP,
      clusterIPs: list(clusterIP),
      ipFamilies: strings,
      selector: stringMap,
      externalTrafficPolicy: 'string',
      ports: list(
        obj({
          name: 'string',
          protocol: 'string',
          port: 'integer',
          targetPort: 'int-or-string',
          nodePort: 'integer',
        }),
      ),
    }),
  },
  EndpointSlice: {
    metadata,
    addressType: 'string',
    endpoints: list(
      obj({
        addresses: strings,
        nodeName: 'string',
        conditions: obj({ ready: 'boolean', serving: 'boolean', terminating: 'boolean' }),
        targetRef: obj({ kind: 'string', name: 'string', namespace: 'string' }),
      }),
    ),
    ports: list(obj({ name: 'string', port: 'integer', protocol: 'string' })),
  },
  ConfigMap: { metadata, data: stringMap, binaryData: stringMap },
  ClusterRoleBinding: {
    metadata,
    subjects: list(obj({ kind: 'string', name: 'string', namespace: 'string', apiGroup: 'string' })),
    roleRef: obj({ kind: 'string', name: 'string', apiGroup: 'string' }),
  },
  RoleBinding: {
    metadata,
    subjects: list(obj({ kind: 'string', name: 'string', namespace: 'string', apiGroup: 'string' })),
    roleRef: obj({ kind: 'string', name: 'string', apiGroup: 'string' }),
  },
  CSIDriver: {
    metadata,
    spec: obj({ attachRequired: 'boolean', podInfoOnMount: 'boolean', volumeLifecycleModes: strings }),
  },
  StorageClass: {
    metadata,
    provisioner: 'string',
    parameters: stringMap,
    reclaimPolicy: 'string',
    volumeBindingMode: 'string',
    allowVolumeExpansion: 'boolean',
  },
  PersistentVolume: {
    metadata,
    spec: obj({
      storageClassName: 'string',
      capacity: map('int-or-string'),
      claimRef: obj({ namespace: 'string', name: 'string' }),
      local: obj({ path: 'string' }),
      hostPath: obj({ path: 'string', type: 'string' }),
      csi: obj({ driver: 'string', volumeHandle: 'string' }),
      nodeAffinity: obj({ required: obj({ nodeSelectorTerms }) }),
    }),
  },
  // Only bootstrap-token Secrets are kept (resources.ts); their data is base64 by definition.
  Secret: { metadata, type: 'string', data: map('base64'), stringData: stringMap },
};

function expectedOf(shape: FieldShape): string {
  if (typeof shape === 'string') {
    switch (shape) {
      case 'string':
        return 'a string';
      case 'number':
        return 'a number';
      case 'integer':
        return 'a whole number';
      case 'boolean':
        return 'true or false';
      case 'int-or-string':
        return 'a whole number or a string';
      case 'base64':
        return 'base64';
    }
  }
  if ('value' in shape) return 'a string';
  if ('object' in shape) return 'a mapping';
  if ('list' in shape) return 'a list';
  return 'a mapping';
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function fits(shape: FieldShape, v: unknown): boolean {
  if (typeof shape === 'string') {
    switch (shape) {
      case 'string':
        return typeof v === 'string';
      case 'number':
        return typeof v === 'number' && Number.isFinite(v);
      case 'integer':
        return typeof v === 'number' && Number.isInteger(v);
      case 'boolean':
        return typeof v === 'boolean';
      case 'int-or-string':
        return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
      case 'base64':
        return typeof v === 'string' && decodeBase64(v) !== undefined;
    }
  }
  if ('value' in shape) return typeof v === 'string';
  if ('list' in shape) return Array.isArray(v);
  return isRecord(v);
}

/** Checks `value` against `shape`; null fields of objects are dropped (see the module comment). */
function check(shape: FieldShape, value: unknown, path: (string | number)[]): ShapeProblem | undefined {
  if (!fits(shape, value)) return { path, expected: expectedOf(shape), found: value };
  if (typeof shape === 'string') return undefined;
  if ('value' in shape) {
    const text = value as string;
    if (shape.or?.includes(text)) return undefined;
    const problem = valueProblem(shape.value, text);
    return problem ? { path, expected: shape.value, found: text, problem } : undefined;
  }
  if ('object' in shape) return checkFields(shape.object, value as Record<string, unknown>, path);
  if ('list' in shape) {
    const items = value as unknown[];
    for (let i = 0; i < items.length; i++) {
      const p = check(shape.list, items[i], [...path, i]);
      if (p) return p;
    }
    return undefined;
  }
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const p = check(shape.map, v, [...path, k]);
    if (p) return p;
  }
  return undefined;
}

function checkFields(
  fields: Record<string, FieldShape>,
  o: Record<string, unknown>,
  path: (string | number)[],
): ShapeProblem | undefined {
  for (const [k, shape] of Object.entries(fields)) {
    const v = o[k];
    if (v === undefined) continue;
    if (v === null) {
      delete o[k];
      continue;
    }
    const p = check(shape, v, [...path, k]);
    if (p) return p;
  }
  return undefined;
}

/**
 * The first field of `o` (a Kubernetes object whose apiVersion, kind and metadata.name are
 * known good) that does not have the shape ferry reads it with, or undefined.
 */
export function objectShapeProblem(o: Record<string, unknown> & { kind: string }): ShapeProblem | undefined {
  const fields = OBJECT_SHAPES[o.kind] ?? { metadata };
  return checkFields(fields, o, []) ?? REFINEMENTS[o.kind]?.(o);
}

/** Checks one field's value depends on another field. */
const REFINEMENTS: Readonly<Record<string, (o: Record<string, unknown>) => ShapeProblem | undefined>> = {
  // An InternalIP or ExternalIP is an address; a Hostname or InternalDNS is a name.
  Node(o) {
    const addresses = (o.status as { addresses?: { type?: string; address?: string }[] } | undefined)
      ?.addresses;
    for (const [i, a] of (addresses ?? []).entries()) {
      if ((a.type !== 'InternalIP' && a.type !== 'ExternalIP') || a.address === undefined) continue;
      const problem = ipProblem(a.address);
      if (problem)
        return { path: ['status', 'addresses', i, 'address'], expected: 'ip', found: a.address, problem };
    }
    return undefined;
  },
  // The Cilium settings ferry carries into the kit's Cilium values.
  ConfigMap(o) {
    const m = o.metadata as { name?: string; namespace?: string };
    if (m.namespace !== 'kube-system' || m.name !== 'cilium-config') return undefined;
    const data = (o.data ?? {}) as Record<string, string>;
    for (const [key, kind] of Object.entries(CILIUM_CONFIG_KINDS)) {
      const text = data[key];
      if (text === undefined || text.trim() === '') continue;
      // Cilium takes its pool CIDRs separated by spaces or commas.
      const problem = valueProblem(
        kind,
        kind === 'cidrs'
          ? text
              .trim()
              .split(/[\s,]+/)
              .join(',')
          : text,
      );
      if (problem) return { path: ['data', key], expected: kind, found: text, problem };
    }
    return undefined;
  },
};

const CILIUM_CONFIG_KINDS: Readonly<Record<string, ValueKind>> = {
  'cluster-pool-ipv4-cidr': 'cidrs',
  'cluster-pool-ipv6-cidr': 'cidrs',
  'cluster-pool-ipv4-mask-size': 'mask-size',
  'ipv4-native-routing-cidr': 'cidrs',
  'k8s-service-host': 'host',
  'k8s-service-port': 'port',
};
