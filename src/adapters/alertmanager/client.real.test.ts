/**
 * The Alertmanager adapter against a real Alertmanager: firing alerts that match the groups are
 * read as firing (silenced and non-matching ones are not), silences are created and expired through
 * its API, and an Alertmanager that does not answer is unobserved, never clear.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silenceMatchers } from '../../knowledge/expected-alerts.js';
import { skipFor } from '../../lab/testing-binaries.js';
import { parseMatcherGroup } from '../../util/label-match.js';
import { Alertmanager } from './client.js';
import { alertmanagerMissing, startAlertmanager, type TestAlertmanager } from './testing-alertmanager.js';

const group = (t: string) => {
  const g = parseMatcherGroup(t);
  if ('error' in g) throw new Error(g.error);
  return g;
};

describe.skipIf(skipFor(alertmanagerMissing()))('Alertmanager adapter (real Alertmanager)', () => {
  let am: TestAlertmanager;
  beforeAll(async () => {
    am = await startAlertmanager();
  }, 30_000);
  afterAll(async () => am?.stop());

  it('reads matching firing alerts, names them; silences hide them until expired', async () => {
    const client = new Alertmanager({ url: am.url });
    expect(await client.read()).toEqual({ kind: 'clear' });

    await am.fire([
      { alertname: 'KubeNodeNotReady', severity: 'critical', node: 'w-3' },
      { alertname: 'CPUThrottlingHigh', severity: 'info', namespace: 'shop' },
    ]);
    const r = await client.read();
    expect(r.kind).toBe('firing');
    expect(r.kind === 'firing' && r.items).toEqual([
      expect.stringMatching(/^KubeNodeNotReady\{node="w-3", severity="critical"\} since /),
    ]);
    // Another group catches the info alert too.
    const wide = new Alertmanager({
      url: am.url,
      groups: [group('severity=critical'), group('namespace=~"sh.*"')],
    });
    const w = await wide.read();
    expect(w.kind === 'firing' && w.items.length).toBe(2);

    const id = await client.silence(
      silenceMatchers({ alertname: 'KubeNodeNotReady', labels: { node: 'w-3' }, because: 'test' }),
      new Date(Date.now() + 60_000),
      'ferry test: w-3 is being replaced',
    );
    expect(await client.read()).toEqual({ kind: 'clear' });
    const [s] = (await am.silences()).filter((x) => x.id === id);
    expect(s).toMatchObject({
      status: { state: 'active' },
      createdBy: 'ferry',
      comment: 'ferry test: w-3 is being replaced',
    });

    await client.expire(id);
    expect((await client.read()).kind).toBe('firing');
    expect((await am.silences()).find((x) => x.id === id)?.status.state).toBe('expired');
    // Expiring it again is not an error: nothing is silenced by it.
    await client.expire(id);

    await am.resolve([{ alertname: 'KubeNodeNotReady', severity: 'critical', node: 'w-3' }]);
    expect(await client.read()).toEqual({ kind: 'clear' });
  });

  it('an Alertmanager that does not answer is unobserved, not clear', async () => {
    const other = await startAlertmanager();
    const client = new Alertmanager({ url: other.url, timeoutMs: 1000 });
    expect(await client.read()).toEqual({ kind: 'clear' });
    other.kill();
    await other.stop();
    expect(await client.read()).toEqual({
      kind: 'unobserved',
      reason: expect.stringMatching(/^Alertmanager 127\.0\.0\.1:\d+ did not answer: /),
    });
  }, 30_000);
});
