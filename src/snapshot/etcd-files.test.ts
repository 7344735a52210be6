import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { thrown } from '../testing-errors.js';
import {
  loadEtcdDir,
  parseAlarms,
  parseEndpointStatus,
  parseEtcdVersion,
  parseJsonLossless,
  parseMemberList,
} from './etcd-files.js';

// Captured from etcdctl 3.4.23 against a real etcd (one voter, one learner added).
const MEMBER_LIST =
  '{"header":{"cluster_id":4784889988317079755,"member_id":3874522139037040849,"raft_term":2},"members":[{"ID":2043521781664572000,"peerURLs":["http://127.0.55.2:2380"],"isLearner":true},{"ID":3874522139037040849,"name":"cap1","peerURLs":["http://127.0.55.1:2380"],"clientURLs":["http://127.0.55.1:2379"]}]}';
const ENDPOINT_STATUS =
  '[{"Endpoint":"http://127.0.55.1:2379","Status":{"header":{"cluster_id":4784889988317079755,"member_id":3874522139037040849,"revision":1,"raft_term":2},"version":"3.4.23","dbSize":20480,"leader":3874522139037040849,"raftIndex":4,"raftTerm":2,"raftAppliedIndex":4,"dbSizeInUse":16384}}]';

describe('parseJsonLossless', () => {
  it('keeps integers above 2^53 exact and leaves strings and small numbers alone', () => {
    const v = parseJsonLossless(
      '{"id": 17115582512862521359, "s": "12345678901234567890", "n": -5, "f": 1.5e3, "k": 9007199254740993}',
      {},
    );
    expect(v).toEqual({
      id: '17115582512862521359',
      s: '12345678901234567890',
      n: -5,
      f: 1500,
      k: '9007199254740993',
    });
    // JSON.parse would have rounded it:
    expect(String(JSON.parse('17115582512862521359'))).not.toBe('17115582512862521359');
  });

  it('reports a syntax error at its position in the original text', () => {
    const e = thrown(() =>
      parseJsonLossless('{\n  "ID": 17115582512862521359,\n  "name": cp-1\n}', { file: 'm.json' }),
    );
    expect(e.location).toMatchObject({ file: 'm.json', line: 3, column: 11 });
  });
});

describe('etcdctl outputs', () => {
  it('member list: exact IDs, learners, unstarted members', () => {
    expect(parseMemberList(MEMBER_LIST, 'member-list.json')).toEqual([
      {
        id: '2043521781664572000',
        name: '',
        peerURLs: ['http://127.0.55.2:2380'],
        clientURLs: [],
        isLearner: true,
      },
      {
        id: '3874522139037040849',
        name: 'cap1',
        peerURLs: ['http://127.0.55.1:2380'],
        clientURLs: ['http://127.0.55.1:2379'],
        isLearner: false,
      },
    ]);
  });

  it('endpoint status', () => {
    expect(parseEndpointStatus(ENDPOINT_STATUS, 'endpoint-status.json')).toEqual([
      {
        endpoint: 'http://127.0.55.1:2379',
        memberId: '3874522139037040849',
        leaderId: '3874522139037040849',
        version: '3.4.23',
        dbSize: 20480,
        dbSizeInUse: 16384,
        raftTerm: '2',
        raftIndex: '4',
        isLearner: false,
        errors: [],
      },
    ]);
  });

  it('version and alarms (empty output `{}` and numeric alarm types)', () => {
    expect(parseEtcdVersion('{"etcdserver":"3.4.23","etcdcluster":"3.4.0"}', 'v.json')).toEqual({
      server: '3.4.23',
      cluster: '3.4.0',
    });
    expect(parseEtcdVersion('{"etcdserver":"3.5.9","etcdcluster":"not_decided"}', 'v.json').server).toBe(
      '3.5.9',
    );
    expect(() => parseEtcdVersion('{"etcdserver":"three.five","etcdcluster":"3.5.0"}', 'v.json')).toThrow(
      /"three.five" is not a version/,
    );
    expect(parseAlarms('{}', 'a.json')).toEqual([]);
    expect(
      parseAlarms(
        '{"alarms":[{"memberID":17115582512862521359,"alarm":1},{"memberID":1,"alarm":"CORRUPT"}]}',
        'a.json',
      ),
    ).toEqual([
      { memberId: '17115582512862521359', alarm: 'NOSPACE' },
      { memberId: '1', alarm: 'CORRUPT' },
    ]);
  });

  it('malformed or mis-shaped files name the file, the field and the command to run', () => {
    const e = thrown(() => parseMemberList('{"members": {}}', 'etcd/member-list.json'));
    expect(e.location).toMatchObject({ file: 'etcd/member-list.json', field: 'members' });
    expect(e.remediation).toContain('etcdctl member list -w json');
    const id = thrown(() => parseMemberList('{"members": [{"ID": "x1"}]}', 'm.json'));
    expect(id.location?.field).toBe('members[0].ID');
    const tooBig = thrown(() => parseMemberList('{"members": [{"ID": 18446744073709551616}]}', 'm.json'));
    expect(tooBig.message).toContain('unsigned integer');
    const notList = thrown(() => parseEndpointStatus('{}', 's.json'));
    expect(notList.message).toContain('list of endpoint statuses');
    const truncated = thrown(() => parseEndpointStatus('[{"Endpoint":"x"', 's.json'));
    expect(truncated.message).toMatch(/^malformed JSON/);
  });
});

describe('loadEtcdDir', () => {
  it('reads whichever files are present, and nothing when none is', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-etcd-'));
    try {
      expect(await loadEtcdDir(dir, 'etcd')).toBeUndefined();
      await writeFile(join(dir, 'member-list.json'), MEMBER_LIST);
      await writeFile(join(dir, 'version.json'), '{"etcdserver":"3.4.23","etcdcluster":"3.4.0"}');
      const s = await loadEtcdDir(dir, 'etcd');
      expect(s?.source).toEqual({ kind: 'file', path: 'etcd' });
      expect(s?.members.map((m) => m.id)).toEqual(['2043521781664572000', '3874522139037040849']);
      expect(s?.endpoints).toEqual([]);
      expect(s?.alarms).toEqual([]);
      expect(s?.version).toEqual({ server: '3.4.23', cluster: '3.4.0' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
