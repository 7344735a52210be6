/**
 * Values taken from the cluster are checked where they are read (docs/fuzz.md): a bad CIDR, endpoint,
 * address, duration or encryption key stops the load with exit 2, naming the file, line, object and
 * field or flag, instead of being carried into the kit. Edited copies of the example.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryIo } from '../cli/io.js';
import { runCli } from '../cli/run-cli.js';
import type { FerryError } from '../errors.js';
import { loadSnapshot } from './load.js';
import { saveSnapshot } from './store.js';
import { copyExample, type ExampleCopy, loadError } from './testing-example-copy.js';

let ex: ExampleCopy;
beforeEach(async () => {
  ex = await copyExample();
});
afterEach(async () => {
  await ex.cleanup();
});

/** The 1-based line of `text` in a file, to check the error points at it. */
async function lineOf(rel: string, text: string): Promise<number> {
  const lines = (await ex.read(rel)).split('\n');
  const i = lines.findIndex((l) => l.includes(text));
  expect(i, `${text} in ${rel}`).toBeGreaterThanOrEqual(0);
  return i + 1;
}

describe('static pod flags', () => {
  it('--service-cluster-ip-range=garbage: exit 2 at its line, and generate writes no kit', async () => {
    const m = 'manifests/cp-2/kube-apiserver.yaml';
    await ex.replace(m, '--service-cluster-ip-range=10.96.0.0/12', '--service-cluster-ip-range=garbage');
    const err = await loadError(ex.dir);
    expect(err.message).toBe('"garbage" is not a CIDR (ADDRESS/PREFIX, e.g. 10.96.0.0/12)');
    expect(err.location).toEqual({
      file: ex.path(m),
      line: await lineOf(m, 'garbage'),
      column: 7,
      object: 'kube-apiserver static pod of cp-2',
      field: '--service-cluster-ip-range',
    });
    const kit = ex.path('../kit');
    const io = memoryIo();
    const code = await runCli(
      [
        'generate',
        ex.dir,
        '--pki',
        ex.path('pki'),
        '-o',
        kit,
        '--bootstrap-token',
        'abcdef.0123456789abcdef',
      ],
      io,
    );
    expect(code, io.err).toBe(2);
    expect(await readdir(ex.path('..'))).not.toContain('kit');
  });

  it('an advertise address that is not an IP, and a duration flag that is not a duration', async () => {
    await ex.replace(
      'manifests/cp-1/kube-apiserver.yaml',
      '--advertise-address=10.20.0.11',
      '--advertise-address=10.20.0.1111',
    );
    expect((await loadError(ex.dir)).message).toBe('"10.20.0.1111" is not an IP address');
    await ex.replace(
      'manifests/cp-1/kube-apiserver.yaml',
      '--advertise-address=10.20.0.1111',
      '--advertise-address=10.20.0.11',
    );
    await ex.replace(
      'manifests/cp-3/kube-apiserver.yaml',
      '--secure-port=6443',
      '--secure-port=6443\n    - --event-ttl=forever',
    );
    const err = await loadError(ex.dir);
    expect(err.location?.field).toBe('--event-ttl');
    expect(err.message).toMatch(/^"forever" is not a duration/);
  });
});

describe('kubeadm configuration', () => {
  it('controlPlaneEndpoint https://[::::]:6443 (accepted before)', async () => {
    await ex.replace(
      'kubeadm-config.yaml',
      'controlPlaneEndpoint: k8s-api.lab.example:6443',
      'controlPlaneEndpoint: "https://[::::]:6443"',
    );
    const err = await loadError(ex.dir);
    expect(err.message).toBe('"https://[::::]:6443" is not an endpoint: [::::] is not an IPv6 address');
    expect(err.location).toMatchObject({
      file: ex.path('kubeadm-config.yaml'),
      line: await lineOf('kubeadm-config.yaml', 'controlPlaneEndpoint'),
      object: 'ClusterConfiguration',
      field: 'controlPlaneEndpoint',
    });
  });

  it('a certificate SAN, a pod subnet and an advertise address', async () => {
    await ex.replace('kubeadm-config.yaml', '  - 10.20.0.10\n', '  - 10.20.0.300\n');
    expect((await loadError(ex.dir)).location?.field).toBe('apiServer.certSANs[1]');
    await ex.replace('kubeadm-config.yaml', '  - 10.20.0.300\n', '  - 10.20.0.10\n');
    await ex.replace('kubeadm-config.yaml', 'podSubnet: 10.244.0.0/16', 'podSubnet: 10.244.0.0/33');
    expect((await loadError(ex.dir)).message).toBe(
      '"10.244.0.0/33" is not a CIDR: the prefix length must be 0-32',
    );
    await ex.replace('kubeadm-config.yaml', 'podSubnet: 10.244.0.0/33', 'podSubnet: 10.244.0.0/16');
    await ex.replace('kubeadm-config.yaml', 'advertiseAddress: 10.20.0.11', 'advertiseAddress: cp-1');
    const err = await loadError(ex.dir);
    expect(err.location).toMatchObject({
      object: 'InitConfiguration',
      field: 'localAPIEndpoint.advertiseAddress',
    });
  });

  it('a KubeletConfiguration duration', async () => {
    await ex.replace('kubeadm-config.yaml', 'shutdownGracePeriod: 60s', 'shutdownGracePeriod: sixty');
    const err = await loadError(ex.dir);
    expect(err.message).toBe('"sixty" is not a duration (a number with a unit: 90s, 5m, 1h30m, 300ms)');
    expect(err.location).toMatchObject({
      line: await lineOf('kubeadm-config.yaml', 'shutdownGracePeriod: sixty'),
      object: 'KubeletConfiguration',
      field: 'shutdownGracePeriod',
    });
  });

  it('the kubeadm-config ConfigMap is checked the same way, naming the ConfigMap', async () => {
    await ex.replace(
      'resources/configmaps.yaml',
      'serviceSubnet: 10.96.0.0/12',
      'serviceSubnet: 10.96.0.0/12,10.97.0.0/16',
    );
    const err = await loadError(ex.dir);
    expect(err.message).toBe(
      '"10.96.0.0/12,10.97.0.0/16" is not a CIDR list: two IPv4 CIDRs (at most one per IP family)',
    );
    expect(err.location?.object).toBe(
      'ClusterConfiguration in ConfigMap kube-system/kubeadm-config data.ClusterConfiguration',
    );
  });
});

describe('objects and the encryption configuration', () => {
  it('a Node InternalIP that is not an address', async () => {
    await ex.editJson('resources/nodes.json', (d) => {
      d.items[2].status.addresses[0].address = '10.20.0.999';
    });
    const err = await loadError(ex.dir);
    expect(err.message).toBe('"10.20.0.999" is not an IP address');
    expect(err.location).toMatchObject({ object: 'Node cp-3', field: 'status.addresses[0].address' });
  });

  it('an aescbc key of 5 bytes (it was carried as is), never quoting the key', async () => {
    await ex.replace('encryption-config.yaml', /secret: \S+/, 'secret: aGVsbG8=');
    const err = await loadError(ex.dir);
    expect(err.message).toBe('the aescbc key is 5 byte(s) long; aescbc takes keys of 16, 24 or 32 bytes');
    expect(err.location).toMatchObject({
      file: ex.path('encryption-config.yaml'),
      field: 'resources[0].providers[0].aescbc.keys[0].secret',
    });
    expect(`${err.message} ${err.remediation}`).not.toContain('aGVsbG8');
  });
});

describe('a saved snapshot edited by hand', () => {
  it('a flag value in components.json names the saved file and the field', async () => {
    const saved = ex.path('../saved');
    await saveSnapshot(await loadSnapshot(ex.dir, { strictPki: false }), saved);
    const file = join(saved, 'components.json');
    const doc = JSON.parse(await readFile(file, 'utf8'));
    const pod = doc.staticPods.findIndex(
      (p: { component: string }) => p.component === 'kube-controller-manager',
    );
    const flags: { name: string; value: string }[] = doc.staticPods[pod].flags;
    const i = flags.findIndex((f) => f.name === 'cluster-cidr');
    flags[i]!.value = '10.244.0.0/99';
    await writeFile(file, JSON.stringify(doc));
    const err = await loadError(saved);
    expect(err.location).toEqual({ file, field: `staticPods[${pod}].flags[${i}].value` });
    expect(err.message).toBe('--cluster-cidr "10.244.0.0/99" is not a CIDR: the prefix length must be 0-32');
  });
});

describe('configs embedded in ConfigMaps', () => {
  it('a bad value in kubelet-config names the file and the line of the ConfigMap key, not the embedded line', async () => {
    const m = 'resources/configmaps.yaml';
    const text = await ex.read(m);
    await writeFile(
      ex.path(m),
      text.replace(/clusterDNS:\n(\s+)- 10\.96\.0\.10/, 'clusterDNS:\n$1- not-an-ip'),
    );
    const err = await loadError(ex.dir);
    expect(err.message).toContain('"not-an-ip" is not an IP address');
    expect(err.location).toMatchObject({
      file: ex.path(m),
      line: await lineOf(m, 'kubelet: |'),
      field: 'clusterDNS[0]',
    });
    expect(err.location?.column).toBeUndefined();
  });
});

describe('versions', () => {
  it('kubernetesVersion v1.banana in kubeadm-config.yaml: exit 2 naming the file and field', async () => {
    const m = 'kubeadm-config.yaml';
    const text = await ex.read(m);
    await writeFile(ex.path(m), text.replace(/kubernetesVersion: \S+/, 'kubernetesVersion: v1.banana'));
    const err = await loadError(ex.dir);
    expect(err.message).toContain('"v1.banana" is not a version');
    expect(err.location).toMatchObject({ file: ex.path(m), field: 'kubernetesVersion' });
  });
});

describe('files that hold nothing or the wrong version', () => {
  it('an empty kubeadm-config.yaml or static pod manifest is exit 2 naming it', async () => {
    for (const m of ['kubeadm-config.yaml', 'manifests/cp-1/kube-apiserver.yaml']) {
      const before = await ex.read(m);
      await writeFile(ex.path(m), '# nothing\n');
      const err = await loadError(ex.dir);
      expect(err.location?.file, m).toBe(ex.path(m));
      await writeFile(ex.path(m), before);
    }
  });

  it('a KubeletConfiguration of an apiVersion Kubernetes never served is exit 2', async () => {
    const m = 'resources/configmaps.yaml';
    await ex.replace(m, 'apiVersion: kubelet.config.k8s.io/v1beta1', 'apiVersion: kubelet.config.k8s.io/v9');
    const err = await loadError(ex.dir);
    expect(err.message).toContain('unsupported KubeletConfiguration apiVersion kubelet.config.k8s.io/v9');
    expect(err.location?.file).toBe(ex.path(m));
  });
});

describe('values facts read from objects', () => {
  it('a bad cluster-info kubeconfig server names the file the ConfigMap was read from', async () => {
    const { deriveFacts } = await import('../facts/derive.js');
    const m = 'resources/cluster-info.yaml';
    const text = await ex.read(m);
    await writeFile(ex.path(m), text.replace(/server: https:\/\/[^\s]+/, 'server: https://[::::]:6443'));
    const s = await loadSnapshot(ex.dir, { strictPki: false });
    const err = (() => {
      try {
        deriveFacts(s, {});
      } catch (e) {
        return e as FerryError;
      }
      throw new Error('facts derived');
    })();
    expect(err.exitCode).toBe(2);
    expect(err.location).toMatchObject({ file: ex.path(m), object: 'ConfigMap kube-public/cluster-info' });
    expect(err.location?.line).toBeGreaterThan(0);
  });
});
