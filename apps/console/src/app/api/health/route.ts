import { checkDatabase } from "@tide/api";

/** Liveness for load balancers: 200 when PostgreSQL answers `SELECT 1` within 2 s, 503 otherwise. */
export const dynamic = "force-dynamic";

export async function GET(): Promise<Response> {
  // checkDatabase() itself never throws; creating the client does when DATABASE_URL is missing.
  const ok = await checkDatabase().catch(() => false);
  return Response.json(
    ok ? { status: "ok" } : { status: "unavailable", message: "The database does not answer." },
    { status: ok ? 200 : 503, headers: { "cache-control": "no-store" } },
  );
}
