import { describe, expect, it } from 'vitest';
import { assembleFleetPlan, type PlanEntry, renderFleetPlan } from './waves.js';

const planned = (name: string, labels: Record<string, string>, minutes: number): PlanEntry => ({
  cluster: { name, labels, source: { kind: 'snapshot', dir: `/f/${name}`, shown: name } },
  outcome: {
    kind: 'planned',
    planFile: `out/${name}/plan.json`,
    seconds: minutes * 60,
    controlPlanes: 3,
    workers: 5,
    batches: 2,
  },
});

describe('the fleet plan', () => {
  it('puts canaries first, then waves in label order (numbers as numbers, unlabelled last), at most K at once', () => {
    const p = assembleFleetPlan({
      fleet: 'fleet.yaml',
      maxParallel: 2,
      waveLabel: 'wave',
      now: new Date(0),
      entries: [
        planned('p3', { wave: '10' }, 30),
        planned('p1', { wave: '2' }, 60),
        planned('p2', { wave: '2' }, 90),
        planned('p4', { wave: '2' }, 45),
        planned('c1', { wave: '10', canary: 'true' }, 20),
        planned('loose', {}, 10),
        {
          cluster: {
            name: 'blocked',
            labels: { wave: '2' },
            source: { kind: 'snapshot', dir: '/b', shown: 'b' },
          },
          outcome: {
            kind: 'refused',
            why: ['3 unsuppressed blocker(s): a, b, c (fix them, or --allow-blockers)'],
          },
        },
      ],
    });
    expect(p.waves.map((w) => [w.name, w.rounds])).toEqual([
      ['canary', [['c1']]],
      ['2', [['p1', 'p2'], ['p4']]],
      ['10', [['p3']]],
      ['(unlabelled)', [['loose']]],
    ]);
    // Wave 2: round 1 takes its longest (90 min), round 2 45 min.
    expect(p.waves[1]!.seconds).toBe((90 + 45) * 60);
    expect(p.seconds).toBe((20 + 135 + 30 + 10) * 60);
    expect(p.notPlanned).toBe(1);
    expect(p.waves.flatMap((w) => w.rounds.flat())).not.toContain('blocked');
    const text = renderFleetPlan(p, 'table');
    expect(text).toContain(
      '6 cluster(s) in 4 wave(s), at most 2 at once, about 3 h 15 min in all; 1 cannot be planned.',
    );
    expect(text).toContain('  round 1: p1 (1 h), p2 (1 h 30 min)');
    expect(text).toContain('  blocked: 3 unsuppressed blocker(s)');
    expect(JSON.parse(renderFleetPlan(p, 'json'))).toEqual(JSON.parse(JSON.stringify(p)));
    expect(renderFleetPlan(p, 'md')).toContain('## Wave 2 (about 2 h 15 min)');
  });
});
