/**
 * Prisma CLI configuration: the Wasm schema engine over node-postgres (no native engine binary,
 * so migrations work offline). Used through scripts/prisma.sh, never by the runtime client.
 *
 * Works around three upstream problems of Prisma 6.19 + @prisma/adapter-pg 6.19:
 *  1. adapter-pg cannot decode PostgreSQL's `name`/`"char"` types (OID 19/18, arrays 1003/1002)
 *     that the schema engine's introspection queries return (prisma/orm#27403): those columns are
 *     decoded as text/text[] instead.
 *  2. Its shadow database: the stock factory lets a connection string override `database`, so the
 *     shadow pool can silently point at the main database, and it drops the shadow database
 *     before closing the pool on it. We build every pool from discrete host/port/user/password/
 *     database and create/drop the shadow database ourselves (the role needs CREATEDB).
 *  3. Idle timers keep the CLI alive up to 60 s after it finished: pools use allowExitOnIdle and
 *     scripts/unref-wasm-timers.cjs (a --require preload) unrefs timers armed by the Wasm engine.
 */
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { defineConfig } from "prisma/config";

/** Text-protocol OIDs the adapter rejects, mapped to ones it decodes the same way as text. */
const DECODE_AS: Record<number, number> = {
  18: 25, // "char" -> text
  19: 25, // name -> text
  1002: 1009, // "char"[] -> text[]
  1003: 1009, // name[] -> text[]
};

interface RowDescription {
  fields: { dataTypeID: number }[];
}
type RowDescriptionHandler = (this: unknown, message: RowDescription) => void;

// Remap before node-postgres picks its parsers and before the adapter maps column types.
// This runs only in the Prisma CLI process that loads this file.
const queryPrototype = pg.Query.prototype as unknown as { handleRowDescription: RowDescriptionHandler };
const handleRowDescription = queryPrototype.handleRowDescription;
queryPrototype.handleRowDescription = function (message) {
  for (const field of message.fields) field.dataTypeID = DECODE_AS[field.dataTypeID] ?? field.dataTypeID;
  handleRowDescription.call(this, message);
};

interface Connection {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

function connectionOf(url: string | undefined): Connection {
  if (!url) throw new Error("DATABASE_URL is not set (scripts/prisma.sh needs it for migrations)");
  const u = new URL(url);
  return {
    host: decodeURIComponent(u.hostname),
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: decodeURIComponent(u.pathname.slice(1)),
  };
}

const poolConfig = (c: Connection): pg.PoolConfig => ({ ...c, max: 4, allowExitOnIdle: true });

async function adapterFactory() {
  const main = connectionOf(process.env.DATABASE_URL);
  const factory = new PrismaPg(poolConfig(main));
  return Object.assign(factory, {
    async connectToShadowDb() {
      const shadow = `prisma_shadow_${crypto.randomUUID().replaceAll("-", "")}`;
      const admin = new pg.Client(main);
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(shadow)}`);
      } finally {
        await admin.end();
      }
      const adapter = await new PrismaPg(poolConfig({ ...main, database: shadow })).connect();
      const dispose = adapter.dispose.bind(adapter);
      adapter.dispose = async () => {
        await dispose(); // close the pool on the shadow database first, then drop it
        const dropper = new pg.Client(main);
        await dropper.connect();
        try {
          await dropper.query(`DROP DATABASE IF EXISTS ${dropper.escapeIdentifier(shadow)} WITH (FORCE)`);
        } finally {
          await dropper.end();
        }
      };
      return adapter;
    },
  });
}

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  adapter: adapterFactory,
  schema: path.join(import.meta.dirname, "../../prisma/schema.prisma"),
  migrations: { path: path.join(import.meta.dirname, "../../prisma/migrations") },
});
