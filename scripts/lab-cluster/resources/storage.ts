/** Storage: the Cinder CSIDriver, the default StorageClass and postgres's PersistentVolumes. */
import type { Allocator } from '../allocator.js';
import type { K8s } from '../objects.js';
import { plus, uidFor } from '../seed.js';

export function storage(alloc: Allocator): K8s[] {
  const driver = 'cinder.csi.openstack.org';
  // Built before the driver and class, so they hold the lower resourceVersions in the committed output.
  const pvs: K8s[] = [0, 1, 2].map((i) => {
    const claimUid = uidFor(`PersistentVolumeClaim/shop/data-postgres-${i}`);
    const name = `pvc-${claimUid}`;
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: alloc.meta('PersistentVolume', name, undefined, plus('2025-03-04T10:15:20Z', i * 95), {
        annotations: {
          'pv.kubernetes.io/provisioned-by': driver,
          'volume.kubernetes.io/provisioner-deletion-secret-name': '',
        },
        finalizers: ['external-provisioner.volume.kubernetes.io/finalizer', 'kubernetes.io/pv-protection'],
      }),
      spec: {
        accessModes: ['ReadWriteOnce'],
        capacity: { storage: '20Gi' },
        claimRef: {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          name: `data-postgres-${i}`,
          namespace: 'shop',
          uid: claimUid,
        },
        csi: {
          driver,
          fsType: 'ext4',
          volumeAttributes: {
            'storage.kubernetes.io/csiProvisionerIdentity': '1739284939122-8081-cinder.csi.openstack.org',
          },
          volumeHandle: uidFor(`cinder-volume/${i}`),
        },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              {
                matchExpressions: [
                  { key: 'topology.cinder.csi.openstack.org/zone', operator: 'In', values: ['nova'] },
                ],
              },
            ],
          },
        },
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'csi-cinder',
        volumeMode: 'Filesystem',
      },
      status: { lastPhaseTransitionTime: plus('2025-03-04T10:15:21Z', i * 95), phase: 'Bound' },
    };
  });
  return [
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'CSIDriver',
      metadata: alloc.meta('CSIDriver', driver, undefined, '2025-02-12T14:02:19Z'),
      spec: {
        attachRequired: true,
        fsGroupPolicy: 'ReadWriteOnceWithFSType',
        podInfoOnMount: true,
        requiresRepublish: false,
        seLinuxMount: false,
        storageCapacity: false,
        volumeLifecycleModes: ['Persistent', 'Ephemeral'],
      },
    },
    {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: alloc.meta('StorageClass', 'csi-cinder', undefined, '2025-02-12T14:02:19Z', {
        annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' },
      }),
      allowVolumeExpansion: true,
      provisioner: driver,
      reclaimPolicy: 'Delete',
      volumeBindingMode: 'WaitForFirstConsumer',
    },
    ...pvs,
  ];
}
