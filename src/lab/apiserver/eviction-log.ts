/**
 * Every eviction decision an API server instance made, in memory, for tests and rehearsals to
 * check afterwards (e.g. that no eviction was let through a budget with no disruption left).
 * Instances of one lab share a log when they are given the same one.
 */

export type BudgetSnapshot = {
  currentHealthy: number;
  desiredHealthy: number;
  disruptionsAllowed: number;
  expectedPods: number;
};

export type EvictionRecord = {
  at: string;
  /** The API server instance that decided. */
  instance: string;
  user: string;
  namespace: string;
  pod: string;
  outcome: 'evicted' | 'refused' | 'failed';
  /** HTTP status of the answer. */
  code: number;
  /** The budget that decided, if one covered the pod. */
  pdb?: string;
  /** Budget status at decision time. */
  budget?: BudgetSnapshot;
  /** Why: the decision reason when evicted, the answer's message otherwise. */
  reason: string;
};

export class EvictionLog {
  readonly #records: EvictionRecord[] = [];

  record(r: EvictionRecord): void {
    this.#records.push(r);
  }

  all(): EvictionRecord[] {
    return this.#records.map((r) => ({ ...r }));
  }

  clear(): void {
    this.#records.length = 0;
  }

  /** Evictions let through although their budget allowed no disruption: must always be empty. */
  violations(): EvictionRecord[] {
    return this.#records.filter(
      (r) => r.outcome === 'evicted' && r.budget !== undefined && r.budget.disruptionsAllowed < 1,
    );
  }
}
