import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "@prisma/client";

export type Db = PrismaClient;

/**
 * A Prisma client over node-postgres (driver adapter: no native query engine, works offline).
 * One per process; pass the URL explicitly (apps parse it in their env.ts).
 */
export function createDb(databaseUrl: string, options: { max?: number } = {}): Db {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.max ?? 10 });
  return new PrismaClient({ adapter });
}
