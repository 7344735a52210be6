/**
 * The orchestrator is the state machine only: what differs by step kind is the handler's
 * (handlers/context.ts). This fails when orchestrator.ts names a step kind as a value or a type
 * (`step.kind === 'drain'`, `case 'cordon':`, `StepOf<'gate'>`). The kinds are the handler
 * table's keys; the compiler tells a kind from the same text meaning something else (the gate
 * purpose of an observation, FerryError's kind 'gate'): a literal is a step kind unless the type it
 * is compared with or given to is known and admits at most this one kind, which is not a StepKind.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect, it } from 'vitest';
import { STEP_KINDS } from '../plan/model.js';
import { HANDLERS } from './handlers/index.js';

const RUN = fileURLToPath(new URL('.', import.meta.url));
const ORCHESTRATOR = join(RUN, 'orchestrator.ts');
const MODEL = join(RUN, '../plan/model.ts');
/** A file the checker is run on first, to show it finds what it must and passes what it may. */
const FIXTURE = join(RUN, '__kinds-fixture__.ts');
const FIXTURE_TEXT = `
import { FerryError } from '../errors.js';
import type { Step, StepKind, StepOf } from '../plan/model.js';
export function f(step: Step, err: unknown, purpose: 'gate' | 'verify', kinds: StepKind[]): unknown {
  if (err instanceof FerryError && err.kind === 'gate') return purpose === 'gate';
  if (step.kind === 'cordon') return 1;
  switch (step.kind) {
    case 'drain':
      return 2;
  }
  const s: StepOf<'scale-workload'> | undefined = undefined;
  return kinds.includes('stop-apiserver') || ['wait-node-ready'].length || s;
}
`;

const KINDS = new Set(Object.keys(HANDLERS));

function program(): ts.Program {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node'],
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => f === FIXTURE || fileExists.call(host, f);
  host.readFile = (f) => (f === FIXTURE ? FIXTURE_TEXT : readFile.call(host, f));
  host.getSourceFile = (f, v, ...rest) =>
    f === FIXTURE ? ts.createSourceFile(f, FIXTURE_TEXT, v) : getSourceFile.call(host, f, v, ...rest);
  return ts.createProgram([ORCHESTRATOR, FIXTURE], options, host);
}

/** `line: 'kind'` for every step kind named in `file`. */
function kindsNamed(p: ts.Program, file: string): string[] {
  const checker = p.getTypeChecker();
  const model = p.getSourceFile(MODEL)!;
  const alias = model.statements.find(
    (s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === 'StepKind',
  )!;
  const stepKind = checker.getTypeAtLocation(alias.name);
  const kindTypes = [...KINDS].map((k) => checker.getStringLiteralType(k));

  /** The type the literal is compared with, switched over, given to, or is part of. */
  const expectedType = (node: ts.StringLiteralLike): ts.Type | undefined => {
    const parent = node.parent;
    if (ts.isLiteralTypeNode(parent)) {
      let t: ts.TypeNode = parent;
      while (ts.isUnionTypeNode(t.parent)) t = t.parent;
      return checker.getTypeFromTypeNode(t);
    }
    if (ts.isBinaryExpression(parent)) {
      const op = parent.operatorToken.kind;
      const eq = [
        ts.SyntaxKind.EqualsEqualsEqualsToken,
        ts.SyntaxKind.ExclamationEqualsEqualsToken,
        ts.SyntaxKind.EqualsEqualsToken,
        ts.SyntaxKind.ExclamationEqualsToken,
      ];
      if (eq.includes(op))
        return checker.getTypeAtLocation(parent.left === node ? parent.right : parent.left);
    }
    if (ts.isCaseClause(parent)) return checker.getTypeAtLocation(parent.parent.parent.expression);
    if (ts.isElementAccessExpression(parent)) return undefined;
    return checker.getContextualType(node);
  };

  const isStepKindUse = (node: ts.StringLiteralLike): boolean => {
    const t = expectedType(node);
    if (!t) return true;
    const e = checker.getNonNullableType(t);
    if (e.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return true;
    const admitted = kindTypes.filter((k) => checker.isTypeAssignableTo(k, e)).length;
    return admitted > 1 || checker.isTypeAssignableTo(e, stepKind);
  };

  const sf = p.getSourceFile(file)!;
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) && KINDS.has(node.text) && isStepKindUse(node)) {
      const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
      found.push(`${line + 1}: '${node.text}'`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

it('orchestrator.ts names no step kind', () => {
  expect(KINDS.size).toBe(STEP_KINDS.length);
  const p = program();
  // The check itself: it finds each kind named in the fixture and lets the other 'gate's pass.
  expect(kindsNamed(p, FIXTURE)).toEqual([
    "6: 'cordon'",
    "8: 'drain'",
    "11: 'scale-workload'",
    "12: 'stop-apiserver'",
    "12: 'wait-node-ready'",
  ]);
  expect(kindsNamed(p, ORCHESTRATOR)).toEqual([]);
}, 120_000);
