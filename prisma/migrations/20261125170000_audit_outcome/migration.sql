-- Refused attempts in the audit log (issue 13): a 409 or 403 on a mutating call is recorded with
-- outcome "refused" and the API's reason, so an audit shows who tried what, not only what happened.
CREATE TYPE "AuditOutcome" AS ENUM ('done', 'refused');

ALTER TABLE "audit_events" ADD COLUMN "outcome" "AuditOutcome" NOT NULL DEFAULT 'done',
ADD COLUMN "refusal" TEXT NOT NULL DEFAULT '';

-- Filters by action and actor (newest first within each).
CREATE INDEX "audit_events_action_created_at_idx" ON "audit_events"("action", "created_at");
CREATE INDEX "audit_events_actor_label_created_at_idx" ON "audit_events"("actor_label", "created_at");
