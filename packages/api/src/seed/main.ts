/**
 * Seed command (`npm run -w @tide/api seed`): the first admin and, unless TIDE_SEED_DEMO=0, a demo
 * fleet, then one new version for any pool whose table predates per-table hash fields (GLBD v2).
 * Safe to run again: nothing else existing is changed. New passwords are written to
 * <data dir>/admin-credentials (mode 600) and printed once; they are never logged elsewhere.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createDb } from "@tide/db";
import { seedDemoFleet } from "./demo-fleet";
import { seedEnv as readSeedEnv } from "./env";
import { upgradeTableFormats } from "./table-format";
import { ensureUser } from "./users";

async function main() {
  const seedEnv = readSeedEnv();
  const db = createDb(seedEnv.DATABASE_URL, { max: 2 });
  try {
    const admin = await ensureUser(db, {
      email: seedEnv.TIDE_ADMIN_EMAIL,
      name: "Administrator",
      role: "admin",
      password: seedEnv.TIDE_ADMIN_PASSWORD,
    });
    const credentialsFile = path.join(seedEnv.TIDE_DATA_DIR, "admin-credentials");
    if (admin.created && admin.password) {
      mkdirSync(seedEnv.TIDE_DATA_DIR, { recursive: true });
      writeFileSync(credentialsFile, `email=${seedEnv.TIDE_ADMIN_EMAIL}\npassword=${admin.password}\n`, {
        mode: 0o600,
      });
      console.log(`seed: created admin ${seedEnv.TIDE_ADMIN_EMAIL}; credentials in ${credentialsFile}`);
    } else {
      console.log(
        `seed: admin ${seedEnv.TIDE_ADMIN_EMAIL} exists (credentials were written to ${credentialsFile})`,
      );
    }
    if (seedEnv.TIDE_SEED_DEMO === "1") {
      const created = await seedDemoFleet(db);
      console.log(
        created.length ? `seed: created demo pools ${created.join(", ")}` : "seed: demo fleet exists",
      );
    }
    const upgraded = await upgradeTableFormats(db);
    if (upgraded.length) console.log(`seed: tables now carry their hash fields: ${upgraded.join(", ")}`);
  } finally {
    await db.$disconnect();
  }
}

main().catch((e: unknown) => {
  console.error("seed failed:", e instanceof Error ? e.message : e);
  process.exit(1);
});
