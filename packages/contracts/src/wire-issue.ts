import type { z } from "zod";

/**
 * The first problem zod found in a line a helper process wrote (tide-probes, tide-nsdiag), as
 * "path: message": short enough for a log line or a namespace's error.
 */
export function firstWireIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return "invalid";
  return issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message;
}
