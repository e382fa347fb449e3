/**
 * Questions asked a few at a time: each item's task starts as soon as fewer than `limit` are unanswered and,
 * with a weight, as long as the unanswered ones' weight stays within `maxWeight` (one is always asked, whatever
 * its weight). Used for WHO masks (weighed by the rows they are expected to bring) and MODE checks.
 */
export interface InTurnLimits<T> {
  limit: number;
  weight?: (item: T) => number;
  maxWeight?: number;
}

/** Run `task` for every item, in order, within `limits`; rejects with the first failure and starts no more. */
export async function inTurn<T>(
  items: readonly T[],
  { limit, weight = () => 0, maxWeight = Infinity }: InTurnLimits<T>,
  task: (item: T) => Promise<unknown>,
): Promise<void> {
  let index = 0;
  let inFlight = 0;
  let weighed = 0;
  await new Promise<void>((resolve, reject) => {
    let failed = false;
    const next = (): void => {
      if (failed) return;
      if (index >= items.length && inFlight === 0) {
        resolve();
        return;
      }
      while (index < items.length && inFlight < limit) {
        const item = items[index]!;
        const itemWeight = weight(item);
        if (inFlight > 0 && weighed + itemWeight > maxWeight) return;
        index++;
        inFlight++;
        weighed += itemWeight;
        task(item).then(
          () => {
            inFlight--;
            weighed -= itemWeight;
            next();
          },
          (error: unknown) => {
            failed = true;
            reject(error instanceof Error ? error : new Error(String(error)));
          },
        );
      }
    };
    next();
  });
}
