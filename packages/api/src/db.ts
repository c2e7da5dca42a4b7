import { createDb, type Db } from "@tide/db";
import { apiEnv } from "./env";

let shared: Db | undefined;

/** The process-wide Prisma client, created on first use from DATABASE_URL. */
export function getDb(): Db {
  shared ??= createDb(apiEnv().DATABASE_URL);
  return shared;
}

export async function checkDatabase(db?: Db): Promise<boolean> {
  try {
    await (db ?? getDb()).$queryRaw`SELECT 1`;
    return true;
  } catch {
    return false;
  }
}
