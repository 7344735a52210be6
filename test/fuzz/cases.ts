/**
 * The malformed inputs of the fuzz suite (docs/fuzz.md): each case is a copy of one well-formed base
 * (bases.ts: the example cluster, its saved snapshot, its kit, its plan) with one thing broken, the
 * commands that must refuse it, and what the refusal must name. Every command listed must exit 2,
 * name the file (and the line or the object where the case says so), write nothing and print no
 * key material (harness.ts checks all of it).
 *
 * The cases are data plus a deterministic mutation: "random" bytes and offsets come from a
 * generator seeded by the case's name (mutate.ts). Fresh key pairs (a key that matches nothing, a
 * CA not yet valid) are new on each run, as the example's own keys are; what they break is not.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseAllDocuments, parse as parseYaml, stringify } from 'yaml';
import { planDigest } from '../../src/app/session.js';
import { createCA } from '../../src/pki/forge.js';
import { integrityOf } from '../../src/plan/integrity.js';
import { PLAN_FORMAT_VERSION } from '../../src/plan/model.js';
import { Journal } from '../../src/run/journal.js';
import { type BaseKind, type Bases, copyBase, LAYOUT } from './bases.js';
import {
  docOfKind,
  editJson,
  editYaml,
  itemIndex,
  junk,
  replaceOnce,
  seedOf,
  setIn,
  truncate,
} from './mutate.js';

/** `run` is a real run (it reads the journal); `run-dry` is `run --dry-run`. */
export type CommandId = 'facts' | 'audit' | 'generate' | 'plan' | 'run-dry' | 'run';

export type Category =
  | 'truncated'
  | 'empty'
  | 'binary'
  | 'wrong-kind'
  | 'bad-pem'
  | 'key-mismatch'
  | 'api-version'
  | 'missing-part'
  | 'plan-edit'
  | 'journal'
  | 'wrong-type'
  | 'bad-value';

/** Text the error must contain; a list means any one of them (a Node's name, or its index). */
export type Mention = string | readonly string[];

export interface Expectation {
  /**
   * The file the error must name, relative to the case directory (as the command was given it); a
   * list means any one of them (a key and its certificate: either may be the wrong one).
   */
  file: Mention;
  /** The error must give the line too (`FILE:LINE`): a syntax error has one. */
  line?: true;
  /** What names the object or field, e.g. a Node's or a step's name: each entry must be there. */
  object?: readonly Mention[];
}

/** A case's directory while its input is written. */
export interface CaseDir {
  dir: string;
  bases: Bases;
  read(rel: string): Promise<string>;
  write(rel: string, data: string | Uint8Array): Promise<void>;
  edit(rel: string, change: (text: string) => string): Promise<void>;
  remove(rel: string): Promise<void>;
}

export interface FuzzCase {
  name: string;
  category: Category;
  base: BaseKind;
  commands: readonly CommandId[];
  /** Extra flags for every command of the case (a file given by flag, e.g. --suppressions). */
  flags?: readonly string[];
  expect: Expectation;
  mutate(d: CaseDir): Promise<void>;
}

/**
 * Writes case `c` into `dir` (an empty directory): its base, then its mutation. Returns the files
 * the mutation wrote or removed, relative to `dir`. With `link` the base's files are hard links
 * (copyBase): the mutation replaces a file (a new inode) rather than writing into the shared one.
 */
export async function writeCase(
  c: FuzzCase,
  bases: Bases,
  dir: string,
  opts: { link?: boolean } = {},
): Promise<string[]> {
  await copyBase(bases, c.base, dir, opts);
  const at = (rel: string) => join(dir, rel);
  const touched = new Set<string>();
  const write = async (rel: string, data: string | Uint8Array) => {
    touched.add(rel);
    await mkdir(dirname(at(rel)), { recursive: true });
    await rm(at(rel), { force: true });
    await writeFile(at(rel), data);
  };
  const d: CaseDir = {
    dir,
    bases,
    read: (rel) => readFile(at(rel), 'utf8'),
    write,
    edit: async (rel, change) => write(rel, change(await readFile(at(rel), 'utf8'))),
    remove: async (rel) => {
      await readFile(at(rel)); // the file must be there to be removed: a stale case fails loudly
      touched.add(rel);
      await rm(at(rel));
    },
  };
  await c.mutate(d);
  return [...touched];
}

// ---------------------------------------------------------------------------------------------
// Paths

const F = (rel: string) => `${LAYOUT.cluster}/${rel}`;
const S = (rel: string) => `${LAYOUT.snapshot}/${rel}`;
const K = (rel: string) => `${LAYOUT.kit}/${rel}`;

const KUBEADM = F('kubeadm-config.yaml');
const APISERVER = F('manifests/cp-1/kube-apiserver.yaml');
const CONTROLLER_MANAGER = F('manifests/cp-2/kube-controller-manager.yaml');
const ENCRYPTION = F('encryption-config.yaml');
const NODES = F('resources/nodes.json');
const CONFIGMAPS = F('resources/configmaps.yaml');
const MEMBERS = F('etcd/member-list.json');
const STATUS = F('etcd/endpoint-status.json');
const VERSION = F('etcd/version.json');
const PKI = (rel: string) => F(`pki/${rel}`);

const syntaxOf = (rel: string): 'yaml' | 'json' => (rel.endsWith('.json') ? 'json' : 'yaml');

// ---------------------------------------------------------------------------------------------
// Small builders

function one(
  name: string,
  category: Category,
  base: BaseKind,
  commands: readonly CommandId[],
  expect: Expectation,
  mutate: (d: CaseDir) => Promise<void>,
  flags?: readonly string[],
): FuzzCase {
  return { name, category, base, commands, expect, mutate, ...(flags ? { flags } : {}) };
}

function truncated(base: BaseKind, file: string, fraction: number, commands: readonly CommandId[]): FuzzCase {
  return one(
    `truncated/${file}@${Math.round(fraction * 100)}%`,
    'truncated',
    base,
    commands,
    { file, line: true },
    (d) => d.edit(file, (t) => truncate(t, fraction, syntaxOf(file))),
  );
}

function empty(base: BaseKind, file: string, commands: readonly CommandId[]): FuzzCase {
  return one(`empty/${file}`, 'empty', base, commands, { file }, (d) => d.write(file, ''));
}

function binary(base: BaseKind, file: string, commands: readonly CommandId[]): FuzzCase {
  const name = `binary/${file}`;
  return one(name, 'binary', base, commands, { file }, (d) => d.write(file, junk(4096, seedOf(name))));
}

function missing(base: BaseKind, file: string, commands: readonly CommandId[]): FuzzCase {
  return one(`missing-part/${file}`, 'missing-part', base, commands, { file }, (d) => d.remove(file));
}

/** A kubeadm-config.yaml edit: `change` gets the document of `kind`. */
function kubeadmEdit(
  name: string,
  category: Category,
  commands: readonly CommandId[],
  kind: string,
  change: (doc: ReturnType<typeof docOfKind>) => void,
): FuzzCase {
  return one(name, category, 'files', commands, { file: KUBEADM, line: true }, (d) =>
    d.edit(KUBEADM, (t) => editYaml(t, (docs) => change(docOfKind(docs, kind)))),
  );
}

/** An edit of one item of a `kind: List` YAML file under resources/. */
function listItemEdit(
  name: string,
  category: Category,
  commands: readonly CommandId[],
  file: string,
  item: { kind: string; name: string },
  path: (string | number)[],
  value: unknown,
  object: string[] = [item.name],
): FuzzCase {
  return one(name, category, 'files', commands, { file, object }, (d) =>
    d.edit(file, (t) =>
      editYaml(t, (docs) => {
        const doc = docs[0]!;
        setIn(doc, ['items', itemIndex(doc, item.name, item.kind), ...path], value);
      }),
    ),
  );
}

type Json = Record<string, unknown>;
type NodeJson = { metadata: Json & { name: string }; spec: Json; status: Json & { nodeInfo: Json } };

function nodeEdit(
  name: string,
  category: Category,
  commands: readonly CommandId[],
  node: string,
  change: (n: NodeJson) => void,
): FuzzCase {
  return one(name, category, 'files', commands, { file: NODES, object: [node] }, (d) =>
    d.edit(NODES, (t) =>
      editJson(
        t,
        (v) => {
          const n = (v['items'] as NodeJson[]).find((x) => x.metadata.name === node);
          if (!n) throw new Error(`no Node ${node}`);
          change(n);
        },
        4,
      ),
    ),
  );
}

/** The ConfigMap kube-system/kubelet-config's KubeletConfiguration (data.kubelet), edited. */
function kubeletConfigMapEdit(
  name: string,
  category: Category,
  commands: readonly CommandId[],
  change: (kubelet: Json) => unknown,
): FuzzCase {
  return one(name, category, 'files', commands, { file: CONFIGMAPS, object: ['kubelet-config'] }, (d) =>
    d.edit(CONFIGMAPS, (t) =>
      editYaml(t, (docs) => {
        const doc = docs[0]!;
        const path = ['items', itemIndex(doc, 'kubelet-config', 'ConfigMap'), 'data', 'kubelet'];
        const kubelet = parseYaml(String(doc.getIn(path))) as Json;
        const replaced = change(kubelet);
        setIn(doc, path, typeof replaced === 'string' ? replaced : stringify(replaced ?? kubelet));
      }),
    ),
  );
}

function flagEdit(
  name: string,
  commands: readonly CommandId[],
  file: string,
  from: string,
  to: string,
): FuzzCase {
  return one(name, 'bad-value', 'files', commands, { file }, (d) =>
    d.edit(file, (t) => replaceOnce(t, from, to)),
  );
}

function textEdit(
  name: string,
  category: Category,
  base: BaseKind,
  commands: readonly CommandId[],
  expect: Expectation,
  file: string,
  from: string | RegExp,
  to: string,
): FuzzCase {
  return one(name, category, base, commands, expect, (d) => d.edit(file, (t) => replaceOnce(t, from, to)));
}

function jsonEdit(
  name: string,
  category: Category,
  base: BaseKind,
  commands: readonly CommandId[],
  expect: Expectation,
  file: string,
  change: (v: Json) => unknown,
): FuzzCase {
  return one(name, category, base, commands, expect, (d) => d.edit(file, (t) => editJson(t, change)));
}

// ---------------------------------------------------------------------------------------------
// PEM

const PEM = /-----BEGIN ([A-Z0-9 ]+)-----\n([\s\S]*?)\n-----END \1-----/;

function pemBody(text: string): { label: string; body: string } {
  const m = PEM.exec(text);
  if (!m) throw new Error('no PEM block');
  return { label: m[1]!, body: m[2]! };
}

function wrap64(b64: string): string {
  return b64.replace(/(.{64})/g, '$1\n').trimEnd();
}

/** Same armour, body of characters base64 does not have. */
function base64Garbage(text: string, seed: number): string {
  const { label, body } = pemBody(text);
  const bytes = junk(body.length, seed);
  const alphabet = '!#$%&*?@^~';
  const garbage = [...body].map((c, i) => (c === '\n' ? c : alphabet[bytes[i]! % alphabet.length])).join('');
  return `-----BEGIN ${label}-----\n${garbage}\n-----END ${label}-----\n`;
}

/** Same armour, valid base64 of bytes that are no DER structure. */
function derGarbage(text: string, seed: number): string {
  const { label, body } = pemBody(text);
  const bytes = junk(Buffer.from(body.replace(/\s/g, ''), 'base64').length, seed);
  return `-----BEGIN ${label}-----\n${wrap64(bytes.toString('base64'))}\n-----END ${label}-----\n`;
}

function pemToDer(text: string): Buffer {
  return Buffer.from(pemBody(text).body.replace(/\s/g, ''), 'base64');
}

let freshKey: string | undefined;

/**
 * A fresh RSA key, as kubeadm writes one (PKCS#1): it matches no certificate of the example. One
 * per process: making an RSA key takes up to a second on a busy machine.
 */
function freshRsaKeyPem(): string {
  freshKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
    type: 'pkcs1',
    format: 'pem',
  }) as string;
  return freshKey;
}

/** The CA again, same name and key (so its leaves still verify), valid only from 2099. */
async function notYetValid(d: CaseDir, cert: string, key: string, commonName: string): Promise<void> {
  const ca = await createCA({
    commonName,
    existingKeyPem: await d.read(key),
    notBefore: new Date('2099-01-01T00:00:00Z'),
    notAfter: new Date('2109-01-01T00:00:00Z'),
  });
  await d.write(cert, ca.certPem);
}

// ---------------------------------------------------------------------------------------------
// Plans

type PlanDoc = { phases: { steps: Json[] }[]; integrity?: unknown } & Json;

/** Recomputes the integrity record: a hand edit that is also re-sealed, so only validation can catch it. */
function reseal(p: PlanDoc): PlanDoc {
  const { integrity: _, ...content } = p;
  return { ...content, integrity: integrityOf(content) } as PlanDoc;
}

/** The step `id` of the plan base (the example's plan is deterministic: a renamed step fails loudly). */
function stepById(p: PlanDoc, id: string): Json {
  const s = p.phases.flatMap((ph) => ph.steps).find((x) => x['id'] === id);
  if (!s) throw new Error(`no step ${id} in the plan`);
  return s;
}

function stepIndex(p: PlanDoc, id: string): [phase: number, index: number] {
  for (const [i, ph] of p.phases.entries()) {
    const j = ph.steps.findIndex((x) => x['id'] === id);
    if (j >= 0) return [i, j];
  }
  throw new Error(`no step ${id} in the plan`);
}

function planEdit(
  name: string,
  change: (p: PlanDoc) => void,
  opts: { resealed?: boolean; step?: string } = {},
): FuzzCase {
  return one(
    `plan-edit/${name}${opts.resealed ? ' (re-sealed)' : ''}`,
    'plan-edit',
    'plan',
    ['run-dry'],
    { file: LAYOUT.plan, ...(opts.step ? { object: [opts.step] } : {}) },
    (d) =>
      d.edit(LAYOUT.plan, (t) => {
        const p = JSON.parse(t) as PlanDoc;
        change(p);
        return `${JSON.stringify(opts.resealed ? reseal(p) : p, null, 2)}\n`;
      }),
  );
}

/** A journal beside the plan, of runs made for another plan (the same cluster planned again later). */
async function foreignJournal(d: CaseDir): Promise<void> {
  const other = join(d.dir, 'other-plan.json');
  const text = d.bases.planText.replace(/"createdAt": "[^"]+"/, '"createdAt": "2020-01-01T00:00:00.000Z"');
  await writeFile(other, text);
  const j = Journal.open(join(d.dir, LAYOUT.journal));
  try {
    j.beginRun({ planFile: other, planDigest: planDigest(other), steps: [] });
  } finally {
    j.close();
  }
  await rm(other);
}

// ---------------------------------------------------------------------------------------------
// The cases

const KUBECONFIG = LAYOUT.kubeconfig;

function truncations(): FuzzCase[] {
  return [
    truncated('files', KUBEADM, 0.25, ['facts', 'plan']),
    truncated('files', KUBEADM, 0.6, ['audit']),
    truncated('files', KUBEADM, 0.95, ['facts']),
    truncated('files', APISERVER, 0.4, ['generate']),
    truncated('files', F('manifests/cp-2/etcd.yaml'), 0.7, ['audit']),
    truncated('files', ENCRYPTION, 0.5, ['generate', 'facts']),
    truncated('files', NODES, 0.1, ['facts']),
    truncated('files', NODES, 0.5, ['plan']),
    truncated('files', NODES, 0.99, ['audit']),
    truncated('files', CONFIGMAPS, 0.45, ['facts']),
    truncated('files', F('resources/pods.yaml'), 0.8, ['plan']),
    truncated('files', MEMBERS, 0.5, ['facts']),
    truncated('files', STATUS, 0.3, ['plan']),
    truncated('files', VERSION, 0.5, ['audit']),
    truncated('saved', S('manifest.json'), 0.5, ['facts']),
    truncated('saved', S('kubeadm.json'), 0.5, ['audit']),
    truncated('saved', S('components.json'), 0.2, ['plan']),
    truncated('saved', S('pki.json'), 0.7, ['facts']),
    truncated('saved', S('etcd.json'), 0.5, ['generate']),
    truncated('saved', S('resources/nodes.json'), 0.5, ['facts']),
    truncated('kit', K('provenance.json'), 0.5, ['plan']),
    truncated('kit', K('kubeadm/steps.json'), 0.4, ['plan']),
    truncated('kit', K('talos/machines.json'), 0.6, ['plan']),
    truncated('kit', K('rbac/health-probe.yaml'), 0.5, ['plan']),
    truncated('plan', LAYOUT.plan, 0.1, ['run-dry']),
    truncated('plan', LAYOUT.plan, 0.5, ['run-dry']),
    truncated('plan', LAYOUT.plan, 0.95, ['run-dry']),
    truncated('plan', KUBECONFIG, 0.5, ['run-dry']),
    one(
      'truncated/cilium-values.yaml (--cilium-values)',
      'truncated',
      'files',
      ['generate'],
      { file: 'cilium-values.yaml', line: true },
      (d) =>
        d.write(
          'cilium-values.yaml',
          truncate('ipam:\n  mode: kubernetes\nhubble:\n  relay:\n    enabled: "true"\n', 0.8, 'yaml'),
        ),
      ['--cilium-values', 'cilium-values.yaml'],
    ),
    one(
      'truncated/suppressions.yaml (--suppressions)',
      'truncated',
      'files',
      ['audit', 'plan'],
      { file: 'suppressions.yaml', line: true },
      (d) =>
        d.write(
          'suppressions.yaml',
          truncate('- rule: "bootstrap.token-ttl"\n  reason: "rotated by hand"\n', 0.5, 'yaml'),
        ),
      ['--suppressions', 'suppressions.yaml'],
    ),
  ];
}

function empties(): FuzzCase[] {
  return [
    empty('files', KUBEADM, ['facts', 'generate']),
    empty('files', APISERVER, ['facts']),
    empty('files', ENCRYPTION, ['audit']),
    empty('files', NODES, ['facts', 'plan']),
    empty('files', MEMBERS, ['audit']),
    empty('files', PKI('ca.crt'), ['generate']),
    empty('files', PKI('ca.key'), ['generate']),
    empty('saved', S('kubeadm.json'), ['facts']),
    empty('saved', S('manifest.json'), ['audit']),
    empty('kit', K('provenance.json'), ['plan']),
    empty('plan', LAYOUT.plan, ['run-dry']),
    empty('plan', KUBECONFIG, ['run-dry']),
    empty('plan', LAYOUT.etcdKey, ['run-dry']),
  ];
}

function binaries(): FuzzCase[] {
  return [
    binary('files', KUBEADM, ['facts', 'audit']),
    binary('files', F('manifests/cp-3/kube-scheduler.yaml'), ['facts']),
    binary('files', NODES, ['facts']),
    binary('files', F('resources/services.yaml'), ['plan']),
    binary('files', VERSION, ['audit']),
    binary('files', ENCRYPTION, ['generate']),
    binary('files', PKI('front-proxy-ca.crt'), ['generate']),
    binary('files', PKI('sa.key'), ['generate']),
    binary('saved', S('components.json'), ['facts']),
    binary('kit', K('talos/machines.json'), ['plan']),
    binary('plan', LAYOUT.plan, ['run-dry']),
    binary('plan', KUBECONFIG, ['run-dry']),
    binary('plan', LAYOUT.journal, ['run']),
  ];
}

const POD_MANIFEST = `apiVersion: v1
kind: Pod
metadata:
  name: kube-apiserver
  namespace: kube-system
spec:
  containers:
  - name: kube-apiserver
    image: registry.k8s.io/kube-apiserver:v1.32.4
`;

const CONFIGMAP = `apiVersion: v1
kind: ConfigMap
metadata:
  name: kube-apiserver
  namespace: kube-system
data:
  config: "copied by mistake"
`;

function wrongKinds(): FuzzCase[] {
  return [
    one(
      'wrong-kind/kubeadm-config.yaml: a Pod where the ClusterConfiguration is',
      'wrong-kind',
      'files',
      ['generate'],
      { file: KUBEADM, line: true },
      (d) =>
        d.edit(KUBEADM, (t) =>
          editYaml(t, (docs) => {
            const i = docs.indexOf(docOfKind(docs, 'ClusterConfiguration'));
            docs[i] = parseAllDocuments(`---\n${POD_MANIFEST}`)[0] as (typeof docs)[number];
          }),
        ),
    ),
    one(
      'wrong-kind/kubeadm-config.yaml: a list of the documents, not documents',
      'wrong-kind',
      'files',
      ['audit'],
      { file: KUBEADM, line: true },
      (d) =>
        d.edit(KUBEADM, (t) => {
          const docs = parseAllDocuments(t);
          return stringify((Array.isArray(docs) ? docs : []).map((x) => x.toJS()));
        }),
    ),
    kubeadmEdit(
      'wrong-kind/kubeadm-config.yaml: networking is a list, not a map',
      'wrong-kind',
      ['facts'],
      'ClusterConfiguration',
      (doc) => setIn(doc, ['networking'], ['10.244.0.0/16', '10.96.0.0/12']),
    ),
    one(
      'wrong-kind/manifests/cp-1/kube-apiserver.yaml: a ConfigMap, not a Pod',
      'wrong-kind',
      'files',
      ['facts'],
      { file: APISERVER, line: true },
      (d) => d.write(APISERVER, CONFIGMAP),
    ),
    one(
      'wrong-kind/manifests/cp-2/kube-controller-manager.yaml: a list, not a Pod',
      'wrong-kind',
      'files',
      ['audit'],
      { file: CONTROLLER_MANAGER, line: true },
      (d) => d.edit(CONTROLLER_MANAGER, (t) => stringify([parseYaml(t)])),
    ),
    one(
      'wrong-kind/encryption-config.yaml: a ConfigMap, not an EncryptionConfiguration',
      'wrong-kind',
      'files',
      ['generate', 'facts'],
      { file: ENCRYPTION, line: true },
      (d) => d.write(ENCRYPTION, CONFIGMAP),
    ),
    one(
      'wrong-kind/encryption-config.yaml: resources is a map, not a list',
      'wrong-kind',
      'files',
      ['audit'],
      { file: ENCRYPTION, line: true },
      (d) =>
        d.edit(ENCRYPTION, (t) =>
          editYaml(t, (docs) => setIn(docs[0]!, ['resources'], { secrets: { providers: [] } })),
        ),
    ),
    jsonEdit(
      'wrong-kind/resources/nodes.json: items is a map, not a list',
      'wrong-kind',
      'files',
      ['facts'],
      { file: NODES },
      NODES,
      (v) => {
        v['items'] = Object.fromEntries((v['items'] as NodeJson[]).map((n) => [n.metadata.name, n]));
      },
    ),
    kubeletConfigMapEdit(
      'wrong-kind/resources/configmaps.yaml: kubelet-config holds a Pod, not a KubeletConfiguration',
      'wrong-kind',
      ['generate'],
      () => POD_MANIFEST,
    ),
    textEdit(
      'wrong-kind/etcd/member-list.json: members is a map, not a list',
      'wrong-kind',
      'files',
      ['facts'],
      { file: MEMBERS },
      MEMBERS,
      /"members":(\[[\s\S]*\])\}\s*$/,
      '"members":{"cp-1":$1}}\n',
    ),
    one(
      'wrong-kind/etcd/member-list.json: a list, not the member list response',
      'wrong-kind',
      'files',
      ['plan'],
      { file: MEMBERS },
      (d) => d.edit(MEMBERS, (t) => `[${t.trim()}]\n`),
    ),
    jsonEdit(
      'wrong-kind/snapshot/manifest.json: a list, not the manifest',
      'wrong-kind',
      'saved',
      ['audit'],
      { file: S('manifest.json') },
      S('manifest.json'),
      (v) => [v],
    ),
    jsonEdit(
      'wrong-kind/snapshot/kubeadm.json: clusterConfiguration is a list',
      'wrong-kind',
      'saved',
      ['generate'],
      { file: S('kubeadm.json'), object: ['clusterConfiguration'] },
      S('kubeadm.json'),
      (v) => {
        v['clusterConfiguration'] = [v['clusterConfiguration']];
      },
    ),
    one(
      'wrong-kind/kit/provenance.json: a plan, not a kit provenance',
      'wrong-kind',
      'kit',
      ['plan'],
      { file: K('provenance.json') },
      (d) => d.write(K('provenance.json'), d.bases.planText),
    ),
    one(
      'wrong-kind/kit/kubeadm/steps.json: the machines index, not the kubeadm steps',
      'wrong-kind',
      'kit',
      ['plan'],
      { file: K('kubeadm/steps.json') },
      async (d) => d.write(K('kubeadm/steps.json'), await d.read(K('talos/machines.json'))),
    ),
    one(
      'wrong-kind/plan.json: a kit provenance file, not a plan',
      'wrong-kind',
      'plan',
      ['run-dry'],
      { file: LAYOUT.plan },
      async (d) =>
        d.write(LAYOUT.plan, await readFile(join(d.bases.root, LAYOUT.kit, 'provenance.json'), 'utf8')),
    ),
    jsonEdit(
      'wrong-kind/plan.json: a list holding the plan',
      'wrong-kind',
      'plan',
      ['run-dry'],
      { file: LAYOUT.plan },
      LAYOUT.plan,
      (v) => [v],
    ),
    one(
      'wrong-kind/kubeconfig: a Pod, not a kubeconfig',
      'wrong-kind',
      'plan',
      ['run-dry'],
      { file: KUBECONFIG },
      (d) => d.write(KUBECONFIG, POD_MANIFEST),
    ),
    one(
      'wrong-kind/suppressions.yaml (--suppressions): a map, not a list',
      'wrong-kind',
      'files',
      ['audit'],
      { file: 'suppressions.yaml', line: true },
      (d) => d.write('suppressions.yaml', 'bootstrap.token-ttl:\n  reason: rotated by hand\n'),
      ['--suppressions', 'suppressions.yaml'],
    ),
    one(
      'wrong-kind/.ferry/suppressions.yaml (default): a Pod, not a list',
      'wrong-kind',
      'files',
      ['plan'],
      { file: '.ferry/suppressions.yaml', line: true },
      (d) => d.write('.ferry/suppressions.yaml', POD_MANIFEST),
    ),
  ];
}

function badPems(): FuzzCase[] {
  const pem = (
    what: string,
    file: string,
    change: (d: CaseDir) => Promise<void>,
    commands: readonly CommandId[] = ['generate'],
    base: BaseKind = 'files',
  ) => one(`bad-pem/${file}: ${what}`, 'bad-pem', base, commands, { file }, change);
  const seed = (file: string) => seedOf(`bad-pem/${file}`);
  return [
    pem('truncated', PKI('ca.crt'), (d) =>
      d.edit(PKI('ca.crt'), (t) => t.slice(0, Math.floor(t.length * 0.6))),
    ),
    pem('wrong PEM header', PKI('ca.crt'), (d) =>
      d.edit(PKI('ca.crt'), (t) => t.replaceAll('CERTIFICATE-----', 'GARBAGE-----')),
    ),
    pem('base64 garbage', PKI('ca.crt'), (d) =>
      d.edit(PKI('ca.crt'), (t) => base64Garbage(t, seed('ca.crt'))),
    ),
    pem('a private key where the certificate should be', PKI('ca.crt'), async (d) =>
      d.write(PKI('ca.crt'), await d.read(PKI('ca.key'))),
    ),
    pem('a certificate where the private key should be', PKI('ca.key'), async (d) =>
      d.write(PKI('ca.key'), await d.read(PKI('ca.crt'))),
    ),
    pem('truncated', PKI('etcd/ca.key'), (d) =>
      d.edit(PKI('etcd/ca.key'), (t) => t.slice(0, Math.floor(t.length * 0.5))),
    ),
    pem('base64 of bytes that are no key', PKI('front-proxy-ca.key'), (d) =>
      d.edit(PKI('front-proxy-ca.key'), (t) => derGarbage(t, seed('front-proxy-ca.key'))),
    ),
    pem('the public key where the private key should be', PKI('sa.key'), async (d) =>
      d.write(PKI('sa.key'), await d.read(PKI('sa.pub'))),
    ),
    pem('DER, not PEM', PKI('etcd/ca.crt'), async (d) =>
      d.write(PKI('etcd/ca.crt'), pemToDer(await d.read(PKI('etcd/ca.crt')))),
    ),
    pem('truncated', PKI('front-proxy-ca.crt'), (d) =>
      d.edit(PKI('front-proxy-ca.crt'), (t) => t.slice(0, Math.floor(t.length * 0.3))),
    ),
    pem(
      'a certificate where the etcd client key should be',
      LAYOUT.etcdKey,
      async (d) => d.write(LAYOUT.etcdKey, await d.read(LAYOUT.etcdCert)),
      ['run-dry'],
      'plan',
    ),
    pem(
      'base64 garbage',
      LAYOUT.etcdCa,
      (d) => d.edit(LAYOUT.etcdCa, (t) => base64Garbage(t, seed(LAYOUT.etcdCa))),
      ['run-dry'],
      'plan',
    ),
    one(
      'bad-pem/served-certs/endpoint_6443.pem: base64 garbage',
      'bad-pem',
      'files',
      ['facts', 'audit'],
      { file: F('served-certs/endpoint_6443.pem') },
      async (d) =>
        d.write(
          F('served-certs/endpoint_6443.pem'),
          base64Garbage(await d.read(PKI('apiserver.crt')), seed('served-certs')),
        ),
    ),
  ];
}

function keyMismatches(): FuzzCase[] {
  // The key or its certificate (public key) named: either may be the one that is wrong.
  const swap = (
    file: string,
    pair: string,
    from: string | (() => string),
    commands: readonly CommandId[],
    base: BaseKind,
  ) =>
    one(
      `key-mismatch/${file}: ${typeof from === 'string' ? `the key of ${from}` : 'a fresh key'}`,
      'key-mismatch',
      base,
      commands,
      { file: [file, pair] },
      async (d) => d.write(file, typeof from === 'string' ? await d.read(from) : from()),
    );
  return [
    swap(PKI('ca.key'), PKI('ca.crt'), PKI('front-proxy-ca.key'), ['generate'], 'files'),
    swap(PKI('etcd/ca.key'), PKI('etcd/ca.crt'), PKI('ca.key'), ['generate'], 'files'),
    swap(PKI('front-proxy-ca.key'), PKI('front-proxy-ca.crt'), freshRsaKeyPem, ['generate'], 'files'),
    swap(PKI('sa.key'), PKI('sa.pub'), freshRsaKeyPem, ['generate'], 'files'),
    one(
      `key-mismatch/${LAYOUT.etcdKey}: the key of another etcd certificate`,
      'key-mismatch',
      'plan',
      ['run-dry'],
      { file: [LAYOUT.etcdKey, LAYOUT.etcdCert] },
      async (d) => d.write(LAYOUT.etcdKey, await readFile(join(d.bases.root, PKI('etcd/peer.key')), 'utf8')),
    ),
  ];
}

function apiVersions(): FuzzCase[] {
  const cc = 'ClusterConfiguration';
  return [
    kubeadmEdit(
      'api-version/ClusterConfiguration kubeadm.k8s.io/v1beta9',
      'api-version',
      ['facts', 'generate'],
      cc,
      (doc) => doc.set('apiVersion', 'kubeadm.k8s.io/v1beta9'),
    ),
    kubeadmEdit(
      'api-version/ClusterConfiguration kubeadm.k8s.io/v1alpha3 (kubeadm 1.12)',
      'api-version',
      ['audit'],
      cc,
      (doc) => doc.set('apiVersion', 'kubeadm.k8s.io/v1alpha3'),
    ),
    kubeadmEdit(
      'api-version/InitConfiguration apiVersion v1',
      'api-version',
      ['plan'],
      'InitConfiguration',
      (doc) => doc.set('apiVersion', 'v1'),
    ),
    kubeadmEdit(
      'api-version/ClusterConfiguration without apiVersion',
      'api-version',
      ['facts'],
      cc,
      (doc) => {
        doc.delete('apiVersion');
      },
    ),
    kubeadmEdit(
      'api-version/KubeletConfiguration kubelet.config.k8s.io/v9',
      'api-version',
      ['generate'],
      'KubeletConfiguration',
      (doc) => doc.set('apiVersion', 'kubelet.config.k8s.io/v9'),
    ),
    textEdit(
      'api-version/EncryptionConfiguration apiserver.config.k8s.io/v9',
      'api-version',
      'files',
      ['facts'],
      { file: ENCRYPTION, line: true },
      ENCRYPTION,
      'apiVersion: apiserver.config.k8s.io/v1',
      'apiVersion: apiserver.config.k8s.io/v9',
    ),
    one(
      'api-version/ConfigMap kubeadm-config: ClusterConfiguration kubeadm.k8s.io/v1beta9 (no kubeadm-config.yaml)',
      'api-version',
      'files',
      ['facts'],
      { file: CONFIGMAPS, object: ['kubeadm-config'] },
      async (d) => {
        await d.remove(KUBEADM);
        await d.edit(CONFIGMAPS, (t) =>
          replaceOnce(
            t,
            /(ClusterConfiguration: \|\n\s+apiServer:[\s\S]*?apiVersion: )kubeadm\.k8s\.io\/v1beta\d/,
            '$1kubeadm.k8s.io/v1beta9',
          ),
        );
      },
    ),
  ];
}

function missingParts(): FuzzCase[] {
  return [
    missing('saved', S('manifest.json'), ['facts']),
    missing('saved', S('kubeadm.json'), ['audit']),
    missing('saved', S('components.json'), ['facts']),
    missing('saved', S('pki.json'), ['plan']),
    missing('saved', S('encryption.json'), ['generate']),
    missing('saved', S('etcd.json'), ['facts']),
    missing('saved', S('audit-log.json'), ['audit']),
    missing('files', PKI('ca.crt'), ['generate']),
    missing('files', PKI('ca.key'), ['generate']),
    missing('files', PKI('sa.key'), ['generate']),
    missing('files', PKI('etcd/ca.key'), ['generate']),
    missing('files', PKI('front-proxy-ca.crt'), ['generate']),
    missing('kit', K('provenance.json'), ['plan']),
    missing('kit', K('kubeadm/steps.json'), ['plan']),
    missing('kit', K('talos/machines.json'), ['plan']),
    missing('plan', LAYOUT.etcdKey, ['run-dry']),
    missing('plan', LAYOUT.etcdCa, ['run-dry']),
  ];
}

const GATE = '2.01.gate.cp-1';
const PROVISION = '2.02.provision.cp-1';
const JOINED = '2.03.wait-member-joined.cp-1';
const REMOVE_MEMBER = '4.13.etcd-remove-member.cp-3';

function planEdits(): FuzzCase[] {
  const cases: FuzzCase[] = [];
  for (const resealed of [false, true]) {
    cases.push(
      planEdit(
        'a step without its action',
        (p) => {
          delete stepById(p, PROVISION)['action'];
        },
        { resealed, step: PROVISION },
      ),
      planEdit(
        'a step of an unknown kind',
        (p) => {
          stepById(p, PROVISION)['kind'] = 'reboot-everything';
        },
        { resealed, step: PROVISION },
      ),
      planEdit(
        'timeoutSeconds a string',
        (p) => {
          const s = stepById(p, JOINED);
          s['timeoutSeconds'] = String(s['timeoutSeconds']);
        },
        { resealed, step: JOINED },
      ),
      planEdit(
        'two steps swapped',
        (p) => {
          const [phase, i] = stepIndex(p, PROVISION);
          const steps = p.phases[phase]!.steps;
          if (steps[i + 1]?.['id'] !== JOINED) throw new Error(`${JOINED} does not follow ${PROVISION}`);
          [steps[i], steps[i + 1]] = [steps[i + 1]!, steps[i]!];
        },
        { resealed },
      ),
      planEdit(
        'the gate before cp-1 removed',
        (p) => {
          const [phase, i] = stepIndex(p, GATE);
          p.phases[phase]!.steps.splice(i, 1);
        },
        { resealed },
      ),
    );
  }
  cases.push(
    planEdit(
      'an unknown performer',
      (p) => {
        (stepById(p, PROVISION)['action'] as Json)['performer'] = 'robot';
      },
      { resealed: true, step: PROVISION },
    ),
    planEdit(
      'destructive "yes"',
      (p) => {
        stepById(p, REMOVE_MEMBER)['destructive'] = 'yes';
      },
      { resealed: true, step: REMOVE_MEMBER },
    ),
    planEdit(
      'phases a map',
      (p) => {
        (p as Json)['phases'] = Object.fromEntries(p.phases.map((ph, i) => [String(i), ph]));
      },
      { resealed: true },
    ),
    planEdit(
      'a duplicated step id',
      (p) => {
        stepById(p, JOINED)['id'] = PROVISION;
      },
      { resealed: true, step: PROVISION },
    ),
    planEdit(
      'an expected etcd voter count "three"',
      (p) => {
        ((stepById(p, GATE)['expect'] as Json)['etcd'] as Json)['voters'] = 'three';
      },
      { resealed: true, step: GATE },
    ),
    planEdit(
      `formatVersion ${PLAN_FORMAT_VERSION + 1} (a newer ferry's)`,
      (p) => {
        p['formatVersion'] = PLAN_FORMAT_VERSION + 1;
      },
      { resealed: true },
    ),
    planEdit('the digest does not match', (p) => {
      (p['integrity'] as Json)['digest'] = `sha256:${'0'.repeat(64)}`;
    }),
    planEdit('no integrity record', (p) => {
      delete p['integrity'];
    }),
  );
  return cases;
}

function journals(): FuzzCase[] {
  return [
    one(
      'journal/plan.journal.sqlite of another plan',
      'journal',
      'plan',
      ['run', 'run-dry'],
      { file: LAYOUT.journal },
      foreignJournal,
    ),
    one(
      'journal/plan.journal.sqlite of another plan, --resume',
      'journal',
      'plan',
      ['run'],
      { file: LAYOUT.journal },
      foreignJournal,
      ['--resume'],
    ),
  ];
}

function wrongTypes(): FuzzCase[] {
  const cm = { kind: 'ConfigMap', name: 'kubelet-config' };
  return [
    nodeEdit('wrong-type/Node cp-1 status.addresses a string', 'wrong-type', ['facts'], 'cp-1', (n) => {
      n.status['addresses'] = '10.20.0.11';
    }),
    nodeEdit('wrong-type/Node worker-1 metadata.labels a list', 'wrong-type', ['audit'], 'worker-1', (n) => {
      n.metadata['labels'] = Object.entries(n.metadata['labels'] as Json).map(([k, v]) => `${k}=${v}`);
    }),
    nodeEdit(
      'wrong-type/Node cp-2 status.nodeInfo.kubeletVersion a number',
      'wrong-type',
      ['facts'],
      'cp-2',
      (n) => {
        n.status.nodeInfo['kubeletVersion'] = 1.32;
      },
    ),
    jsonEdit(
      'wrong-type/Node metadata.name a number',
      'wrong-type',
      'files',
      ['facts'],
      { file: NODES },
      NODES,
      (v) => {
        (v['items'] as NodeJson[])[3]!.metadata.name = 42 as unknown as string;
      },
    ),
    listItemEdit(
      'wrong-type/ConfigMap kubelet-config data a list',
      'wrong-type',
      ['facts'],
      CONFIGMAPS,
      cm,
      ['data'],
      ['kubelet'],
    ),
    listItemEdit(
      'wrong-type/DaemonSet cilium spec.template.spec.containers a map',
      'wrong-type',
      ['generate'],
      F('resources/daemonsets.yaml'),
      { kind: 'DaemonSet', name: 'cilium' },
      ['spec', 'template', 'spec', 'containers'],
      { name: 'cilium-agent', image: 'quay.io/cilium/cilium:v1.16.6' },
    ),
    listItemEdit(
      'wrong-type/Service kube-dns spec.ports a string',
      'wrong-type',
      ['plan'],
      F('resources/services.yaml'),
      { kind: 'Service', name: 'kube-dns' },
      ['spec', 'ports'],
      '53/UDP,53/TCP',
    ),
    listItemEdit(
      'wrong-type/PodDisruptionBudget frontend spec.minAvailable a map',
      'wrong-type',
      ['audit'],
      F('resources/pdbs.yaml'),
      { kind: 'PodDisruptionBudget', name: 'frontend' },
      ['spec', 'minAvailable'],
      { percent: 50 },
    ),
    listItemEdit(
      'wrong-type/Deployment api spec.replicas "three"',
      'wrong-type',
      ['plan'],
      F('resources/deployments.yaml'),
      { kind: 'Deployment', name: 'api' },
      ['spec', 'replicas'],
      'three',
    ),
    kubeadmEdit(
      'wrong-type/ClusterConfiguration networking.podSubnet a number',
      'wrong-type',
      ['generate'],
      'ClusterConfiguration',
      (doc) => setIn(doc, ['networking', 'podSubnet'], 10244),
    ),
    kubeadmEdit(
      'wrong-type/ClusterConfiguration apiServer.extraArgs a string',
      'wrong-type',
      ['audit'],
      'ClusterConfiguration',
      (doc) =>
        setIn(doc, ['apiServer', 'extraArgs'], 'oidc-issuer-url=https://sso.lab.example/realms/platform'),
    ),
    kubeletConfigMapEdit(
      'wrong-type/KubeletConfiguration clusterDNS a string (ConfigMap kubelet-config)',
      'wrong-type',
      ['facts'],
      (k) => {
        k['clusterDNS'] = '10.96.0.10';
      },
    ),
    one(
      'wrong-type/static pod kube-apiserver command a string',
      'wrong-type',
      'files',
      ['audit'],
      { file: APISERVER, line: true },
      (d) =>
        d.edit(APISERVER, (t) =>
          editYaml(t, (docs) => {
            const doc = docs[0]!;
            const command = (
              doc.getIn(['spec', 'containers', 0, 'command']) as { toJSON(): string[] }
            ).toJSON();
            setIn(doc, ['spec', 'containers', 0, 'command'], command.join(' '));
          }),
        ),
    ),
    one(
      'wrong-type/static pod etcd spec.containers a map',
      'wrong-type',
      'files',
      ['generate'],
      { file: F('manifests/cp-3/etcd.yaml'), line: true },
      (d) =>
        d.edit(F('manifests/cp-3/etcd.yaml'), (t) =>
          editYaml(t, (docs) => {
            const doc = docs[0]!;
            const c = (doc.getIn(['spec', 'containers', 0]) as { toJSON(): unknown }).toJSON();
            setIn(doc, ['spec', 'containers'], { etcd: c });
          }),
        ),
    ),
    textEdit(
      'wrong-type/etcd member ID a string',
      'wrong-type',
      'files',
      ['facts'],
      { file: MEMBERS, object: [['cp-2', 'members[1]']] },
      MEMBERS,
      '"ID":11210328135921524490',
      '"ID":"cp-two"',
    ),
    textEdit(
      'wrong-type/etcd member peerURLs a string',
      'wrong-type',
      'files',
      ['generate'],
      { file: MEMBERS, object: [['cp-3', 'members[2]']] },
      MEMBERS,
      '"peerURLs":["https://10.20.0.13:2380"]',
      '"peerURLs":"https://10.20.0.13:2380"',
    ),
    textEdit(
      'wrong-type/etcd endpoint status leader a string',
      'wrong-type',
      'files',
      ['audit'],
      { file: STATUS },
      STATUS,
      '"leader":11210328135921524490',
      '"leader":"cp-2"',
    ),
    one(
      'wrong-type/encryption keys a map',
      'wrong-type',
      'files',
      ['generate'],
      { file: ENCRYPTION, line: true },
      (d) =>
        d.edit(ENCRYPTION, (t) =>
          editYaml(t, (docs) =>
            setIn(docs[0]!, ['resources', 0, 'providers', 0, 'aescbc', 'keys'], {
              'key-2023': String(
                docs[0]!.getIn(['resources', 0, 'providers', 0, 'aescbc', 'keys', 0, 'secret']),
              ),
            }),
          ),
        ),
    ),
    one(
      'wrong-type/encryption secret a number',
      'wrong-type',
      'files',
      ['generate'],
      { file: ENCRYPTION, line: true },
      (d) =>
        d.edit(ENCRYPTION, (t) =>
          editYaml(t, (docs) =>
            setIn(docs[0]!, ['resources', 0, 'providers', 0, 'aescbc', 'keys', 0, 'secret'], 12345),
          ),
        ),
    ),
    jsonEdit(
      'wrong-type/snapshot components.json staticPods a map',
      'wrong-type',
      'saved',
      ['facts'],
      { file: S('components.json'), object: ['staticPods'] },
      S('components.json'),
      (v) => {
        v['staticPods'] = { cp: v['staticPods'] };
      },
    ),
    jsonEdit(
      'wrong-type/snapshot pki.json certificates a string',
      'wrong-type',
      'saved',
      ['audit'],
      { file: S('pki.json'), object: ['certificates'] },
      S('pki.json'),
      (v) => {
        v['certificates'] = 'ca.crt';
      },
    ),
    jsonEdit(
      'wrong-type/snapshot manifest.json parts a string',
      'wrong-type',
      'saved',
      ['facts'],
      { file: S('manifest.json'), object: ['parts'] },
      S('manifest.json'),
      (v) => {
        v['parts'] = (v['parts'] as string[]).join(',');
      },
    ),
    jsonEdit(
      'wrong-type/snapshot manifest.json formatVersion 99',
      'wrong-type',
      'saved',
      ['plan'],
      { file: S('manifest.json'), object: ['formatVersion'] },
      S('manifest.json'),
      (v) => {
        v['formatVersion'] = 99;
      },
    ),
    jsonEdit(
      'wrong-type/snapshot etcd.json members a map',
      'wrong-type',
      'saved',
      ['generate'],
      { file: S('etcd.json'), object: ['members'] },
      S('etcd.json'),
      (v) => {
        v['members'] = Object.fromEntries((v['members'] as Json[]).map((m) => [String(m['name']), m]));
      },
    ),
    one(
      'wrong-type/snapshot resources/nodes.json an item a string',
      'wrong-type',
      'saved',
      ['audit'],
      { file: S('resources/nodes.json') },
      (d) =>
        d.edit(S('resources/nodes.json'), (t) => {
          const lines = t.split('\n');
          lines[2] = '"cp-2",';
          return lines.join('\n');
        }),
    ),
    jsonEdit(
      'wrong-type/kit provenance.json files a map',
      'wrong-type',
      'kit',
      ['plan'],
      { file: K('provenance.json'), object: ['files'] },
      K('provenance.json'),
      (v) => {
        v['files'] = Object.fromEntries((v['files'] as Json[]).map((f) => [String(f['path']), f]));
      },
    ),
    jsonEdit(
      'wrong-type/kit provenance.json target.talosVersion a number',
      'wrong-type',
      'kit',
      ['plan'],
      { file: K('provenance.json'), object: ['talosVersion'] },
      K('provenance.json'),
      (v) => {
        (v['target'] as Json)['talosVersion'] = 1.13;
      },
    ),
    jsonEdit(
      'wrong-type/kit kubeadm/steps.json steps[0].nodes a string',
      'wrong-type',
      'kit',
      ['plan'],
      { file: K('kubeadm/steps.json'), object: ['nodes'] },
      K('kubeadm/steps.json'),
      (v) => {
        (v['steps'] as Json[])[0]!['nodes'] = 'cp-1,cp-2,cp-3';
      },
    ),
    jsonEdit(
      'wrong-type/kit talos/machines.json machines[0].role "master"',
      'wrong-type',
      'kit',
      ['plan'],
      { file: K('talos/machines.json'), object: ['role'] },
      K('talos/machines.json'),
      (v) => {
        (v['machines'] as Json[])[0]!['role'] = 'master';
      },
    ),
  ];
}

function badValues(): FuzzCase[] {
  const cc = 'ClusterConfiguration';
  const b64 = (n: number) => Buffer.from(junk(n, seedOf(`aescbc-${n}`))).toString('base64');
  const aescbcSecret = (secret: string) => (t: string) =>
    editYaml(t, (docs) =>
      setIn(docs[0]!, ['resources', 0, 'providers', 0, 'aescbc', 'keys', 0, 'secret'], secret),
    );
  return [
    kubeadmEdit('bad-value/podSubnet "not-a-cidr"', 'bad-value', ['facts', 'generate'], cc, (doc) =>
      setIn(doc, ['networking', 'podSubnet'], 'not-a-cidr'),
    ),
    kubeadmEdit('bad-value/serviceSubnet 10.96.0.0/40', 'bad-value', ['plan'], cc, (doc) =>
      setIn(doc, ['networking', 'serviceSubnet'], '10.96.0.0/40'),
    ),
    kubeadmEdit('bad-value/controlPlaneEndpoint [::::]:6443', 'bad-value', ['generate'], cc, (doc) =>
      doc.set('controlPlaneEndpoint', '[::::]:6443'),
    ),
    kubeadmEdit('bad-value/kubernetesVersion v1.banana', 'bad-value', ['plan'], cc, (doc) =>
      doc.set('kubernetesVersion', 'v1.banana'),
    ),
    textEdit(
      'bad-value/cluster-info kubeconfig server https://[::::]:6443',
      'bad-value',
      'files',
      ['facts'],
      { file: F('resources/cluster-info.yaml'), object: ['cluster-info'] },
      F('resources/cluster-info.yaml'),
      'server: https://k8s-api.lab.example:6443',
      'server: https://[::::]:6443',
    ),
    textEdit(
      'bad-value/kubeconfig server https://[::::]:6443',
      'bad-value',
      'plan',
      ['run-dry'],
      { file: KUBECONFIG },
      KUBECONFIG,
      /server: \S+/,
      'server: https://[::::]:6443',
    ),
    flagEdit(
      'bad-value/kube-apiserver --service-cluster-ip-range=10.96.0.0/99',
      ['facts'],
      APISERVER,
      '--service-cluster-ip-range=10.96.0.0/12',
      '--service-cluster-ip-range=10.96.0.0/99',
    ),
    flagEdit(
      'bad-value/kube-apiserver --advertise-address=999.1.1.1',
      ['audit'],
      APISERVER,
      '--advertise-address=10.20.0.11',
      '--advertise-address=999.1.1.1',
    ),
    flagEdit(
      'bad-value/kube-apiserver --secure-port=not-a-port',
      ['plan'],
      APISERVER,
      '--secure-port=6443',
      '--secure-port=not-a-port',
    ),
    flagEdit(
      'bad-value/kube-controller-manager --cluster-cidr=garbage',
      ['generate'],
      CONTROLLER_MANAGER,
      '--cluster-cidr=10.244.0.0/16',
      '--cluster-cidr=garbage',
    ),
    one('bad-value/aescbc key of 5 bytes', 'bad-value', 'files', ['generate'], { file: ENCRYPTION }, (d) =>
      d.edit(ENCRYPTION, aescbcSecret(b64(5))),
    ),
    one('bad-value/aescbc key not base64', 'bad-value', 'files', ['generate'], { file: ENCRYPTION }, (d) =>
      d.edit(ENCRYPTION, aescbcSecret('not*base64*at*all')),
    ),
    one(
      // The file given by flag, not in the directory: ferry compares the two when both are there.
      'bad-value/--encryption-config with an aescbc key of 5 bytes',
      'bad-value',
      'files',
      ['generate'],
      { file: 'encryption-config.yaml' },
      async (d) => {
        const text = aescbcSecret(b64(5))(await d.read(ENCRYPTION));
        await d.remove(ENCRYPTION);
        await d.write('encryption-config.yaml', text);
      },
      ['--encryption-config', 'encryption-config.yaml'],
    ),
    textEdit(
      'bad-value/etcd member peerURLs https://[::::]:2380',
      'bad-value',
      'files',
      ['facts'],
      { file: MEMBERS, object: [['cp-1', 'members[0]']] },
      MEMBERS,
      '"peerURLs":["https://10.20.0.11:2380"]',
      '"peerURLs":["https://[::::]:2380"]',
    ),
    textEdit(
      'bad-value/etcd version.json etcdserver "three.five"',
      'bad-value',
      'files',
      ['audit'],
      { file: VERSION },
      VERSION,
      '"etcdserver":"3.5.16"',
      '"etcdserver":"three.five"',
    ),
    kubeletConfigMapEdit(
      'bad-value/KubeletConfiguration clusterDNS not-an-ip (ConfigMap kubelet-config)',
      'bad-value',
      ['generate'],
      (k) => {
        k['clusterDNS'] = ['not-an-ip'];
      },
    ),
    nodeEdit('bad-value/Node cp-2 InternalIP 300.1.2.3', 'bad-value', ['generate'], 'cp-2', (n) => {
      (n.status['addresses'] as Json[])[0]!['address'] = '300.1.2.3';
    }),
    nodeEdit('bad-value/Node worker-1 podCIDR 10.244.0.0/33', 'bad-value', ['plan'], 'worker-1', (n) => {
      n.spec['podCIDR'] = '10.244.0.0/33';
      n.spec['podCIDRs'] = ['10.244.0.0/33'];
    }),
    listItemEdit(
      'bad-value/Service kube-dns clusterIP 10.96.0.999',
      'bad-value',
      ['generate'],
      F('resources/services.yaml'),
      { kind: 'Service', name: 'kube-dns' },
      ['spec', 'clusterIP'],
      '10.96.0.999',
    ),
    textEdit(
      'bad-value/bootstrap token expiration not base64',
      'bad-value',
      'files',
      ['audit'],
      { file: F('resources/bootstrap-token.yaml'), object: ['bootstrap-token-abcdef'] },
      F('resources/bootstrap-token.yaml'),
      /expiration: \S+/,
      'expiration: "2026-11-30 (not base64)"',
    ),
    one(
      'bad-value/pki/ca.crt not valid before 2099',
      'bad-value',
      'files',
      ['generate'],
      { file: PKI('ca.crt') },
      (d) => notYetValid(d, PKI('ca.crt'), PKI('ca.key'), 'kubernetes'),
    ),
    one(
      'bad-value/pki/etcd/ca.crt not valid before 2099',
      'bad-value',
      'files',
      ['generate'],
      { file: PKI('etcd/ca.crt') },
      (d) => notYetValid(d, PKI('etcd/ca.crt'), PKI('etcd/ca.key'), 'etcd-ca'),
    ),
    one(
      'bad-value/served-certs/10.20.0.11.pem: no port in the name',
      'bad-value',
      'files',
      ['facts'],
      { file: F('served-certs/10.20.0.11.pem') },
      async (d) => d.write(F('served-certs/10.20.0.11.pem'), await d.read(PKI('apiserver.crt'))),
    ),
  ];
}

/** Every case, in a fixed order. */
export function fuzzCases(): FuzzCase[] {
  const all = [
    ...truncations(),
    ...empties(),
    ...binaries(),
    ...wrongKinds(),
    ...badPems(),
    ...keyMismatches(),
    ...apiVersions(),
    ...missingParts(),
    ...planEdits(),
    ...journals(),
    ...wrongTypes(),
    ...badValues(),
  ];
  const names = new Set<string>();
  for (const c of all) {
    if (names.has(c.name)) throw new Error(`two fuzz cases are named ${c.name}`);
    names.add(c.name);
  }
  return all;
}
