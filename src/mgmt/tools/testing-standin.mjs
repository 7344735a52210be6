// A stand-in for kind, clusterctl, kubectl, helm, docker: records its argv, stdin and environment
// to calls.jsonl and plays the first matching rule of script.json (src/mgmt/tools/testing-standins.ts writes
// both). Rules may be limited in count, gated on markers other calls set, sleep, and write files
// (a kubeconfig, clusterctl move's directory) the way the real tool would.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [tool, ...args] = process.argv.slice(2);
const dir = process.env.FERRY_STANDIN_DIR;
if (!dir) {
  process.stderr.write('standin: FERRY_STANDIN_DIR is not set\n');
  process.exit(98);
}
let stdin = '';
try {
  stdin = readFileSync(0, 'utf8');
} catch {
  stdin = '';
}
appendFileSync(
  join(dir, 'calls.jsonl'),
  `${JSON.stringify({ tool, args, stdin, env: process.env, pid: process.pid })}\n`,
);

const script = JSON.parse(readFileSync(join(dir, 'script.json'), 'utf8'));
const statePath = join(dir, 'state.json');
const state = existsSync(statePath) ? JSON.parse(readFileSync(statePath, 'utf8')) : { counts: {}, marks: [] };
const line = args.join(' ');
const index = script.rules.findIndex(
  (r, i) =>
    r.tool === tool &&
    new RegExp(r.match).test(line) &&
    (r.times === undefined || (state.counts[i] ?? 0) < r.times) &&
    (r.after === undefined || state.marks.includes(r.after)) &&
    (r.unless === undefined || !state.marks.includes(r.unless)),
);
if (index < 0) {
  process.stderr.write(`standin: no rule for ${tool} ${line}\n`);
  process.exit(97);
}
const rule = script.rules[index];
state.counts[index] = (state.counts[index] ?? 0) + 1;
if (rule.mark && !state.marks.includes(rule.mark)) state.marks.push(rule.mark);
writeFileSync(statePath, JSON.stringify(state));
for (const f of rule.writeFiles ?? []) {
  const at = args[args.indexOf(f.afterArg) + 1];
  if (at === undefined) continue;
  if (f.name) {
    mkdirSync(at, { recursive: true });
    writeFileSync(join(at, f.name), f.content, { mode: 0o600 });
  } else writeFileSync(at, f.content, { mode: 0o600 });
}
if (rule.sleepMs) await new Promise((r) => setTimeout(r, rule.sleepMs));
if (rule.fromDirectory) {
  const { fromDirectory } = await import('./testing-standin-from-directory.mjs');
  const code = fromDirectory(
    args[args.indexOf('--from-directory') + 1],
    args[args.indexOf('--kubeconfig') + 1],
  );
  if (code !== 0) process.exit(code);
}
if (rule.stdout) process.stdout.write(rule.stdout);
if (rule.stderr) process.stderr.write(rule.stderr);
process.exitCode = rule.code ?? 0;
