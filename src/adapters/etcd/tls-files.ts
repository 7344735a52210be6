/**
 * The etcd client certificate material named by --etcd-cacert, --etcd-cert and --etcd-key: the one
 * reader every etcd adapter uses, so a bad path is always an input error naming the flag and the
 * path (missing, a directory, a dangling link, no permission), never a raw ENOENT.
 */
import { readFileBytesSync } from '../../util/input-file.js';

export interface EtcdTlsFiles {
  caFile: string;
  certFile: string;
  keyFile: string;
}

export interface EtcdTlsBytes {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

const PROVIDE =
  'kubeadm: /etc/kubernetes/pki/etcd/ca.crt, /etc/kubernetes/pki/etcd/healthcheck-client.crt and .key (copied from a control-plane node)';

export function readEtcdTlsFiles(files: EtcdTlsFiles): EtcdTlsBytes {
  const read = (path: string, flag: string) =>
    readFileBytesSync(path, { flag, provide: `pass ${flag} a readable file (${PROVIDE})` });
  return {
    ca: read(files.caFile, '--etcd-cacert'),
    cert: read(files.certFile, '--etcd-cert'),
    key: read(files.keyFile, '--etcd-key'),
  };
}
