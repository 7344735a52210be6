/**
 * The etcd client certificate material named by --etcd-cacert, --etcd-cert and --etcd-key: the one
 * reader every etcd adapter uses, so that a path that cannot be read, or a file that does not hold
 * what its flag says (tls-check.ts), is always an input error naming the flag and the file, never a
 * raw ENOENT or an OpenSSL error after a connection attempt.
 */
import { readFileBytesSync } from '../../util/input-file.js';
import { checkEtcdTls } from './tls-check.js';

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
  const tls = {
    ca: read(files.caFile, '--etcd-cacert'),
    cert: read(files.certFile, '--etcd-cert'),
    key: read(files.keyFile, '--etcd-key'),
  };
  checkEtcdTls(tls, files);
  return tls;
}
