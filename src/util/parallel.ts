/** Bounded concurrency: API writes of backup (pause) and restore (create, status), the lab nodes controller's per-object lanes. */
/** Runs `fn` over `items`, at most `limit` at a time; the first failure rejects once all started ones settle. */
export async function inParallel<T>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const worker = async () => {
    while (next < items.length && !failure) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.err;
}

/**
 * Runs `fn` over the items `0 … count-1`, each as soon as every item it depends on has succeeded
 * (not a whole level later), at most `limit` at a time. `dependsOn` must not form cycles (the
 * caller breaks them). The first failure starts nothing new and rejects once all started ones
 * settle, so the caller knows everything that ran.
 */
export async function inDependencyOrder(
  count: number,
  dependsOn: (item: number) => readonly number[],
  limit: number,
  fn: (item: number) => Promise<void>,
): Promise<void> {
  const waiting = new Array<number>(count).fill(0);
  const dependents: number[][] = Array.from({ length: count }, () => []);
  for (let i = 0; i < count; i++)
    for (const d of new Set(dependsOn(i))) {
      waiting[i]!++;
      dependents[d]!.push(i);
    }
  const ready: number[] = [];
  for (let i = 0; i < count; i++) if (waiting[i] === 0) ready.push(i);
  let running = 0;
  let done = 0;
  let failure: { err: unknown } | undefined;
  await new Promise<void>((resolve) => {
    const pump = () => {
      while (!failure && running < limit && ready.length > 0) {
        const i = ready.shift()!;
        running++;
        Promise.resolve()
          .then(() => fn(i))
          .then(
            () => {
              done++;
              for (const j of dependents[i]!) if (--waiting[j]! === 0) ready.push(j);
              settle();
            },
            (err: unknown) => {
              failure ??= { err };
              settle();
            },
          );
      }
      if (running === 0 && (failure || ready.length === 0)) resolve();
    };
    const settle = () => {
      running--;
      pump();
    };
    pump();
  });
  if (failure) throw failure.err;
  if (done < count) throw new Error(`${count - done} item(s) wait on a dependency cycle`);
}
