import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, writeFile, type FileHandle } from "node:fs/promises";
import path from "node:path";

/**
 * The agent's offline buffer on disk (issue 11 item 6): every sample queued for the console is also
 * appended to a journal in `spoolDir`, so an agent restarted (upgrade, crash, reboot) while the console
 * was unreachable replays what it had not delivered instead of losing it.
 *
 *   lock                    the pid of the agent that owns the spool (one agent per directory)
 *   seg-<first seq>.jsonl   one sample per line: {"seq":n,"o":<Observation>}
 *   state.json              {"acked":n,"dropped":{...}}: every sample up to seq n was delivered or
 *                           dropped; the drop totals survive restarts (tide_agent_samples_dropped_total)
 *
 * The spool mirrors the link's in-memory ring buffer (ring-buffer.ts): what the ring holds is exactly
 * the unacknowledged tail of the journal, oldest first. A sample the ring delivers or drops is
 * acknowledged here; a segment whose samples are all acknowledged is deleted. So the disk holds at
 * most the ring's bound (bufferMinutes, bufferMaxMiB) plus one segment (SEGMENT_BYTES).
 *
 * Writes go through the page cache without an fsync per sample: a crash or restart of the agent loses
 * nothing written; a power cut can lose the last seconds. state.json is rewritten (atomically) at most
 * every STATE_WRITE_MS, so after a crash up to that many delivered samples are sent again: the console
 * refuses them as duplicates, which is harmless. A line torn by a crash is skipped and counted
 * (spool_damaged). A failing disk (full, read-only) is logged; samples then live in memory only.
 */

/** A segment is closed and a new one started once it holds this many bytes. */
export const SEGMENT_BYTES = 4 * 1024 * 1024;
/** state.json is written at most this often (and on close). */
export const STATE_WRITE_MS = 2_000;

export interface SpoolOpened<T> {
  spool: DiskSpool;
  /** Samples not yet acknowledged, oldest first (to replay). */
  pending: T[];
  /** The drop totals of earlier runs. */
  dropped: Record<string, number>;
  /** Lines that could not be read back (torn by a crash, damaged): lost samples. */
  damaged: number;
}

interface Segment {
  first: number;
  last: number;
  bytes: number;
  file: string;
}

export class DiskSpool {
  private segments: Segment[] = [];
  private current: { seg: Segment; fh: FileHandle } | null = null;
  private chain: Promise<void> = Promise.resolve();
  private stateTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private lastError: { at: number; held: number } | null = null;
  /** Drop totals to persist with the acknowledged seq (the link's counters). */
  dropped: () => Record<string, number> = () => ({});

  private constructor(
    readonly dir: string,
    private nextSeq: number,
    private acked: number,
    private readonly log: (line: string) => void,
  ) {}

  /** Open (or create) the spool in `dir`, take its lock and read back what was not acknowledged. */
  static async open<T>(dir: string, log: (line: string) => void): Promise<SpoolOpened<T>> {
    await mkdir(dir, { recursive: true, mode: 0o750 });
    takeLock(dir);
    try {
      const state = await readState(dir);
      const names = (await readdir(dir)).filter((n) => /^seg-\d+\.jsonl$/.test(n));
      const firsts = names.map((n) => Number(n.slice(4, -6))).sort((a, b) => a - b);
      const pending: T[] = [];
      const segments: Segment[] = [];
      let damaged = 0;
      let maxSeq = state.acked;
      for (const first of firsts) {
        const file = path.join(dir, segmentName(first));
        const text = await readFile(file, "utf8");
        let last = first - 1;
        for (const line of text.split("\n")) {
          if (line === "") continue;
          let entry: { seq?: unknown; o?: unknown };
          try {
            entry = JSON.parse(line) as { seq?: unknown; o?: unknown };
          } catch {
            damaged++;
            continue;
          }
          if (typeof entry.seq !== "number" || entry.o === undefined) {
            damaged++;
            continue;
          }
          last = Math.max(last, entry.seq);
          if (entry.seq > state.acked) pending.push(entry.o as T);
        }
        maxSeq = Math.max(maxSeq, last);
        segments.push({ first, last, bytes: Buffer.byteLength(text), file });
      }
      const spool = new DiskSpool(dir, maxSeq + 1, state.acked, log);
      spool.segments = segments;
      // Fully acknowledged segments of an earlier run go now; new samples go to a new segment.
      await spool.deleteAcked(true);
      return { spool, pending, dropped: state.dropped, damaged };
    } catch (err) {
      releaseLock(dir);
      throw err;
    }
  }

  /** Append one sample (its JSON); written in order, in the background. */
  append(json: string): void {
    if (this.closed) return;
    const seq = this.nextSeq++;
    const line = `{"seq":${seq},"o":${json}}\n`;
    this.enqueue(async () => {
      if (this.current === null || this.current.seg.bytes >= SEGMENT_BYTES) await this.rotate(seq);
      const cur = this.current!;
      await cur.fh.write(line);
      cur.seg.bytes += Buffer.byteLength(line);
      cur.seg.last = seq;
    });
  }

  /** The n oldest unacknowledged samples were delivered or dropped. */
  ack(n: number): void {
    if (n <= 0 || this.closed) return;
    this.acked = Math.min(this.acked + n, this.nextSeq - 1);
    this.enqueue(() => this.deleteAcked(false));
    this.scheduleState();
  }

  /** The drop totals changed: persist them (debounced like acks). */
  droppedChanged(): void {
    if (!this.closed) this.scheduleState();
  }

  /** Bytes of the segments on disk. */
  get bytes(): number {
    return this.segments.reduce((sum, s) => sum + s.bytes, 0);
  }

  /** Wait for queued writes and write the state now. */
  async flush(): Promise<void> {
    if (this.stateTimer !== null) {
      clearTimeout(this.stateTimer);
      this.stateTimer = null;
    }
    this.enqueue(() => this.writeState());
    await this.chain;
  }

  /** Flush, close the segment and release the lock. */
  async close(): Promise<void> {
    if (this.closed) return;
    // Everything delivered: nothing stays on disk but the state (its drop totals).
    this.enqueue(() => this.deleteAcked(true));
    await this.flush();
    this.closed = true;
    await this.current?.fh.close().catch(() => undefined);
    this.current = null;
    releaseLock(this.dir);
  }

  private enqueue(step: () => Promise<void>): void {
    this.chain = this.chain.then(step).catch((err: unknown) => this.failed(err));
  }

  private failed(err: unknown): void {
    const now = Date.now();
    if (this.lastError !== null && now - this.lastError.at < 60_000) {
      this.lastError.held++;
      return;
    }
    const held = this.lastError?.held ?? 0;
    this.lastError = { at: now, held: 0 };
    this.log(
      `spool ${this.dir}: ${err instanceof Error ? err.message : String(err)}; samples are kept in memory only until it works${held > 0 ? ` (${held} more such errors)` : ""}`,
    );
  }

  private async rotate(first: number): Promise<void> {
    await this.current?.fh.close();
    const file = path.join(this.dir, segmentName(first));
    const fh = await open(file, "a", 0o640);
    const seg: Segment = { first, last: first - 1, bytes: 0, file };
    this.segments.push(seg);
    this.current = { seg, fh };
  }

  /** Delete segments whose samples are all acknowledged (the open one only when `all`). */
  private async deleteAcked(all: boolean): Promise<void> {
    while (this.segments.length > 0) {
      const s = this.segments[0]!;
      const open = this.current?.seg === s;
      if (s.last > this.acked || (open && !all)) break;
      if (open) {
        await this.current!.fh.close();
        this.current = null;
      }
      await rm(s.file, { force: true });
      this.segments.shift();
    }
  }

  private scheduleState(): void {
    if (this.stateTimer !== null) return;
    this.stateTimer = setTimeout(() => {
      this.stateTimer = null;
      this.enqueue(() => this.writeState());
    }, STATE_WRITE_MS);
    this.stateTimer.unref();
  }

  private async writeState(): Promise<void> {
    const file = path.join(this.dir, "state.json");
    const tmp = `${file}.tmp`;
    await writeFile(tmp, JSON.stringify({ acked: this.acked, dropped: this.dropped() }), { mode: 0o640 });
    await rename(tmp, file);
  }
}

const segmentName = (first: number) => `seg-${String(first).padStart(16, "0")}.jsonl`;

async function readState(dir: string): Promise<{ acked: number; dropped: Record<string, number> }> {
  let text: string;
  try {
    text = await readFile(path.join(dir, "state.json"), "utf8");
  } catch {
    return { acked: 0, dropped: {} };
  }
  try {
    const s = JSON.parse(text) as { acked?: unknown; dropped?: unknown };
    const acked = typeof s.acked === "number" && Number.isSafeInteger(s.acked) && s.acked >= 0 ? s.acked : 0;
    const dropped: Record<string, number> = {};
    if (typeof s.dropped === "object" && s.dropped !== null)
      for (const [k, v] of Object.entries(s.dropped))
        if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) dropped[k] = v;
    return { acked, dropped };
  } catch {
    // A damaged state file: replay everything on disk (duplicates are refused by the console).
    return { acked: 0, dropped: {} };
  }
}

/**
 * One agent per spool: two agents appending to one journal would interleave and ack each other's
 * samples. A lock left by a dead agent (kill -9, crash) is taken over.
 */
function takeLock(dir: string): void {
  const file = path.join(dir, "lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, "wx", 0o640);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const pid = Number(readFileSync(file, "utf8").trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
      throw new Error(
        `spool ${dir} is in use by the agent with pid ${pid}: give each agent its own spoolDir (TIDE_SPOOL_DIR)`,
      );
    }
    unlinkSync(file);
  }
  throw new Error(`spool ${dir}: could not take its lock`);
}

function releaseLock(dir: string): void {
  try {
    const file = path.join(dir, "lock");
    if (readFileSync(file, "utf8").trim() === String(process.pid)) unlinkSync(file);
  } catch {
    // already gone
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
