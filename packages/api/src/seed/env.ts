import path from "node:path";
import { z } from "zod";
import { passwordProblem } from "../auth/password-policy";

/**
 * Configuration of the seed command. TIDE_ADMIN_PASSWORD meets the password policy every other
 * way of setting a password applies (auth/password-policy.ts): length, not the email, not a
 * repetition, a run or a common password (issue 27 item 8: the seed took "aaaaaaaaaaaa").
 */
export const SeedEnv = z
  .object({
    DATABASE_URL: z.string().url(),
    TIDE_DATA_DIR: z.string().default(path.resolve(import.meta.dirname, "../../../../.tide")),
    TIDE_ADMIN_EMAIL: z.string().email().default("admin@tide.local"),
    TIDE_ADMIN_PASSWORD: z.string().optional(),
    TIDE_SEED_DEMO: z.enum(["0", "1"]).default("1"),
  })
  .superRefine((env, ctx) => {
    if (env.TIDE_ADMIN_PASSWORD === undefined) return;
    const problem = passwordProblem(env.TIDE_ADMIN_PASSWORD, env.TIDE_ADMIN_EMAIL);
    if (problem) ctx.addIssue({ code: "custom", path: ["TIDE_ADMIN_PASSWORD"], message: problem });
  });
export type SeedEnv = z.infer<typeof SeedEnv>;

/** The seed command's configuration, from its environment (seedEnv throws as parseSeedEnv does). */
export function seedEnv(): SeedEnv {
  return parseSeedEnv(process.env);
}

/** The seed's configuration from `env`, or an error that names each variable at fault and why. */
export function parseSeedEnv(env: Record<string, string | undefined>): SeedEnv {
  const result = SeedEnv.safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((i) => `${i.path.join(".") || "environment"}: ${i.message}`);
  throw new Error(`invalid environment for the seed:\n  ${lines.join("\n  ")}`);
}
