/**
 * etcd state from `etcdctl -w json` outputs and the /version endpoint. etcdctl prints uint64
 * member IDs as bare JSON numbers above 2^53, which JSON.parse silently rounds: big integers are
 * quoted before parsing and every ID is kept as an exact decimal string.
 */
import { join } from 'node:path';
import { inputError } from '../errors.js';
import { readOptionalTextFile } from '../util/input-file.js';
import type { EtcdEndpointStatus, EtcdMember, EtcdState } from './model.js';
import { isRecord } from './validate.js';
import { urlProblem, versionProblem } from './values.js';
import { jsonError, type TextOrigin } from './yaml.js';

/** Parses JSON keeping integers that may exceed 2^53 as decimal strings. */
export function parseJsonLossless(text: string, origin: TextOrigin, remediation?: string): unknown {
  let out = '';
  let last = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      i++;
      while (i < n) {
        const s = text.charCodeAt(i);
        if (s === 92 /* \ */) i += 2;
        else if (s === 34) {
          i++;
          break;
        } else i++;
      }
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      const start = i;
      i++;
      while (i < n && /[0-9.eE+-]/.test(text[i] as string)) i++;
      const tok = text.slice(start, i);
      // 15 digits is always exact in a double; anything longer is kept as text.
      if (/^-?\d{16,}$/.test(tok)) {
        out += `${text.slice(last, start)}"${tok}"`;
        last = i;
      }
    } else {
      i++;
    }
  }
  out += text.slice(last);
  try {
    return JSON.parse(out);
  } catch {
    // Report the position in the user's text, not in the rewritten one.
    try {
      JSON.parse(text);
    } catch (cause) {
      throw jsonError(text, cause as Error, origin, remediation);
    }
    throw jsonError(text, new Error('invalid JSON'), origin, remediation);
  }
}

const COMMANDS: Record<string, string> = {
  'member-list.json': 'etcdctl member list -w json',
  'endpoint-status.json': 'etcdctl endpoint status --cluster -w json',
  'version.json': 'curl --cacert CA --cert CERT --key KEY https://MEMBER:2379/version',
  'alarms.json': 'etcdctl alarm list -w json',
};

const UINT64_MAX = 2n ** 64n - 1n;

class Reader {
  constructor(
    readonly file: string,
    readonly command: string,
  ) {}

  get remediation(): string {
    return `produce the file again with \`${this.command}\``;
  }

  parse(text: string): unknown {
    return parseJsonLossless(text, { file: this.file }, this.remediation);
  }

  fail(field: string, message: string): never {
    throw inputError(message, { file: this.file, field }, this.remediation);
  }

  u64(v: unknown, field: string): string {
    if (typeof v === 'string' && /^\d+$/.test(v) && BigInt(v) <= UINT64_MAX) return BigInt(v).toString();
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
    return this.fail(field, `expected an unsigned integer, found ${JSON.stringify(v)}`);
  }

  optU64(v: unknown, field: string): string | undefined {
    return v === undefined || v === null ? undefined : this.u64(v, field);
  }

  optNumber(v: unknown, field: string): number | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'number') return v;
    if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
    return this.fail(field, `expected a number, found ${JSON.stringify(v)}`);
  }

  strings(v: unknown, field: string): string[] {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
      this.fail(field, 'expected a list of strings');
    return v;
  }

  /** Member URLs: the plan dials them, so each must be a URL with a valid host. */
  urls(v: unknown, field: string): string[] {
    const list = this.strings(v, field);
    list.forEach((u, i) => {
      const problem = urlProblem(u);
      if (problem) this.fail(`${field}[${i}]`, `${JSON.stringify(u)} is ${problem}`);
    });
    return list;
  }

  record(v: unknown, field: string): Record<string, unknown> {
    if (!isRecord(v))
      this.fail(field, `expected an object, found ${Array.isArray(v) ? 'a list' : JSON.stringify(v)}`);
    return v;
  }
}

export function parseMemberList(text: string, file: string): EtcdMember[] {
  const r: Reader = new Reader(file, COMMANDS['member-list.json'] as string);
  const o = r.record(r.parse(text), '');
  if (!Array.isArray(o.members)) r.fail('members', 'expected a members list');
  return o.members.map((m, i) => {
    const at = `members[${i}]`;
    const mo = r.record(m, at);
    const name = mo.name ?? '';
    if (typeof name !== 'string') r.fail(`${at}.name`, 'expected a string');
    return {
      id: r.u64(mo.ID, `${at}.ID`),
      // An added but never started member has no name and no client URLs.
      name,
      peerURLs: r.urls(mo.peerURLs, `${at}.peerURLs`),
      clientURLs: r.urls(mo.clientURLs, `${at}.clientURLs`),
      isLearner: mo.isLearner === true,
    };
  });
}

export function parseEndpointStatus(text: string, file: string): EtcdEndpointStatus[] {
  const r: Reader = new Reader(file, COMMANDS['endpoint-status.json'] as string);
  const v = r.parse(text);
  if (!Array.isArray(v)) r.fail('', 'expected a list of endpoint statuses');
  return v.map((e, i) => {
    const at = `[${i}]`;
    const eo = r.record(e, at);
    if (typeof eo.Endpoint !== 'string') r.fail(`${at}.Endpoint`, 'expected the endpoint URL');
    const out: EtcdEndpointStatus = { endpoint: eo.Endpoint, errors: [] };
    if (eo.Status === undefined || eo.Status === null) return out;
    const s = r.record(eo.Status, `${at}.Status`);
    const header = s.header === undefined ? {} : r.record(s.header, `${at}.Status.header`);
    const set = <K extends keyof EtcdEndpointStatus>(k: K, val: EtcdEndpointStatus[K] | undefined) => {
      if (val !== undefined) out[k] = val;
    };
    set('memberId', r.optU64(header.member_id, `${at}.Status.header.member_id`));
    set('leaderId', r.optU64(s.leader, `${at}.Status.leader`));
    if (s.version !== undefined) {
      if (typeof s.version !== 'string') r.fail(`${at}.Status.version`, 'expected a version string');
      out.version = s.version;
    }
    set('dbSize', r.optNumber(s.dbSize, `${at}.Status.dbSize`));
    set('dbSizeInUse', r.optNumber(s.dbSizeInUse, `${at}.Status.dbSizeInUse`));
    set('raftTerm', r.optU64(s.raftTerm, `${at}.Status.raftTerm`));
    set('raftIndex', r.optU64(s.raftIndex, `${at}.Status.raftIndex`));
    out.isLearner = s.isLearner === true;
    out.errors = r.strings(s.errors, `${at}.Status.errors`);
    return out;
  });
}

export function parseEtcdVersion(text: string, file: string): { server: string; cluster: string } {
  const r: Reader = new Reader(file, COMMANDS['version.json'] as string);
  const o = r.record(r.parse(text), '');
  if (typeof o.etcdserver !== 'string') r.fail('etcdserver', 'expected the server version');
  if (typeof o.etcdcluster !== 'string') r.fail('etcdcluster', 'expected the cluster version');
  // etcdcluster may be "not_decided" while a cluster starts; the server's own version is always one.
  const problem = versionProblem(o.etcdserver);
  if (problem) r.fail('etcdserver', problem);
  return { server: o.etcdserver, cluster: o.etcdcluster };
}

// etcdctl prints the AlarmType enum as its number.
const ALARM_NAMES: Record<number, string> = { 0: 'NONE', 1: 'NOSPACE', 2: 'CORRUPT' };

export function parseAlarms(text: string, file: string): EtcdState['alarms'] {
  const r: Reader = new Reader(file, COMMANDS['alarms.json'] as string);
  const o = r.record(r.parse(text), '');
  if (o.alarms === undefined || o.alarms === null) return [];
  if (!Array.isArray(o.alarms)) r.fail('alarms', 'expected a list');
  return o.alarms.map((a, i) => {
    const at = `alarms[${i}]`;
    const ao = r.record(a, at);
    let alarm: string;
    if (typeof ao.alarm === 'string') alarm = ao.alarm;
    else if (typeof ao.alarm === 'number') alarm = ALARM_NAMES[ao.alarm] ?? `ALARM_${ao.alarm}`;
    else if (ao.alarm === undefined) alarm = 'NONE';
    else return r.fail(`${at}.alarm`, 'expected an alarm name or number');
    return { memberId: r.u64(ao.memberID ?? 0, `${at}.memberID`), alarm };
  });
}

/**
 * Reads the etcd/ folder of a files directory: any of its four files may be missing.
 * Returns undefined when none is there.
 */
export async function loadEtcdDir(dir: string, displayDir: string): Promise<EtcdState | undefined> {
  const read = (name: string): Promise<string | undefined> =>
    readOptionalTextFile(join(dir, name), {
      shown: join(displayDir, name),
      provide: `save it again with \`${COMMANDS[name]}\``,
    });
  const [members, status, version, alarms] = await Promise.all(
    ['member-list.json', 'endpoint-status.json', 'version.json', 'alarms.json'].map(read),
  );
  if (members === undefined && status === undefined && version === undefined && alarms === undefined)
    return undefined;
  const state: EtcdState = {
    source: { kind: 'file', path: displayDir },
    members: members === undefined ? [] : parseMemberList(members, join(displayDir, 'member-list.json')),
    endpoints:
      status === undefined ? [] : parseEndpointStatus(status, join(displayDir, 'endpoint-status.json')),
    alarms: alarms === undefined ? [] : parseAlarms(alarms, join(displayDir, 'alarms.json')),
  };
  if (version !== undefined) state.version = parseEtcdVersion(version, join(displayDir, 'version.json'));
  return state;
}
