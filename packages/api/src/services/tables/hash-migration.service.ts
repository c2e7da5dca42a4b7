import { TideError } from "@tide/contracts";
import type { Db } from "@tide/db";
import { systemActorRef } from "../../auth/actor";
import {
  HASH_MIGRATION_QUIET_MS,
  planAutoFinish,
  type AlternateHashActivity,
  type AutoFinish,
} from "./hash-migration.plan";
import { finishHashMigration } from "./pool.service";
import { alternateHashActivity } from "../telemetry/proxy-traffic.service";

/** How often a console process looks at the pools that migrate, ms. */
const CHECK_INTERVAL_MS = 5_000;

export interface MigrationCheck {
  poolId: string;
  plan: AutoFinish;
  finished: boolean;
}

/**
 * Finish every hash-field migration whose pool's proxies saw no packet through the old fields for
 * a quiet window (hash-migration.plan.ts). The finish runs under the pool lock and only for the
 * migration that was judged (expectedStartedAt), so a second console process, or an operator who
 * finished or restarted it meanwhile, is never overridden.
 */
export async function finishQuietMigrations(
  db: Db,
  now = new Date(),
  activityOf: (
    db: Db,
    poolId: string,
    windowMs: number,
  ) => Promise<AlternateHashActivity> = alternateHashActivity,
): Promise<MigrationCheck[]> {
  const pools = await db.pool.findMany({
    where: { hashMigrationStartedAt: { not: null } },
    select: { id: true, hashMigrationStartedAt: true },
  });
  const checks: MigrationCheck[] = [];
  for (const pool of pools) {
    const startedAt = pool.hashMigrationStartedAt!;
    const activity = await activityOf(db, pool.id, HASH_MIGRATION_QUIET_MS);
    const plan = planAutoFinish({ startedAt, now, activity });
    let finished = false;
    if (plan.finish) {
      try {
        await finishHashMigration(db, systemActorRef("hash migration"), {
          poolId: pool.id,
          reason: `finished automatically: ${plan.why}`,
          expectedStartedAt: startedAt,
        });
        finished = true;
      } catch (e) {
        // Someone finished or restarted it meanwhile (conflict), or the pool is gone: nothing to do.
        if (!(e instanceof TideError) || (e.code !== "conflict" && e.code !== "not_found")) throw e;
      }
    }
    checks.push({ poolId: pool.id, plan, finished });
  }
  return checks;
}

class HashMigrationFinisher {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly db: Db) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      finishQuietMigrations(this.db).catch((e: unknown) =>
        console.error("hash migration check failed:", e instanceof Error ? e.message : e),
      );
    }, CHECK_INTERVAL_MS);
    this.timer.unref();
  }
}

const finishers = new WeakMap<Db, HashMigrationFinisher>();

/**
 * The finisher of this process for `db`, started on first use: ingest calls it with every batch
 * (the proxies' counters arrive there), as it does telemetryCompactorFor.
 */
export function hashMigrationFinisherFor(db: Db): HashMigrationFinisher {
  let f = finishers.get(db);
  if (!f) {
    f = new HashMigrationFinisher(db);
    finishers.set(db, f);
    f.start();
  }
  return f;
}
