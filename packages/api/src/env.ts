import { z } from "zod";

/** Server configuration for the API layer, parsed once. */
const schema = z.object({
  DATABASE_URL: z.string().url().describe("PostgreSQL URL; `npm run up` points it at the embedded cluster"),
  TIDE_SESSION_HOURS: z.coerce.number().int().min(1).max(720).default(12),
});

export type ApiEnv = z.infer<typeof schema>;

let parsed: ApiEnv | undefined;

export function apiEnv(): ApiEnv {
  if (!parsed) {
    const result = schema.safeParse(process.env);
    if (!result.success) {
      throw new Error(`invalid environment for @tide/api: ${z.prettifyError(result.error)}`);
    }
    parsed = result.data;
  }
  return parsed;
}
