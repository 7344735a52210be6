/**
 * The S3 side of backups through @aws-sdk/client-s3 (mgmt.md §8): a versioned bucket, one key per
 * location whose versions are the backups, a sha256 of each version's bytes in its metadata.
 * S3's answers become FerryErrors that say which bucket, key or version and what to do.
 */
import {
  DeleteObjectCommand,
  GetBucketVersioningCommand,
  GetObjectCommand,
  ListObjectVersionsCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { FerryError, inputError } from '../errors.js';
import { quietAwsSdkNodeWarning } from '../util/warnings.js';
import type { S3Location, S3Settings } from './s3-config.js';

export interface StoredVersion {
  versionId: string;
  lastModified: Date;
  size: number;
  isLatest: boolean;
}

export interface Downloaded {
  bytes: Uint8Array;
  versionId: string;
  lastModified: Date;
  metadata: Record<string, string>;
}

export interface BackupStore {
  requireVersioned(): Promise<void>;
  put(bytes: Uint8Array, metadata: Record<string, string>): Promise<string>;
  get(versionId?: string): Promise<Downloaded>;
  versions(): Promise<StoredVersion[]>;
  deleteVersion(versionId: string): Promise<void>;
  destroy(): void;
}

type AwsError = Error & { name: string; $metadata?: { httpStatusCode?: number }; code?: string };

function s3Error(err: unknown, what: string, loc: S3Location, endpoint: string | undefined): FerryError {
  const e = err as AwsError;
  const where = `${loc.url} (${endpoint ?? 'AWS'})`;
  switch (e.name) {
    case 'NoSuchBucket':
      return inputError(
        `${what}: bucket ${loc.bucket} does not exist at ${endpoint ?? 'AWS'}`,
        { object: loc.url },
        'create it with versioning enabled, or fix the bucket name',
        e,
      );
    case 'InvalidAccessKeyId':
    case 'SignatureDoesNotMatch':
    case 'AccessDenied':
    case 'Forbidden':
      return inputError(
        `${what}: S3 refused the credentials for ${where} (${e.name})`,
        { object: loc.url },
        'check the access key and secret in --s3-credentials-file (or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY) and the bucket policy',
        e,
      );
  }
  const status = e.$metadata?.httpStatusCode;
  if (status === undefined)
    return new FerryError('unreachable', `${what}: cannot reach S3 at ${where}: ${e.message}`, {
      remediation: 'check --s3-endpoint and that the S3 service answers; nothing was applied',
      cause: e,
    });
  return new FerryError(
    'unreachable',
    `${what}: S3 answered HTTP ${status} ${e.name} for ${where}: ${e.message}`,
    {
      remediation: 'retry later; if it persists check the S3 service',
      cause: e,
    },
  );
}

export function openBackupStore(loc: S3Location, settings: S3Settings): BackupStore {
  quietAwsSdkNodeWarning();
  const client = new S3Client({
    region: settings.region,
    credentials: settings.credentials,
    ...(settings.endpoint && { endpoint: settings.endpoint, forcePathStyle: true }),
    // ferry computes its own sha256 of every backup (mgmt.md §10): no SDK CRC32 framing on top.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 2,
  });
  const wrap = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof FerryError) throw err;
      throw s3Error(err, what, loc, settings.endpoint);
    }
  };

  return {
    requireVersioned: () =>
      wrap('checking bucket versioning', async () => {
        const v = await client.send(new GetBucketVersioningCommand({ Bucket: loc.bucket }));
        if (v.Status !== 'Enabled')
          throw inputError(
            `bucket ${loc.bucket} is not versioned (versioning ${v.Status ?? 'never enabled'}): a new backup would replace the previous one`,
            { object: loc.url },
            `enable versioning: aws s3api put-bucket-versioning --bucket ${loc.bucket} --versioning-configuration Status=Enabled`,
          );
      }),
    put: (bytes, metadata) =>
      wrap('uploading the backup', async () => {
        const out = await client.send(
          new PutObjectCommand({
            Bucket: loc.bucket,
            Key: loc.key,
            Body: bytes,
            ContentType: 'application/octet-stream',
            Metadata: metadata,
          }),
        );
        if (!out.VersionId || out.VersionId === 'null')
          throw inputError(
            `S3 stored ${loc.url} without a version id: the bucket is not versioned`,
            { object: loc.url },
            'enable versioning on the bucket',
          );
        return out.VersionId;
      }),
    get: (versionId) =>
      wrap(versionId ? `downloading version ${versionId}` : 'downloading the newest backup', async () => {
        let out: Record<string, unknown>;
        try {
          out = (await client.send(
            new GetObjectCommand({
              Bucket: loc.bucket,
              Key: loc.key,
              ...(versionId && { VersionId: versionId }),
            }),
          )) as unknown as Record<string, unknown>;
        } catch (err) {
          const name = (err as AwsError).name;
          if (name === 'NoSuchKey')
            throw inputError(
              `no backup at ${loc.url} (key ${loc.key} does not exist)`,
              { object: loc.url },
              'check the bucket and prefix; with no backup at all, build a new management cluster with `ferry mgmt bootstrap`',
            );
          if (name === 'NoSuchVersion' || (name === 'InvalidArgument' && versionId))
            throw inputError(
              `backup version ${versionId} does not exist at ${loc.url}`,
              { object: loc.url, field: '--version' },
              '`ferry mgmt status --from URL` lists the versions there; or omit --version for the newest',
            );
          throw err;
        }
        const body = out['Body'] as { transformToByteArray(): Promise<Uint8Array> } | undefined;
        let bytes: Uint8Array;
        try {
          bytes = body ? await body.transformToByteArray() : new Uint8Array();
        } catch (err) {
          throw new FerryError(
            'unreachable',
            `the download of ${loc.url} broke off: ${(err as Error).message}`,
            {
              remediation: 'retry when S3 answers again; nothing was applied',
              cause: err,
            },
          );
        }
        const expected = Number(out['ContentLength']);
        if (Number.isFinite(expected) && bytes.length !== expected)
          throw new FerryError(
            'unreachable',
            `the download of ${loc.url} broke off: ${bytes.length} of ${expected} bytes`,
            {
              remediation: 'retry when S3 answers again; nothing was applied',
            },
          );
        return {
          bytes,
          versionId: String(out['VersionId'] ?? ''),
          lastModified: (out['LastModified'] as Date | undefined) ?? new Date(0),
          metadata: (out['Metadata'] as Record<string, string> | undefined) ?? {},
        };
      }),
    versions: () =>
      wrap('listing backup versions', async () => {
        const out: StoredVersion[] = [];
        let keyMarker: string | undefined;
        let versionMarker: string | undefined;
        for (;;) {
          const page = await client.send(
            new ListObjectVersionsCommand({
              Bucket: loc.bucket,
              Prefix: loc.key,
              ...(keyMarker && { KeyMarker: keyMarker }),
              ...(versionMarker && { VersionIdMarker: versionMarker }),
            }),
          );
          for (const v of page.Versions ?? [])
            if (v.Key === loc.key && v.VersionId)
              out.push({
                versionId: v.VersionId,
                lastModified: v.LastModified ?? new Date(0),
                size: v.Size ?? 0,
                isLatest: v.IsLatest === true,
              });
          if (!page.IsTruncated) break;
          keyMarker = page.NextKeyMarker;
          versionMarker = page.NextVersionIdMarker;
        }
        return out.sort((a, b) => b.lastModified.getTime() - a.lastModified.getTime());
      }),
    deleteVersion: (versionId) =>
      wrap(`deleting version ${versionId}`, async () => {
        await client.send(
          new DeleteObjectCommand({ Bucket: loc.bucket, Key: loc.key, VersionId: versionId }),
        );
      }),
    destroy: () => client.destroy(),
  };
}
