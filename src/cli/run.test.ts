import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../plan/model.js';
import { memoryIo } from './io.js';
import { runCli } from './run-cli.js';

/** Connection flags for cases refused before anything is read or reached: the files need not exist. */
const PLACEHOLDER_CONNECTION = [
  '--kubeconfig',
  'k',
  '--etcd-endpoints',
  'https://127.0.0.1:2379',
  '--etcd-cacert',
  'a',
  '--etcd-cert',
  'b',
  '--etcd-key',
  'c',
];

let dir: string;
let plan: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-cli-run-'));
  plan = join(dir, 'plan.json');
  const io = memoryIo();
  expect(
    await runCli(['plan', 'examples/lab-cluster', '--allow-blockers', '--surge-replicas', '-o', plan], io),
    io.err,
  ).toBe(0);
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ferry run: a capi plan', () => {
  let capiPlan: string;
  beforeAll(async () => {
    capiPlan = join(dir, 'plan-capi.json');
    const io = memoryIo();
    expect(
      await runCli(
        [
          'plan',
          'examples/lab-cluster',
          '--allow-blockers',
          '--surge-replicas',
          '--provisioner',
          'capi',
          '-o',
          capiPlan,
        ],
        io,
      ),
      io.err,
    ).toBe(0);
  }, 120_000);

  it('is no longer refused, but needs --mgmt-kubeconfig (exit 2 with the fix)', async () => {
    const io = memoryIo();
    expect(await runCli(['run', capiPlan, ...PLACEHOLDER_CONNECTION], io)).toBe(2);
    expect(io.err).toContain('missing --mgmt-kubeconfig');
    expect(io.err).toContain('pass --mgmt-kubeconfig FILE');
    expect(io.err).not.toContain('does not drive');
  });

  it('needs the kit whose objects it sends, when the plan names none (exit 2)', async () => {
    const io = memoryIo();
    expect(await runCli(['run', capiPlan, ...PLACEHOLDER_CONNECTION, '--mgmt-kubeconfig', 'm'], io)).toBe(2);
    expect(io.err).toContain('pass --kit KIT');
  });

  it('--provisioner capi on a plan made for another provisioner is exit 2', async () => {
    const io = memoryIo();
    expect(
      await runCli(
        ['run', plan, ...PLACEHOLDER_CONNECTION, '--provisioner', 'capi', '--mgmt-kubeconfig', 'm'],
        io,
      ),
    ).toBe(2);
    expect(io.err).toContain('--provisioner capi needs a plan made for Cluster API');
  });
});

describe('ferry run: usage', () => {
  it('says which connection flag is missing (exit 2)', async () => {
    const io = memoryIo();
    expect(await runCli(['run', plan], io)).toBe(2);
    expect(io.err).toContain('missing --kubeconfig');
  });

  it('refuses a file that is not a plan (exit 2)', async () => {
    const bad = join(dir, 'not-a-plan.json');
    await writeFile(bad, '{"kind":"Something"}');
    const io = memoryIo();
    expect(await runCli(['run', bad, '--kubeconfig', 'k'], io)).toBe(2);
  });

  it('rejects an unknown step kind or a missing timeout in --step-timeout, a bad --poll-ms and a phase that does not exist', async () => {
    const base = ['run', plan, ...PLACEHOLDER_CONNECTION];
    let io = memoryIo();
    expect(await runCli([...base, '--step-timeout', 'reboot=10'], io)).toBe(2);
    expect(io.err).toContain('unknown step kind reboot');
    io = memoryIo();
    expect(await runCli([...base, '--phases', '0,7'], io)).toBe(2);
    expect(io.err).toContain('--phases: "7" is not a phase');
    // A kind without its seconds, or with none to speak of, is refused, not taken as 0.
    for (const bad of ['drain', 'drain=', 'drain=0', 'drain=-5', 'drain=ten', 'drain=5=6']) {
      io = memoryIo();
      expect(await runCli([...base, '--step-timeout', bad], io), bad).toBe(2);
      expect(io.err, bad).toContain(`--step-timeout ${bad}: give the seconds as KIND=SECONDS`);
    }
    for (const bad of ['0', '5', '1.5', 'fast']) {
      io = memoryIo();
      expect(await runCli([...base, '--poll-ms', bad], io), bad).toBe(2);
      expect(io.err).toContain('--poll-ms must be a whole number of milliseconds, 10 or more');
    }
    for (const bad of ['0', '-1', '1.5', 'four', '65', '']) {
      io = memoryIo();
      expect(await runCli([...base, `--drain-concurrency=${bad}`], io), bad).toBe(2);
      expect(io.err).toContain('--drain-concurrency must be a whole number of nodes from 1 to 64');
    }
    for (const bad of ['0', '2.5', 'many', '65']) {
      io = memoryIo();
      expect(await runCli([...base, `--provision-concurrency=${bad}`], io), bad).toBe(2);
      expect(io.err).toContain('--provision-concurrency must be a whole number of commands from 1 to 64');
    }
    io = memoryIo();
    await runCli(['run', '--help'], io);
    expect(io.out).toContain('--poll-ms MS');
    expect(io.out).toContain('--drain-concurrency N');
    expect(io.out).toContain('--provision-concurrency N');
    expect(io.out).toContain('--evict-bare-pods');
  });

  it('--alertmanager, --alert-matcher and --silence-expected: each bad value is exit 2 naming its flag', async () => {
    const base = ['run', plan, ...PLACEHOLDER_CONNECTION];
    const cases: [string[], string][] = [
      [
        ['--alertmanager', 'alertmanager:9093'],
        '--alertmanager alertmanager:9093: not an http:// or https:// URL',
      ],
      [['--alertmanager', 'ftp://127.0.0.1:9093'], 'not an http:// or https:// URL'],
      [['--alert-matcher', 'severity=critical'], '--alert-matcher needs --alertmanager URL'],
      [['--silence-expected'], '--silence-expected needs --alertmanager URL'],
      [
        ['--alertmanager', 'http://127.0.0.1:9', '--alert-matcher', 'severity'],
        '--alert-matcher severity: "severity" is not NAME=VALUE',
      ],
      [
        ['--alertmanager', 'http://127.0.0.1:9', '--alert-matcher', 'node=~"w-("'],
        '--alert-matcher node=~"w-(":',
      ],
    ];
    for (const [flags, message] of cases) {
      const io = memoryIo();
      expect(await runCli([...base, ...flags], io), flags.join(' ')).toBe(2);
      expect(io.err, flags.join(' ')).toContain(message);
    }
    const io = memoryIo();
    await runCli(['run', '--help'], io);
    expect(io.out).toContain('--alertmanager URL');
    expect(io.out).toContain('--silence-expected');
  });

  it('--probe: its options are read as written; each bad part is exit 2 naming it', async () => {
    const { parseProbeFlag } = await import('./args.js');
    expect(parseProbeFlag('https://shop.example.com/healthz')).toEqual({
      url: 'https://shop.example.com/healthz',
      expectStatus: 200,
      maxFailRatio: 0,
      intervalMs: 250,
      timeoutMs: 2000,
    });
    expect(parseProbeFlag('http://127.0.0.1:8080/,expect=204,max-fail=0.1%,interval=50,timeout=500')).toEqual(
      {
        url: 'http://127.0.0.1:8080/',
        expectStatus: 204,
        maxFailRatio: 0.001,
        intervalMs: 50,
        timeoutMs: 500,
      },
    );
    const base = ['run', plan, ...PLACEHOLDER_CONNECTION];
    for (const [bad, message] of [
      ['shop:8080', '"shop:8080" is not an http:// or https:// URL'],
      ['http://127.0.0.1/,max-fail=0.1', 'max-fail=0.1: a percentage from 0% to 100%'],
      ['http://127.0.0.1/,max-fail=200%', 'max-fail=200%'],
      ['http://127.0.0.1/,expect=20', 'expect=20: a whole number from 100 to 599'],
      ['http://127.0.0.1/,interval=5', 'interval=5: a whole number from 10'],
      ['http://127.0.0.1/,retries=3', 'unknown option "retries=3"'],
    ] as const) {
      const io = memoryIo();
      expect(await runCli([...base, '--probe', bad], io), bad).toBe(2);
      expect(io.err, bad).toContain(`--probe ${bad}: ${message}`);
    }
  });

  it('--snapshot-recipient: a secret key or a bad recipients file is exit 2 naming the flag, never quoting the key', async () => {
    const base = ['run', plan, ...PLACEHOLDER_CONNECTION];
    const key = 'AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ';
    let io = memoryIo();
    expect(await runCli([...base, '--snapshot-recipient', key], io)).toBe(2);
    expect(io.err).toContain('--snapshot-recipient must be an age X25519 recipient');
    expect(io.err).not.toContain(key);
    const file = join(dir, 'recipients');
    await writeFile(file, `# ops\n${key}\n`);
    io = memoryIo();
    expect(await runCli([...base, '--snapshot-recipients-file', file], io)).toBe(2);
    expect(io.err).toMatch(/recipients:2.*holds an age identity/s);
    expect(io.err).not.toContain(key);
    io = memoryIo();
    expect(await runCli([...base, '--snapshot-recipients-file', join(dir, 'nope')], io)).toBe(2);
    expect(io.err).toContain('--snapshot-recipients-file');
  });

  it('a missing, directory or dangling --etcd-* file is exit 2 naming the flag and the path', async () => {
    const { mkdir, symlink } = await import('node:fs/promises');
    const ca = join(dir, 'ca.crt');
    await writeFile(ca, 'not used: nothing connects before the files are read');
    await mkdir(join(dir, 'cert-dir'), { recursive: true });
    await symlink(join(dir, 'gone.key'), join(dir, 'dangling.key')).catch(() => undefined);
    const args = (cacert: string, cert: string, key: string) => [
      'run',
      plan,
      '--dry-run',
      '--kubeconfig',
      join(dir, 'kubeconfig'),
      '--etcd-endpoints',
      'https://127.0.0.1:2379',
      '--etcd-cacert',
      cacert,
      '--etcd-cert',
      cert,
      '--etcd-key',
      key,
    ];
    for (const [argv, says] of [
      [args(join(dir, 'none.crt'), ca, ca), `--etcd-cacert ${join(dir, 'none.crt')} does not exist`],
      [
        args(ca, join(dir, 'cert-dir'), ca),
        `--etcd-cert ${join(dir, 'cert-dir')} is a directory, not a file`,
      ],
      [
        args(ca, ca, join(dir, 'dangling.key')),
        `--etcd-key ${join(dir, 'dangling.key')} is a symbolic link to ${join(dir, 'gone.key')}, which does not exist`,
      ],
    ] as const) {
      const io = memoryIo();
      expect(await runCli([...argv], io), io.err).toBe(2);
      expect(io.err).toContain(says);
    }
  });

  it('lists run and rehearse among the commands', async () => {
    const io = memoryIo();
    await runCli(['--help'], io);
    expect(io.out).toMatch(/\brun\s+execute a plan/);
    expect(io.out).toMatch(/\brehearse\s+rehearse the migration on a lab/);
  });
});

describe('ferry run: the plan is the contract that was reviewed', () => {
  it('a step without its action, even with the digest sealed again, is exit 2 naming the field', async () => {
    const { integrityOf } = await import('../plan/integrity.js');
    const doc = JSON.parse(await readFile(plan, 'utf8')) as Record<string, unknown> & Plan;
    const step = doc.phases[2]!.steps[0] as unknown as Record<string, unknown>;
    delete step['action'];
    delete (doc as Record<string, unknown>)['integrity'];
    const resealed = { ...doc, integrity: integrityOf(doc) };
    const file = join(dir, 'resealed-plan.json');
    await writeFile(file, JSON.stringify(resealed, null, 2));
    const io = memoryIo();
    const code = await runCli(['run', file, '--dry-run', ...PLACEHOLDER_CONNECTION], io);
    expect(code, io.err).toBe(2);
    expect(io.err).toContain(`field phases[2].steps[0].action: the plan breaks a rule ferry run relies on`);
    expect(io.err).toContain(`phases[2].steps[0].action (${String(step['id'])}): missing`);
  });

  it('refuses a hand-edited plan before anything runs (exit 2), naming what differs and how to fix it', async () => {
    const doc = JSON.parse(await readFile(plan, 'utf8')) as Plan;
    const steps = doc.phases[2]!.steps;
    const j = steps.findIndex((s) => s.kind === 'etcd-remove-member' && s.subject === 'cp-1');
    const step = steps[j]!;
    step.destructive = false;
    const edited = join(dir, 'edited-plan.json');
    await writeFile(edited, JSON.stringify(doc, null, 2));
    const io = memoryIo();
    const code = await runCli(['run', edited, '--dry-run', ...PLACEHOLDER_CONNECTION], io);
    expect(code, io.err).toBe(2);
    expect(io.err).toContain(`${edited}, field phases[2].steps[${j}].destructive`);
    expect(io.err).toContain('the plan was changed after ferry plan wrote it');
    expect(io.err).toContain(`step ${step.id} (phases[2].steps[${j}]) changed: destructive (true → false)`);
    expect(io.err).toMatch(/fix: plan again with `ferry plan .*never edit plan\.json by hand/);
    expect(io.out).toBe('');
  });
});

describe('ferry run --dry-run checks what it can offline before it connects', () => {
  let tls: { ca: string; cert: string; key: string; certPem: string; otherKeyPem: string };
  let nowhere: string;
  beforeAll(async () => {
    const { createCA, issueCertificate } = await import('../pki/forge.js');
    const { closedPort } = await import('../adapters/kube/testing-fake-api.js');
    nowhere = `https://127.0.0.1:${await closedPort()}`;
    const ca = await createCA({ commonName: 'etcd-ca', key: { algorithm: 'ECDSA' } });
    const issue = (cn: string) =>
      issueCertificate({ issuer: ca, commonName: cn, usage: 'client', key: { algorithm: 'ECDSA' } });
    const [client, other] = await Promise.all([issue('kube-etcd-healthcheck-client'), issue('someone-else')]);
    tls = {
      ca: join(dir, 'etcd-ca.crt'),
      cert: join(dir, 'etcd-client.crt'),
      key: join(dir, 'etcd-client.key'),
      certPem: client.certPem,
      otherKeyPem: other.keyPem,
    };
    await writeFile(tls.ca, ca.certPem);
    await writeFile(tls.cert, client.certPem);
    await writeFile(tls.key, client.keyPem);
  });

  /** A directory holding a copy of the plan, a kubeconfig for `server` and whatever `setup` adds. */
  async function planDir(name: string, server: string): Promise<{ plan: string; kubeconfig: string }> {
    const { mkdir, copyFile } = await import('node:fs/promises');
    const d = join(dir, name);
    await mkdir(d, { recursive: true });
    await copyFile(plan, join(d, 'plan.json'));
    const kubeconfig = join(d, 'kubeconfig');
    await writeFile(
      kubeconfig,
      `apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster:
    server: ${server}
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: not-a-real-token
contexts:
- name: admin@lab
  context: {cluster: lab, user: admin}
current-context: admin@lab
`,
    );
    return { plan: join(d, 'plan.json'), kubeconfig };
  }

  const argv = (p: { plan: string; kubeconfig: string }, key = tls.key, dry = true) => [
    'run',
    p.plan,
    ...(dry ? ['--dry-run'] : ['--no-lease', '--no-probes', '--yes']),
    '--kubeconfig',
    p.kubeconfig,
    '--etcd-endpoints',
    nowhere,
    '--etcd-cacert',
    tls.ca,
    '--etcd-cert',
    tls.cert,
    '--etcd-key',
    key,
  ];

  async function ferry(args: string[]): Promise<{ code: number; err: string; out: string }> {
    const io = memoryIo();
    const code = await runCli(args, io);
    return { code, err: io.err, out: io.out };
  }

  it('with every input good, it gets as far as etcd (which does not answer)', async () => {
    const r = await ferry(argv(await planDir('good', nowhere)));
    expect(r.err).toContain('no etcd member answered');
  });

  it('a --kubeconfig that does not exist: exit 2 naming the flag and the path', async () => {
    const p = await planDir('no-kubeconfig', nowhere);
    const missing = join(dir, 'no-kubeconfig', 'none.kubeconfig');
    const io = memoryIo();
    expect(await runCli(argv({ plan: p.plan, kubeconfig: missing }), io), io.err).toBe(2);
    expect(io.err).toContain(`--kubeconfig ${missing} does not exist`);
  });

  it('the journal of another plan: refused as the run refuses it, before connecting', async () => {
    const p = await planDir('foreign-journal', nowhere);
    const { Journal, journalPathFor } = await import('../run/journal.js');
    const j = Journal.open(journalPathFor(p.plan));
    j.beginRun({ planFile: p.plan, planDigest: 'a'.repeat(64), steps: [] });
    j.close();
    const dry = await ferry(argv(p));
    expect(dry.code, dry.err).toBe(2);
    expect(dry.err).toContain(`the journal ${journalPathFor(p.plan)} belongs to another plan`);
    expect(dry.err).not.toContain('no etcd member answered');
    expect(dry.out).toBe('');
    const real = await ferry(argv(p, tls.key, false));
    expect(real.code).toBe(2);
    expect(real.err.split('\n')[0]).toBe(dry.err.split('\n')[0]);
  });

  it('a journal that is not a database: exit 2 naming it, in a dry run and a real one', async () => {
    const p = await planDir('junk-journal', nowhere);
    const { journalPathFor } = await import('../run/journal.js');
    const journal = journalPathFor(p.plan);
    await writeFile(journal, 'not a database '.repeat(100));
    for (const dry of [true, false]) {
      const r = await ferry(argv(p, tls.key, dry));
      expect(r.code, r.err).toBe(2);
      expect(r.err).toContain(
        `the run journal ${journal} is not a ferry journal: it is not an SQLite database`,
      );
    }
  });

  it('an etcd key that is not the client certificate’s, or a certificate where the key belongs', async () => {
    const p = await planDir('tls', nowhere);
    const wrong = join(dir, 'tls', 'other.key');
    await writeFile(wrong, tls.otherKeyPem);
    let r = await ferry(argv(p, wrong));
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain(
      `--etcd-key ${wrong} does not match the certificate in ${tls.cert} (--etcd-cert)`,
    );
    await writeFile(wrong, tls.certPem);
    r = await ferry(argv(p, wrong));
    expect(r.err).toContain(`--etcd-key ${wrong} is not a PEM private key: it holds a certificate`);
    expect(r.err).not.toContain('-----BEGIN');
  });

  it('a kubeconfig server that is not a URL: exit 2 naming the kubeconfig line, the cluster and the field', async () => {
    const p = await planDir('bad-server', 'https://[::::]:6443');
    const r = await ferry(argv(p));
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain(`error: ${p.kubeconfig}:6, cluster lab, field cluster.server: `);
  });
});
