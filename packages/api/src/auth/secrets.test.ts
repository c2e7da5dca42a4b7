import { isTideError } from "@tide/contracts";
import { expect, it } from "vitest";
import { HashGate } from "./secrets";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

it("runs at most `concurrency` at once, queues in order, and refuses past the queue limit", async () => {
  const gate = new HashGate(2);
  const started: number[] = [];
  const blockers = [deferred(), deferred(), deferred()];
  const runs = [0, 1, 2].map((i) =>
    gate.run(async () => {
      started.push(i);
      await blockers[i]!.promise;
      return i;
    }, 1),
  );
  await Promise.resolve();
  expect(started).toEqual([0, 1]);
  expect(gate.queued).toBe(1);

  // The queue (limit 1) is full: an unauthenticated caller is refused at once ...
  const refused = await gate.run(() => Promise.resolve("never"), 1).catch((e: unknown) => e);
  expect(isTideError(refused) && refused.code).toBe("rate_limited");
  // ... while a caller without a limit (an admin setting a password) waits its turn.
  const admin = gate.run(() => Promise.resolve("admin"));
  expect(gate.queued).toBe(2);

  blockers[0]!.resolve();
  expect(await runs[0]).toBe(0);
  await new Promise((r) => setTimeout(r, 0));
  expect(started).toEqual([0, 1, 2]);
  blockers[1]!.resolve();
  blockers[2]!.resolve();
  expect(await Promise.all(runs)).toEqual([0, 1, 2]);
  expect(await admin).toBe("admin");
  expect(gate.queued).toBe(0);
});
