import { describe, expect, it } from 'vitest';
import type { FerryError } from '../errors.js';
import { parseCredentialsFile, parseS3Url, resolveS3Settings } from './s3-config.js';

describe('parseS3Url', () => {
  it('splits bucket and prefix and names the one key', () => {
    expect(parseS3Url('s3://mgmt-backups/prod/eu/', '--to')).toEqual({
      bucket: 'mgmt-backups',
      prefix: 'prod/eu',
      key: 'prod/eu/ferry-mgmt-backup.age',
      url: 's3://mgmt-backups/prod/eu',
    });
    expect(parseS3Url('s3://bkt', '--to').key).toBe('ferry-mgmt-backup.age');
  });
  it('refuses what is not s3://BUCKET', () => {
    for (const u of ['https://x/y', 's3://', 's3://UPPER/x', 'mgmt-backups/prod'])
      expect(() => parseS3Url(u, '--to'), u).toThrow(/--to must be s3:\/\/BUCKET/);
  });
});

describe('credentials', () => {
  it('reads a profile of an AWS shared credentials file', () => {
    const text =
      '[default]\naws_access_key_id = A\naws_secret_access_key = B\n\n[profile ops]\naws_access_key_id=C\naws_secret_access_key=D\nregion = eu-west-1\n';
    expect(parseCredentialsFile(text, 'f', 'default')).toEqual({ accessKeyId: 'A', secretAccessKey: 'B' });
    expect(parseCredentialsFile(text, 'f', 'ops')).toEqual({
      accessKeyId: 'C',
      secretAccessKey: 'D',
      region: 'eu-west-1',
    });
  });
  it('names the line of a bad file without quoting it (it may be a secret)', () => {
    try {
      parseCredentialsFile('[default]\nsupersecretvalue\n', 'creds', 'default');
      expect.unreachable();
    } catch (err) {
      expect((err as FerryError).location).toEqual({ file: 'creds', line: 2 });
      expect((err as FerryError).message).not.toContain('supersecretvalue');
    }
  });
  it('takes the environment when no file is given, and refuses to run without credentials', async () => {
    const s = await resolveS3Settings(
      {},
      { AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b', AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9' },
    );
    expect(s).toEqual({
      endpoint: 'http://127.0.0.1:9',
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    });
    await expect(resolveS3Settings({}, {})).rejects.toThrow(/no S3 credentials/);
  });
});
