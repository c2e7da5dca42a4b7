import { describe, expect, it } from "vitest";
import { newEnvFile, planEnvFile, socketDatabaseUrl } from "./setup-postgres.plan";

const url = "postgresql://tide-console@localhost/tide?host=/var/run/postgresql";

describe("setup-postgres's plan", () => {
  it("points DATABASE_URL at the Unix socket with no password (peer authentication)", () => {
    const target = { role: "tide-console", database: "tide", socketDir: "/var/run/postgresql" };
    expect(socketDatabaseUrl({ ...target, port: 5432 })).toBe(url);
    expect(socketDatabaseUrl({ ...target, port: 5433 })).toBe(`${url}&port=5433`);
    const parsed = new URL(socketDatabaseUrl({ ...target, port: 5432 }));
    expect([parsed.username, parsed.password, parsed.searchParams.get("host")]).toEqual([
      "tide-console",
      "",
      "/var/run/postgresql",
    ]);
  });

  it.each([
    ["a missing file is written whole", null, "create"],
    ["a file without DATABASE_URL gets it appended", "PORT=3000", "append"],
    ["the same DATABASE_URL changes nothing", `PORT=3000\nDATABASE_URL=${url}\n`, "unchanged"],
    ["a quoted same DATABASE_URL changes nothing", `DATABASE_URL="${url}"\n`, "unchanged"],
    [
      "another DATABASE_URL is never overwritten",
      "DATABASE_URL=postgresql://db.example.net/tide\n",
      "conflict",
    ],
  ] as const)("%s", (_what, existing, kind) => {
    const change = planEnvFile(existing, url);
    expect(change.kind).toBe(kind);
    if (change.kind === "append")
      expect(change.content).toBe(
        `PORT=3000\n\n# Written by tide-console setup-postgres: PostgreSQL on this host over its Unix socket, peer authentication.\nDATABASE_URL=${url}\n`,
      );
    if (change.kind === "conflict") expect(change.current).toBe("postgresql://db.example.net/tide");
  });

  it("writes a file systemd and node read the same way", () => {
    const loaded = new Map(
      newEnvFile(url)
        .split("\n")
        .filter((l) => l && !l.startsWith("#"))
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    expect(Object.fromEntries(loaded)).toEqual({ DATABASE_URL: url });
  });
});
