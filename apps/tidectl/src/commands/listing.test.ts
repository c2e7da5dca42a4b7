import { describe, expect, it } from "vitest";
import { groups } from "./listing";

describe("commands/listing.ts", () => {
  it.each(groups.map((g) => [g.name, g] as const))(
    "lists exactly the commands the %s group loads, in order",
    async (_, group) => {
      const loaded = await group.load();
      expect(loaded.map((c) => c.name)).toEqual(Object.keys(group.commands));
    },
  );

  it("names each group once", () => {
    const names = groups.map((g) => g.name);
    expect(new Set(names).size).toBe(names.length);
  });
});
