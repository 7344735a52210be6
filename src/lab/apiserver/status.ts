/**
 * Kubernetes `Status` answers (metav1.Status) and the error that carries one through the server.
 * Messages follow k8s.io/apimachinery/pkg/api/errors so that clients matching on them (kubectl,
 * client libraries, ferry's adapters) see what a real API server sends.
 */

export type StatusCause = { reason?: string; message?: string; field?: string };

export type StatusDetails = {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
};

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout';

export type Status = {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string };
  status: 'Success' | 'Failure';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
};

/** Group and resource (plural) of what a message is about: `deployments.apps`. */
export type GroupResource = { group: string; resource: string };

export function qualifiedResource(gr: GroupResource): string {
  return gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;
}

export class ApiError extends Error {
  readonly status: Status;
  /** Seconds for a Retry-After header (429, 503). */
  readonly retryAfterSeconds: number | undefined;

  constructor(status: Status, opts: { cause?: unknown; retryAfterSeconds?: number } = {}) {
    super(status.message ?? status.reason ?? `HTTP ${status.code}`, { cause: opts.cause });
    this.name = 'ApiError';
    this.status = status;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }

  get code(): number {
    return this.status.code;
  }
}

function failure(
  code: number,
  reason: StatusReason,
  message: string,
  details?: StatusDetails,
  metadata: Status['metadata'] = {},
): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata,
    status: 'Failure',
    message,
    reason,
    ...(details && { details }),
    code,
  };
}

export function success(details?: StatusDetails, code = 200): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    ...(details && { details }),
    code,
  };
}

function gdetails(gr: GroupResource, name: string): StatusDetails {
  return { name, ...(gr.group !== '' && { group: gr.group }), kind: gr.resource };
}

export function notFound(gr: GroupResource, name: string): ApiError {
  return new ApiError(
    failure(404, 'NotFound', `${qualifiedResource(gr)} "${name}" not found`, gdetails(gr, name)),
  );
}

export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return new ApiError(
    failure(409, 'AlreadyExists', `${qualifiedResource(gr)} "${name}" already exists`, gdetails(gr, name)),
  );
}

export const OBJECT_MODIFIED =
  'the object has been modified; please apply your changes to the latest version and try again';

export function conflict(gr: GroupResource, name: string, why: string = OBJECT_MODIFIED): ApiError {
  return new ApiError(
    failure(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualifiedResource(gr)} "${name}": ${why}`,
      gdetails(gr, name),
    ),
  );
}

export type FieldError = {
  field: string;
  type: 'Required' | 'Invalid' | 'Forbidden' | 'Duplicate' | 'NotSupported' | 'TooLong';
  /** Shown after `Invalid value:` for Invalid; omitted for the others. */
  value?: unknown;
  detail: string;
};

const CAUSE_REASON: Record<FieldError['type'], string> = {
  Required: 'FieldValueRequired',
  Invalid: 'FieldValueInvalid',
  Forbidden: 'FieldValueForbidden',
  Duplicate: 'FieldValueDuplicate',
  NotSupported: 'FieldValueNotSupported',
  TooLong: 'FieldValueTooLong',
};

function fieldErrorText(e: FieldError): string {
  switch (e.type) {
    case 'Required':
      return `${e.field}: Required value${e.detail ? `: ${e.detail}` : ''}`;
    case 'Invalid':
      return `${e.field}: Invalid value: ${JSON.stringify(e.value ?? null)}: ${e.detail}`;
    case 'Forbidden':
      return `${e.field}: Forbidden: ${e.detail}`;
    case 'Duplicate':
      return `${e.field}: Duplicate value: ${JSON.stringify(e.value ?? null)}`;
    case 'NotSupported':
      return `${e.field}: Unsupported value: ${JSON.stringify(e.value ?? null)}: ${e.detail}`;
    case 'TooLong':
      return `${e.field}: Too long: ${e.detail}`;
  }
}

/** 422 `Kind.group "name" is invalid: field: ...`, one cause per field error. */
export function invalid(kind: string, group: string, name: string, errors: FieldError[]): ApiError {
  const qualifiedKind = group === '' ? kind : `${kind}.${group}`;
  const texts = errors.map(fieldErrorText);
  const joined = texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
  return new ApiError(
    failure(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${joined}`, {
      name,
      ...(group !== '' && { group }),
      kind,
      causes: errors.map((e, i) => ({
        reason: CAUSE_REASON[e.type],
        message: texts[i]!.slice(e.field.length + 2),
        field: e.field,
      })),
    }),
  );
}

/** 422 without a field (a JSON patch that cannot be applied). */
export function unprocessable(message: string): ApiError {
  return new ApiError(failure(422, 'Invalid', message));
}

export function badRequest(message: string): ApiError {
  return new ApiError(failure(400, 'BadRequest', message));
}

export function unauthorized(): ApiError {
  return new ApiError(failure(401, 'Unauthorized', 'Unauthorized'));
}

export function forbidden(user: string, verb: string, gr: GroupResource, path: string): ApiError {
  const what = gr.resource === '' ? `path "${path}"` : `resource "${gr.resource}" in API group "${gr.group}"`;
  return new ApiError(
    failure(403, 'Forbidden', `forbidden: User "${user}" cannot ${verb} ${what}`, { kind: gr.resource }),
  );
}

/**
 * RBAC's refusal of a resource request, worded as kube-apiserver's authorizer words it:
 * `nodes is forbidden: User "u" cannot list resource "nodes" in API group "" at the cluster scope`,
 * `configmaps "x" is forbidden: … in the namespace "kube-system"`.
 */
export function forbiddenResource(
  user: string,
  verb: string,
  gr: GroupResource,
  where: { namespace?: string | undefined; name?: string | undefined },
): ApiError {
  const what = where.name === undefined ? qualifiedResource(gr) : `${qualifiedResource(gr)} "${where.name}"`;
  const scope =
    where.namespace === undefined ? 'at the cluster scope' : `in the namespace "${where.namespace}"`;
  return new ApiError(
    failure(
      403,
      'Forbidden',
      `${what} is forbidden: User "${user}" cannot ${verb} resource "${gr.resource}" in API group "${gr.group}" ${scope}`,
      {
        ...(where.name !== undefined && { name: where.name }),
        ...(gr.group !== '' && { group: gr.group }),
        kind: gr.resource,
      },
    ),
  );
}

/** 403 about one object: `poddisruptionbudgets.policy "web" is forbidden: why`. */
export function forbiddenObject(gr: GroupResource, name: string, why: string): ApiError {
  return new ApiError(
    failure(403, 'Forbidden', `${qualifiedResource(gr)} "${name}" is forbidden: ${why}`, {
      name,
      ...(gr.group !== '' && { group: gr.group }),
      kind: gr.resource,
    }),
  );
}

export function methodNotAllowed(method: string, what: string): ApiError {
  return new ApiError(
    failure(
      405,
      'MethodNotAllowed',
      `the server does not allow this method on the requested resource (${method} ${what})`,
    ),
  );
}

export function unsupportedMediaType(contentType: string, accepted: string[]): ApiError {
  return new ApiError(
    failure(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format (${contentType || 'none'}) - accepted media types include: ${accepted.join(', ')}`,
    ),
  );
}

export function tooLarge(limitBytes: number): ApiError {
  return new ApiError(
    failure(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limitBytes}`),
  );
}

/** 410 for a list continuation or watch whose revision has been compacted away. */
export function expired(message: string, continueToken?: string): ApiError {
  return new ApiError(
    failure(
      410,
      'Expired',
      message,
      undefined,
      continueToken === undefined ? {} : { continue: continueToken },
    ),
  );
}

export function tooManyRequests(
  message: string,
  causes: StatusCause[],
  retryAfterSeconds?: number,
): ApiError {
  return new ApiError(
    failure(429, 'TooManyRequests', message, {
      causes,
      ...(retryAfterSeconds !== undefined && retryAfterSeconds > 0 && { retryAfterSeconds }),
    }),
    retryAfterSeconds === undefined ? {} : { retryAfterSeconds },
  );
}

export function internalError(message: string, cause?: unknown): ApiError {
  return new ApiError(
    failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] }),
    { cause },
  );
}

export function serviceUnavailable(message: string, retryAfterSeconds = 1): ApiError {
  return new ApiError(failure(503, 'ServiceUnavailable', message, { retryAfterSeconds }), {
    retryAfterSeconds,
  });
}

export function timeout(message: string, cause?: unknown): ApiError {
  return new ApiError(failure(504, 'Timeout', `Timeout: ${message}`, { retryAfterSeconds: 1 }), {
    cause,
    retryAfterSeconds: 1,
  });
}
