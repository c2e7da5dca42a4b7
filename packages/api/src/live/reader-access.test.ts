import type { Db } from "@tide/db";
import { describe, expect, it, vi } from "vitest";
import { LIVE_RECHECK_FAILURES, watchLiveReader, type LiveRefusal } from "./reader-access";

const token = new Headers({ authorization: "Bearer tide_0123456789abcdef" });

/** A database whose token lookup answers `row` or throws, counting lookups. */
function fakeDb(lookup: () => Promise<unknown>) {
  const findUnique = vi.fn(lookup);
  return { db: { apiToken: { findUnique } } as unknown as Db, findUnique };
}

const until = async (what: () => boolean) => {
  for (let i = 0; i < 200 && !what(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(what()).toBe(true);
};

describe("an open stream's checks of its caller", () => {
  it("ends the stream, once, when the caller is no longer anyone", async () => {
    const { db, findUnique } = fakeDb(async () => null); // revoked tokens are not found as valid
    const ends: LiveRefusal[] = [];
    watchLiveReader(db, token, (why) => ends.push(why), { intervalMs: 5 });
    await until(() => ends.length > 0);
    await new Promise((r) => setTimeout(r, 30));
    expect(ends).toEqual([
      { status: 401, code: "unauthorized", message: expect.stringMatching(/no longer signed in/) },
    ]);
    expect(findUnique).toHaveBeenCalledTimes(1);
  });

  it("rides out one failed lookup and ends after LIVE_RECHECK_FAILURES in a row", async () => {
    const { db, findUnique } = fakeDb(async () => {
      throw new Error("statement timeout");
    });
    const ends: LiveRefusal[] = [];
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    watchLiveReader(db, token, (why) => ends.push(why), { intervalMs: 5 });
    await until(() => ends.length > 0);
    error.mockRestore();
    expect(findUnique).toHaveBeenCalledTimes(LIVE_RECHECK_FAILURES);
    expect(ends).toEqual([{ status: 503, code: "busy", message: expect.stringMatching(/reconnect/) }]);
  });

  it("stops checking when the stream closed", async () => {
    const { db, findUnique } = fakeDb(async () => null);
    const stop = watchLiveReader(db, token, () => undefined, { intervalMs: 5 });
    stop();
    await new Promise((r) => setTimeout(r, 30));
    expect(findUnique).not.toHaveBeenCalled();
  });
});
