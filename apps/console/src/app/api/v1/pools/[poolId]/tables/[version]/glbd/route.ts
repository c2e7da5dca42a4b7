import { handleTableDownload } from "@tide/api";

/** GLBD v2 download. A static path segment, so it wins over the REST catch-all at /api/v1/[...path]. */
export const dynamic = "force-dynamic";

export async function GET(
  req: Request,
  { params }: { params: Promise<{ poolId: string; version: string }> },
): Promise<Response> {
  const { poolId, version } = await params;
  return handleTableDownload({ headers: req.headers, poolId, version });
}
