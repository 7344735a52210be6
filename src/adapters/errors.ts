/**
 * What waiting can and cannot cure, for the errors ferry's adapters really throw. A loop that polls
 * until something shows up (a booted node, a machine powered off) keeps going through answers that
 * say "not now" (connection refused, timeouts, 5xx, 429) but must stop at once on answers that will
 * be the same in two hours: rejected credentials, a missing permission, a certificate that does not
 * verify, a host name that does not resolve.
 *
 * The status code or error code may sit anywhere in a cause chain: the kube adapter wraps socket
 * errors in KubeNetworkError or an input error, the etcd adapter reports grpc errors (whose
 * certificate problems survive only as text) from several endpoints at once.
 */
import { isKubeApiError, type KubeApiError } from '../ports/kube.js';

export type IncurableKind = 'credentials' | 'permission' | 'tls' | 'unknown-host';

export interface Incurable {
  kind: IncurableKind;
  /** What happened, in one line: the adapter's own message for the failing request. */
  reason: string;
  /** What the operator must change; waiting will not. */
  remediation: string;
}

/** Node's codes for a server certificate that does not verify. */
const TLS_VERIFY_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The server refused ferry's client certificate during the handshake. */
const TLS_CLIENT_CERT_CODES = new Set([
  'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
  'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
  'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED',
  'ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED',
]);

/**
 * The same failures as grpc-js reports them (etcd): only OpenSSL's text survives, e.g.
 * "14 UNAVAILABLE: No connection established. Last error: Error: unable to verify the first certificate".
 */
const TLS_VERIFY_TEXT =
  /unable to verify the first certificate|self[- ]signed certificate|unable to get (local )?issuer certificate|certificate has expired|certificate is not yet valid|certificate signature failure|Hostname\/IP does not match certificate's altnames/i;
const TLS_CLIENT_CERT_TEXT = /alert (unknown ca|bad certificate|certificate required|certificate expired)/i;
const GRPC_UNAUTHENTICATED = /\b16 UNAUTHENTICATED\b/;
const GRPC_PERMISSION_DENIED = /\b7 PERMISSION_DENIED\b/;

const SERVER_TLS_FIX =
  "make the CA ferry trusts match the server's certificate (kubeconfig certificate-authority(-data) and tls-server-name, or --etcd-cacert for etcd) and the address one of its names; renew a certificate that has expired (kubeadm certs renew)";

/** Every error in the chain: `cause` links and the members of an AggregateError, outermost first. */
export function errorChain(err: unknown): unknown[] {
  const out: unknown[] = [];
  const queue: unknown[] = [err];
  while (queue.length > 0 && out.length < 32) {
    const e = queue.shift();
    if (e === undefined || e === null || out.includes(e)) continue;
    out.push(e);
    if (e instanceof AggregateError) queue.push(...e.errors);
    if (e instanceof Error) queue.push(e.cause);
  }
  return out;
}

/** One line for a person watching the wait: the outermost message, which the adapters make readable. */
export function errorSummary(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/** The incurable failure in `err`'s chain, or undefined when waiting may still help. */
export function incurableByWaiting(err: unknown): Incurable | undefined {
  const reason = errorSummary(err);
  const chain = errorChain(err);
  for (const e of chain) {
    if (isKubeApiError(e)) {
      if (e.status === 401) return { kind: 'credentials', reason, remediation: credentialsFix(e.address) };
      if (e.status === 403) return { kind: 'permission', reason, remediation: permissionFix(e) };
      continue;
    }
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    if (TLS_VERIFY_CODES.has(code)) return { kind: 'tls', reason, remediation: SERVER_TLS_FIX };
    if (TLS_CLIENT_CERT_CODES.has(code)) return { kind: 'tls', reason, remediation: clientCertFix() };
    if (code === 'ENOTFOUND') {
      // The wrapper carries the code, getaddrinfo's own error the name.
      const host = chain
        .map((x) => (x as { hostname?: unknown }).hostname)
        .find((h) => typeof h === 'string');
      return { kind: 'unknown-host', reason, remediation: unknownHostFix(host as string | undefined) };
    }
  }
  // grpc (etcd) keeps only the text of what went wrong underneath.
  for (const e of chain) {
    const text = e instanceof Error ? e.message : String(e);
    if (TLS_VERIFY_TEXT.test(text)) return { kind: 'tls', reason, remediation: SERVER_TLS_FIX };
    if (TLS_CLIENT_CERT_TEXT.test(text)) return { kind: 'tls', reason, remediation: clientCertFix() };
    if (GRPC_UNAUTHENTICATED.test(text))
      return {
        kind: 'credentials',
        reason,
        remediation: 'give etcd client credentials it accepts (--etcd-cert/--etcd-key signed by the etcd CA)',
      };
    if (GRPC_PERMISSION_DENIED.test(text))
      return {
        kind: 'permission',
        reason,
        remediation:
          "give the etcd client certificate's user the role it needs, or use the etcd healthcheck-client or apiserver-etcd-client certificate",
      };
  }
  return undefined;
}

function credentialsFix(address: string): string {
  return `give credentials the API server at ${address} accepts: renew the kubeconfig's client certificate or token (kubeadm: a fresh copy of /etc/kubernetes/admin.conf, or kubeadm kubeconfig user)`;
}

function clientCertFix(): string {
  return "the server refused ferry's client certificate: use one signed by the CA the server trusts, and renew it if it has expired";
}

function unknownHostFix(host: string | undefined): string {
  return `${host ? `the host name ${host}` : 'the host name'} does not resolve: fix the address (the kubeconfig's server, the etcd endpoints or the planned node address) or the DNS record`;
}

function permissionFix(e: KubeApiError): string {
  const what = requestedAccess(e);
  const can = what ? `kubectl auth can-i ${what.verb} ${what.resource}` : 'kubectl auth can-i --list';
  return `${what ? `the kubeconfig's user may not ${what.verb} ${what.resource}` : "the kubeconfig's user lacks a permission"}: grant it (check with \`${can}\`) or use an admin kubeconfig (a copy of /etc/kubernetes/admin.conf)`;
}

/** The RBAC verb and resource of a refused request, from its method and path. */
export function requestedAccess(e: KubeApiError): { verb: string; resource: string } | undefined {
  const method = ((e as { method?: unknown }).method as string | undefined) ?? 'GET';
  const [pathname = '', search = ''] = e.path.split('?');
  const parts = pathname.split('/').filter(Boolean);
  // /api/v1/... or /apis/GROUP/VERSION/...
  let group: string;
  let rest: string[];
  if (parts[0] === 'api') {
    group = '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    group = parts[1] as string;
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const [plural, name, sub] = rest;
  if (!plural) return undefined;
  const resource = `${plural}${sub ? `/${sub}` : ''}${group ? `.${group}` : ''}`;
  const named = name !== undefined;
  const verb =
    method === 'GET'
      ? named
        ? 'get'
        : /(^|&)watch=(true|1)/.test(search)
          ? 'watch'
          : 'list'
      : method === 'POST'
        ? 'create'
        : method === 'PUT'
          ? 'update'
          : method === 'PATCH'
            ? 'patch'
            : method === 'DELETE'
              ? named
                ? 'delete'
                : 'deletecollection'
              : method.toLowerCase();
  return { verb, resource };
}
