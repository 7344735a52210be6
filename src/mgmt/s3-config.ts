/**
 * Where backups go and how ferry reaches S3: `s3://BUCKET/PREFIX`, the endpoint, region and
 * credentials from flags, the environment or a credentials file. Secrets are never flags: a command
 * line is visible to every user of the machine (ps) and is what ferry prints back.
 */
import { inputError, usageError } from '../errors.js';
import { readTextFile } from '../util/input-file.js';

export interface S3Location {
  bucket: string;
  /** No leading or trailing slash; '' for the bucket's root. */
  prefix: string;
  /** The one key every backup of this location is a version of (the bucket is versioned). */
  key: string;
  url: string;
}

export const BACKUP_FILE = 'ferry-mgmt-backup.age';

export function parseS3Url(url: string, flag: string): S3Location {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!m)
    throw usageError(
      `${flag} must be s3://BUCKET[/PREFIX] with a valid bucket name; got "${url}"`,
      `e.g. ${flag} s3://mgmt-backups/prod`,
    );
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  return {
    bucket: m[1]!,
    prefix,
    key: prefix ? `${prefix}/${BACKUP_FILE}` : BACKUP_FILE,
    url: `s3://${m[1]}${prefix ? `/${prefix}` : ''}`,
  };
}

export interface S3Settings {
  endpoint?: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

export interface S3Flags {
  endpoint?: string | undefined;
  region?: string | undefined;
  credentialsFile?: string | undefined;
  profile?: string | undefined;
}

/** An AWS shared-credentials file (INI, `[profile]` then `key = value`). */
export function parseCredentialsFile(
  text: string,
  file: string,
  profile: string,
): { accessKeyId: string; secretAccessKey: string; sessionToken?: string; region?: string } {
  const sections = new Map<string, Map<string, string>>();
  let cur: Map<string, string> | undefined;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) return;
    const sec = /^\[\s*(?:profile\s+)?([^\]]+?)\s*\]$/.exec(line);
    if (sec) {
      cur = new Map();
      sections.set(sec[1]!, cur);
      return;
    }
    const kv = /^([A-Za-z_]+)\s*=\s*(.*)$/.exec(line);
    // The line itself is not quoted back: it may be a secret.
    if (!kv || !cur)
      throw inputError(
        'not a credentials file line (expected [profile] or key = value)',
        { file, line: i + 1 },
        'use the AWS shared credentials format: [default], aws_access_key_id = …, aws_secret_access_key = …',
      );
    cur.set(kv[1]!.toLowerCase(), kv[2]!.trim());
  });
  const s = sections.get(profile);
  const id = s?.get('aws_access_key_id');
  const secret = s?.get('aws_secret_access_key');
  if (!s || !id || !secret)
    throw inputError(
      `no profile [${profile}] with aws_access_key_id and aws_secret_access_key`,
      { file, field: profile },
      `add them under [${profile}], or choose another profile with --s3-profile`,
    );
  const token = s.get('aws_session_token');
  const region = s.get('region');
  return {
    accessKeyId: id,
    secretAccessKey: secret,
    ...(token && { sessionToken: token }),
    ...(region && { region }),
  };
}

export async function resolveS3Settings(flags: S3Flags, env: NodeJS.ProcessEnv): Promise<S3Settings> {
  let fromFile: ReturnType<typeof parseCredentialsFile> | undefined;
  const file = flags.credentialsFile ?? env['FERRY_S3_CREDENTIALS_FILE'];
  if (file)
    fromFile = parseCredentialsFile(
      await readTextFile(file, {
        flag: '--s3-credentials-file',
        provide: 'pass --s3-credentials-file an AWS shared credentials file',
      }),
      file,
      flags.profile ?? env['AWS_PROFILE'] ?? 'default',
    );
  const accessKeyId = fromFile?.accessKeyId ?? env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = fromFile?.secretAccessKey ?? env['AWS_SECRET_ACCESS_KEY'];
  if (!accessKeyId || !secretAccessKey)
    throw usageError(
      'no S3 credentials: neither --s3-credentials-file nor AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are set',
      'write them to a 0600 file in the AWS shared credentials format and pass --s3-credentials-file FILE (never on the command line)',
    );
  const sessionToken = fromFile ? fromFile.sessionToken : env['AWS_SESSION_TOKEN'];
  const region =
    flags.region ?? fromFile?.region ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'] ?? 'us-east-1';
  const endpoint = flags.endpoint ?? env['AWS_ENDPOINT_URL_S3'] ?? env['AWS_ENDPOINT_URL'];
  if (endpoint !== undefined && !/^https?:\/\/[^/\s]+\/?$/.test(endpoint))
    throw usageError(`--s3-endpoint must be http(s)://HOST[:PORT]; got "${endpoint}"`);
  return {
    ...(endpoint && { endpoint }),
    region,
    credentials: { accessKeyId, secretAccessKey, ...(sessionToken && { sessionToken }) },
  };
}
