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
  // GitOps owners (snapshot/gitops.ts): what says whether they reconcile and what they own.
  Application: {
    metadata,
    spec: obj({
      syncPolicy: obj({ automated: obj({ enabled: 'boolean', prune: 'boolean', selfHeal: 'boolean' }) }),
    }),
    status: obj({
      resources: list(obj({ group: 'string', kind: 'string', namespace: 'string', name: 'string' })),
    }),
  },
  Kustomization: {
    metadata,
    spec: obj({ suspend: 'boolean', interval: 'string' }),
    status: obj({ inventory: obj({ entries: list(obj({ id: 'string' })) }) }),
  },
  HelmRelease: {
    metadata,
    spec: obj({
      suspend: 'boolean',
      interval: 'string',
      releaseName: 'string',
      targetNamespace: 'string',
      driftDetection: obj({ mode: 'string' }),
    }),
  },
  // Only bootstrap-token Secrets are kept (resources.ts); their data is base64 by definition.
  Secret: { metadata, type: 'string', data: map('base64'), stringData: stringMap },
};

/** A compiled shape: the problem with a value, or undefined. Compiled once, run per object. */
type Checker = (v: unknown) => ShapeProblem | undefined;

const problem = (expected: string, found: unknown): ShapeProblem => ({ path: [], expected, found });

function within(key: string | number, p: ShapeProblem): ShapeProblem {
  // The path is built only on the way back from a problem: 150,000 pods are checked on a load.
  p.path.unshift(key);
  return p;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function compile(shape: FieldShape): Checker {
  if (typeof shape === 'string') {
    switch (shape) {
      case 'string':
        return (v) => (typeof v === 'string' ? undefined : problem('a string', v));
      case 'number':
        return (v) => (typeof v === 'number' && Number.isFinite(v) ? undefined : problem('a number', v));
      case 'integer':
        return (v) => (Number.isInteger(v) ? undefined : problem('a whole number', v));
      case 'boolean':
        return (v) => (typeof v === 'boolean' ? undefined : problem('true or false', v));
      case 'int-or-string':
        return (v) =>
          typeof v === 'string' || Number.isInteger(v) ? undefined : problem('a whole number or a string', v);
      case 'base64':
        return (v) =>
          typeof v === 'string' && decodeBase64(v) !== undefined ? undefined : problem('base64', v);
    }
  }
  if ('value' in shape) {
    const { value: kind, or } = shape;
    return (v) => {
      if (typeof v !== 'string') return problem('a string', v);
      if (or?.includes(v)) return undefined;
      const p = valueProblem(kind, v);
      return p ? { path: [], expected: kind, found: v, problem: p } : undefined;
    };
  }
  if ('list' in shape) {
    const item = compile(shape.list);
    return (v) => {
      if (!Array.isArray(v)) return problem('a list', v);
      for (let i = 0; i < v.length; i++) {
        const p = item(v[i]);
        if (p) return within(i, p);
      }
      return undefined;
    };
  }
  if ('map' in shape) {
    const value = compile(shape.map);
    return (v) => {
      if (!isRecord(v)) return problem('a mapping', v);
      for (const k in v) {
        const p = value(v[k]);
        if (p) return within(k, p);
      }
      return undefined;
    };
  }
  const fields = compileFields(shape.object);
  return (v) => (isRecord(v) ? fields(v) : problem('a mapping', v));
}

/** The fields of an object; a null one is dropped (see the module comment). */
function compileFields(
  fields: Record<string, FieldShape>,
): (o: Record<string, unknown>) => ShapeProblem | undefined {
  const keys = Object.keys(fields);
  const checkers = keys.map((k) => compile(fields[k] as FieldShape));
  return (o) => {
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      const v = o[k];
      if (v === undefined) continue;
      if (v === null) {
        delete o[k];
        continue;
      }
      const p = (checkers[i] as Checker)(v);
      if (p) return within(k, p);
    }
    return undefined;
  };
}

const CHECKERS = new Map(
  Object.entries(OBJECT_SHAPES).map(([kind, fields]) => [kind, compileFields(fields)]),
);
const METADATA_ONLY = compileFields({ metadata });

/**
 * The first field of `o` (a Kubernetes object whose apiVersion, kind and metadata.name are
 * known good) that does not have the shape ferry reads it with, or undefined.
 */
export function objectShapeProblem(o: Record<string, unknown> & { kind: string }): ShapeProblem | undefined {
  return (CHECKERS.get(o.kind) ?? METADATA_ONLY)(o) ?? REFINEMENTS[o.kind]?.(o);
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
