/** Pod templates as the API server returns them inside a workload: the defaults it fills in. */
import type { Obj } from './objects.js';

function withContainerDefaults(c: Obj): Obj {
  const out: Obj = {
    imagePullPolicy: 'IfNotPresent',
    resources: {},
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
    ...c,
  };
  for (const p of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    const pr = out[p] as Obj | undefined;
    if (pr)
      out[p] = { failureThreshold: 3, periodSeconds: 10, successThreshold: 1, timeoutSeconds: 1, ...pr };
  }
  const ports = out['ports'] as Obj[] | undefined;
  if (ports) out['ports'] = ports.map((p) => ({ protocol: 'TCP', ...p }));
  return out;
}

function withVolumeDefaults(v: Obj): Obj {
  const cm = v['configMap'] as Obj | undefined;
  const secret = v['secret'] as Obj | undefined;
  const hp = v['hostPath'] as Obj | undefined;
  if (cm) return { ...v, configMap: { defaultMode: 420, ...cm } };
  if (secret) return { ...v, secret: { defaultMode: 420, ...secret } };
  if (hp) return { ...v, hostPath: { type: '', ...hp } };
  return v;
}

/** A pod template as the API server returns it inside a workload (defaults filled in). */
export function template(
  labels: Record<string, string>,
  spec: Obj,
  annotations?: Record<string, string>,
): Obj {
  const containers = (spec['containers'] as Obj[]).map(withContainerDefaults);
  const initContainers = (spec['initContainers'] as Obj[] | undefined)?.map(withContainerDefaults);
  const volumes = (spec['volumes'] as Obj[] | undefined)?.map(withVolumeDefaults);
  return {
    metadata: { ...(annotations ? { annotations } : {}), creationTimestamp: null, labels },
    spec: {
      dnsPolicy: 'ClusterFirst',
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      securityContext: {},
      terminationGracePeriodSeconds: 30,
      ...spec,
      containers,
      ...(initContainers ? { initContainers } : {}),
      ...(volumes ? { volumes } : {}),
    },
  };
}
