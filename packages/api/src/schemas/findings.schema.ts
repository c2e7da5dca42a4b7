import { safeText } from "@tide/contracts";
import {
  Evidence,
  FindingId,
  FindingKind,
  FindingSeverity,
  FindingStatus,
  FindingSubject,
  HostRecordId,
  Remedy,
} from "@tide/contracts";
import { z } from "zod";
import { HostRef } from "./hosts.schema";

/** API shapes of stored findings (contracts' Finding plus host, acknowledgement and history). */

export const FindingRecord = z
  .object({
    id: FindingId,
    fingerprint: z.string(),
    hostId: HostRecordId,
    kind: FindingKind,
    incident: z.int(),
    severity: FindingSeverity,
    status: FindingStatus,
    title: z.string(),
    subject: FindingSubject,
    evidence: z.array(Evidence),
    explanation: z.string(),
    remedy: Remedy,
    firstSeenAt: z.iso.datetime(),
    lastSeenAt: z.iso.datetime(),
    resolvedAt: z.iso.datetime().nullable(),
    acknowledgedBy: z.string().nullable().describe("Who acknowledged it (cleared when it resolves)"),
    acknowledgedAt: z.iso.datetime().nullable(),
  })
  .describe("A stored finding");
export type FindingRecord = z.infer<typeof FindingRecord>;

export const FindingEventType = z
  .enum(["opened", "severity_changed", "acknowledged", "resolved", "reopened"])
  .describe("What happened to the finding");

export const FindingEventRecord = z
  .object({
    type: FindingEventType,
    at: z.iso.datetime().describe("Evaluation time (latest sample) or the operator's action time"),
    by: z.string().describe('"diagnostics" or the actor who acted'),
    fromSeverity: FindingSeverity.nullable(),
    toSeverity: FindingSeverity.nullable(),
    detail: z.string().describe("Resolve reason or operator note"),
  })
  .describe("One step of a finding's history");

export const FindingDetail = FindingRecord.extend({
  history: z.array(FindingEventRecord).describe("In the order recorded (oldest first)"),
}).describe("A finding with its history");
export type FindingDetail = z.infer<typeof FindingDetail>;

export const FindingListInput = z.object({
  status: FindingStatus.optional(),
  hostId: HostRef.optional(),
  kind: FindingKind.optional(),
  severity: FindingSeverity.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const FindingIdInput = z.object({ findingId: FindingId });

export const AcknowledgeInput = z.object({
  findingId: FindingId,
  note: safeText().trim().max(500).optional().describe("Why, for the history and the audit log"),
});
