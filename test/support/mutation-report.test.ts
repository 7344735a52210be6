import { expect, it } from 'vitest';
import {
  fileScores,
  type MutationReport,
  mergeReports,
  renderSurvivors,
  survivors,
} from './mutation-report.js';

const at = (line: number, col: number, endCol: number) => ({
  start: { line, column: col },
  end: { line, column: endCol },
});

const report: MutationReport = {
  files: {
    'src/b.ts': {
      source: 'if (a && b) go();\nreturn x | y;\n',
      mutants: [
        {
          id: '1',
          mutatorName: 'LogicalOperator',
          replacement: 'a || b',
          status: 'Killed',
          location: at(1, 5, 11),
        },
        {
          id: '2',
          mutatorName: 'ConditionalExpression',
          replacement: 'true',
          status: 'Survived',
          location: at(1, 5, 11),
        },
        {
          id: '3',
          mutatorName: 'BlockStatement',
          replacement: '{}',
          status: 'Timeout',
          location: at(1, 13, 18),
        },
        {
          id: '4',
          mutatorName: 'ArithmeticOperator',
          replacement: 'x & y',
          status: 'NoCoverage',
          location: at(2, 8, 13),
        },
        {
          id: '5',
          mutatorName: 'StringLiteral',
          replacement: '""',
          status: 'CompileError',
          location: at(2, 1, 2),
        },
      ],
    },
    'src/b.test.ts': {
      source: 'x',
      mutants: [{ id: '7', mutatorName: 'X', status: 'Survived', location: at(1, 1, 2) }],
    },
    'src/a.ts': {
      source: '',
      mutants: [{ id: '6', mutatorName: 'X', status: 'Ignored', location: at(1, 1, 1) }],
    },
  },
};

it('scores each file as Stryker does: killed and timed out over killed, timed out, survived and uncovered', () => {
  const { files, total } = fileScores(report);
  expect(files.map((f) => f.file)).toEqual(['src/a.ts', 'src/b.ts']);
  expect(files[0]?.score).toBeUndefined();
  expect(files[1]).toMatchObject({
    killed: 1,
    timeout: 1,
    survived: 1,
    noCoverage: 1,
    invalid: 1,
    score: 50,
  });
  expect(total.score).toBe(50);
});

it('lists the survivors and the uncovered with the code they replaced, escaped for a table', () => {
  expect(survivors(report)).toEqual([
    {
      file: 'src/b.ts',
      line: 1,
      mutator: 'ConditionalExpression',
      original: 'a && b',
      replacement: 'true',
      status: 'Survived',
    },
    {
      file: 'src/b.ts',
      line: 2,
      mutator: 'ArithmeticOperator',
      original: 'x | y',
      replacement: 'x & y',
      status: 'NoCoverage',
    },
  ]);
  const md = renderSurvivors(report);
  expect(md).toContain('| src/b.ts:2 (no test runs it) | ArithmeticOperator | `x \\| y` | `x & y` |');
  expect(renderSurvivors({ files: {} })).toBe('No mutant survived.');
});

it('merges the reports of runs over parts of the scope, each file whole from the last run that has it', () => {
  const older: MutationReport = {
    files: {
      'src/b.ts': { source: 'old', mutants: [] },
      'src/c.ts': report.files['src/b.ts']!,
    },
  };
  const merged = mergeReports([older, report]);
  expect(Object.keys(merged.files).sort()).toEqual(['src/a.ts', 'src/b.test.ts', 'src/b.ts', 'src/c.ts']);
  expect(merged.files['src/b.ts']).toBe(report.files['src/b.ts']);
  expect(merged.files['src/c.ts']).toBe(older.files['src/c.ts']);
  expect(mergeReports([]).files).toEqual({});
});
