/**
 * Values the kit writes that the audit's remediation texts quote: the generators take them from
 * here and so do the rules, so a finding never tells the operator one value while the kit carries
 * another (test/audit/kit-artifacts.test.ts compares them with a generated kit).
 */
import { KUBEPRISM, TALOS_ENCRYPTION_KEY_NAMES } from './talos.js';

/**
 * The Secrets write key the kit's rotation steps (kubeadm/30–32) move the cluster to, whatever it
 * writes with now: secretbox under Talos's name, the key every Talos ≤v1.13 template carries
 * (talos.md §4.6).
 */
export const KIT_ENCRYPTION_KEY = {
  provider: 'secretbox',
  name: TALOS_ENCRYPTION_KEY_NAMES.secretbox,
} as const;

/** `secretbox "key2"`: the key as the kit's scripts and the audit name it. */
export const KIT_ENCRYPTION_KEY_LABEL = `${KIT_ENCRYPTION_KEY.provider} "${KIT_ENCRYPTION_KEY.name}"`;

/**
 * The SANs the kit's step 10 adds to every kubeadm apiserver certificate: KubePrism clients dial
 * 127.0.0.1 and check the upstream certificate for it (talos.md §4.5).
 */
export const LOOPBACK_SANS = [KUBEPRISM.host, 'localhost'] as const;
