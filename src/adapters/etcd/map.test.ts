import { describe, expect, it } from 'vitest';
import type { RawMemberList, RawStatus } from '../../ports/etcd.js';
import { alarmName, mapEtcdState, mapStatus, uint64String } from './map.js';

// Real-looking member IDs: all above 2^53, where JSON numbers lose digits.
const ID1 = '10501334649042878790'; // 0x91bc3c398fb3c146
const ID2 = '17420758633406558497';
const ID3 = '9372538179322589801';

const memberList: RawMemberList = {
  header: { cluster_id: '14841639068965178418', member_id: ID1 },
  members: [
    {
      ID: ID1,
      name: 'cp1',
      peerURLs: ['https://10.0.0.11:2380'],
      clientURLs: ['https://10.0.0.11:2379'],
      isLearner: false,
    },
    {
      ID: ID2,
      name: 'cp2',
      peerURLs: ['https://10.0.0.12:2380'],
      clientURLs: ['https://10.0.0.12:2379'],
      isLearner: false,
    },
    // added, never started: no name, no client URLs (etcd3 leaves isLearner out when false)
    { ID: ID3, name: '', peerURLs: ['https://10.0.0.13:2380'], clientURLs: [] },
  ],
};

const status = (memberId: string): RawStatus => ({
  header: { member_id: memberId },
  version: '3.5.16',
  dbSize: '25165824',
  dbSizeInUse: '12582912',
  leader: ID2,
  raftIndex: '18446744073709551615', // uint64 max stays exact too
  raftTerm: '7',
  isLearner: false,
  errors: [],
});

describe('etcd answers → EtcdState', () => {
  it('keeps member IDs above 2^53 exact', () => {
    const state = mapEtcdState({
      memberListEndpoint: 'https://10.0.0.11:2379',
      memberList,
      statuses: [{ endpoint: 'https://10.0.0.11:2379', answer: { ok: true, value: status(ID1) } }],
      version: { etcdserver: '3.5.16', etcdcluster: '3.5.0' },
      alarms: { alarms: [] },
    });
    expect(state.members.map((m) => m.id)).toEqual([ID1, ID2, ID3]);
    expect(Number(ID1).toString()).not.toBe(ID1); // the trap the strings avoid
    expect(state.members[2]).toEqual({
      id: ID3,
      name: '',
      peerURLs: ['https://10.0.0.13:2380'],
      clientURLs: [],
      isLearner: false,
    });
    expect(state.endpoints[0]).toEqual({
      endpoint: 'https://10.0.0.11:2379',
      memberId: ID1,
      leaderId: ID2,
      version: '3.5.16',
      dbSize: 25165824,
      dbSizeInUse: 12582912,
      raftTerm: '7',
      raftIndex: '18446744073709551615',
      isLearner: false,
      errors: [],
    });
    expect(state.version).toEqual({ server: '3.5.16', cluster: '3.5.0' });
    expect(state.source).toEqual({ kind: 'etcd', endpoint: 'https://10.0.0.11:2379' });
  });

  it('records a failed endpoint as errors, and unknown alarms as an empty list', () => {
    const s = mapStatus('https://10.0.0.12:2379', {
      ok: false,
      error: '14 UNAVAILABLE: No connection established',
    });
    expect(s).toEqual({
      endpoint: 'https://10.0.0.12:2379',
      errors: ['14 UNAVAILABLE: No connection established'],
    });
    const state = mapEtcdState({ memberListEndpoint: 'e', memberList, statuses: [] });
    expect(state.alarms).toEqual([]);
    expect(state.version).toBeUndefined();
  });

  it('normalizes alarm names from etcd3 enum names and etcdctl numbers, dropping NONE', () => {
    const state = mapEtcdState({
      memberListEndpoint: 'e',
      memberList,
      statuses: [],
      alarms: {
        alarms: [
          { memberID: ID1, alarm: 'Nospace' },
          { memberID: BigInt(ID2), alarm: 2 },
          { memberID: ID3, alarm: 'None' },
        ],
      },
    });
    expect(state.alarms).toEqual([
      { memberId: ID1, alarm: 'NOSPACE' },
      { memberId: ID2, alarm: 'CORRUPT' },
    ]);
    expect(alarmName('NOSPACE')).toBe('NOSPACE');
  });

  it('refuses numbers that already lost precision and values that are not uint64', () => {
    expect(() => uint64String(Number(ID1), 'ID')).toThrow(/not exact/);
    expect(() => uint64String('-1', 'ID')).toThrow(/not a uint64/);
    expect(() => uint64String('18446744073709551616', 'ID')).toThrow(/not a uint64/);
    expect(() => uint64String(2n ** 64n, 'ID')).toThrow(/not a uint64/);
    expect(uint64String(42, 'ID')).toBe('42');
    expect(uint64String(' 007 ', 'ID')).toBe('7');
    expect(() =>
      mapEtcdState({
        memberListEndpoint: 'e',
        memberList: { members: [{ ...memberList.members[0]!, ID: 2 ** 60 + 1 }] },
        statuses: [],
      }),
    ).toThrow(/members\[0\]\.ID/);
  });
});
