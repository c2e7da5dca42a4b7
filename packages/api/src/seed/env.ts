import path from "node:path";
import { z } from "zod";

/** Configuration of the seed command, parsed once. */
export const seedEnv = z
  .object({
    DATABASE_URL: z.string().url(),
    TIDE_DATA_DIR: z.string().default(path.resolve(import.meta.dirname, "../../../../.tide")),
    TIDE_ADMIN_EMAIL: z.string().email().default("admin@tide.local"),
    TIDE_ADMIN_PASSWORD: z.string().min(12).optional(),
    TIDE_SEED_DEMO: z.enum(["0", "1"]).default("1"),
  })
  .parse(process.env);
