import { spawn } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DiskSpool, SEGMENT_BYTES } from "./spool";

let dir: string;
const logs: string[] = [];
const log = (line: string) => logs.push(line);

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "tide-spool-"));
  logs.length = 0;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const segments = () => readdirSync(dir).filter((n) => n.endsWith(".jsonl"));

describe("DiskSpool", () => {
  it("gives back what was not acknowledged, in order, after a restart", async () => {
    const { spool, pending } = await DiskSpool.open<{ n: number }>(dir, log);
    expect(pending).toEqual([]);
    for (let n = 1; n <= 5; n++) spool.append(JSON.stringify({ n }));
    spool.ack(2);
    await spool.close();

    const again = await DiskSpool.open<{ n: number }>(dir, log);
    expect(again.pending).toEqual([{ n: 3 }, { n: 4 }, { n: 5 }]);
    // New samples follow the old ones; acknowledging all of them empties the journal.
    again.spool.append(JSON.stringify({ n: 6 }));
    again.spool.ack(4);
    await again.spool.close();
    expect(segments()).toEqual([]);
    const third = await DiskSpool.open<{ n: number }>(dir, log);
    expect(third.pending).toEqual([]);
    await third.spool.close();
  });

  it("without a clean stop (a crash) loses nothing written; acks not yet saved only replay duplicates", async () => {
    const { spool } = await DiskSpool.open<{ n: number }>(dir, log);
    for (let n = 1; n <= 3; n++) spool.append(JSON.stringify({ n }));
    spool.ack(1); // state.json is written later (debounced): the crash comes first
    await new Promise((r) => setTimeout(r, 50));
    rmSync(path.join(dir, "lock")); // the crashed agent's lock (its pid is ours: taken over anyway)
    const again = await DiskSpool.open<{ n: number }>(dir, log);
    expect(again.pending).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    await again.spool.close();
  });

  it("rotates segments and deletes those whose samples are all acknowledged", async () => {
    const { spool } = await DiskSpool.open<string>(dir, log);
    const big = JSON.stringify("x".repeat(SEGMENT_BYTES / 2));
    for (let i = 0; i < 6; i++) spool.append(big); // 2 per segment (the third starts a new one)
    await spool.flush();
    expect(segments()).toHaveLength(3);
    expect(spool.bytes).toBeGreaterThan(3 * SEGMENT_BYTES - 100);
    spool.ack(4);
    await spool.flush();
    expect(segments()).toHaveLength(1);
    await spool.close();
    expect((await DiskSpool.open<string>(dir, log)).pending).toHaveLength(2);
  });

  it("skips and counts lines a crash tore, and survives a damaged state file", async () => {
    const { spool } = await DiskSpool.open<{ n: number }>(dir, log);
    spool.append(JSON.stringify({ n: 1 }));
    spool.append(JSON.stringify({ n: 2 }));
    await spool.close();
    appendFileSync(path.join(dir, segments()[0]!), '{"seq":3,"o":{"n":');
    writeFileSync(path.join(dir, "state.json"), "{not json");
    const again = await DiskSpool.open<{ n: number }>(dir, log);
    expect(again.pending).toEqual([{ n: 1 }, { n: 2 }]);
    expect(again.damaged).toBe(1);
    await again.spool.close();
  });

  it("keeps the drop totals across restarts", async () => {
    const { spool } = await DiskSpool.open(dir, log);
    spool.dropped = () => ({ buffer_full: 7, refused: 1 });
    spool.droppedChanged();
    await spool.close();
    const again = await DiskSpool.open(dir, log);
    expect(again.dropped).toEqual({ buffer_full: 7, refused: 1 });
    await again.spool.close();
  });

  it("belongs to one agent: a live agent's lock is refused, a dead one's taken over", async () => {
    const sleeper = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, "lock"), String(sleeper.pid));
      await expect(DiskSpool.open(dir, log)).rejects.toThrow(
        new RegExp(`in use by the agent with pid ${sleeper.pid}: give each agent its own spoolDir`),
      );
    } finally {
      sleeper.kill("SIGKILL");
      await new Promise((r) => sleeper.once("exit", r));
    }
    // The same pid, now dead (a crashed agent): taken over.
    const { spool } = await DiskSpool.open(dir, log);
    await spool.close();
    expect(readdirSync(dir)).not.toContain("lock");
  });

  it("says so when the disk fails and goes on in memory", async () => {
    const { spool } = await DiskSpool.open(dir, log);
    spool.append("1");
    await spool.flush();
    // The directory disappears under the agent (a wiped /var/lib): writes fail, are logged once.
    rmSync(dir, { recursive: true, force: true });
    writeFileSync(dir, "not a directory");
    spool.ack(1);
    spool.append("2");
    spool.append("3");
    await spool.flush();
    expect(logs.filter((l) => l.includes("kept in memory only"))).toHaveLength(1);
    await spool.close();
    rmSync(dir, { force: true });
  });
});
