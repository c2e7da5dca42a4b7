-- CreateEnum
CREATE TYPE "FindingSeverity" AS ENUM ('info', 'warn', 'critical');

-- CreateEnum
CREATE TYPE "FindingStatus" AS ENUM ('open', 'acknowledged', 'resolved');

-- CreateEnum
CREATE TYPE "FindingEventType" AS ENUM ('opened', 'severity_changed', 'acknowledged', 'resolved', 'reopened');

-- CreateTable
CREATE TABLE "hosts" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "roles" TEXT[],
    "agent_version" TEXT,
    "kernel_release" TEXT,
    "last_seen_at" TIMESTAMP(3),
    "probes" JSONB NOT NULL DEFAULT '[]',
    "data_plane" JSONB NOT NULL DEFAULT '[]',
    "desired_revision" INTEGER NOT NULL DEFAULT 0,
    "desired_hash" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "hosts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "host_tokens" (
    "id" TEXT NOT NULL,
    "host_id" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "token_hash" TEXT NOT NULL,
    "created_by_id" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMP(3),
    "last_used_at" TIMESTAMP(3),

    CONSTRAINT "host_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "observation_samples" (
    "id" TEXT NOT NULL,
    "host_id" TEXT NOT NULL,
    "sampled_at" TIMESTAMPTZ(3) NOT NULL,
    "received_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "payload" JSONB NOT NULL,

    CONSTRAINT "observation_samples_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "findings" (
    "id" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "host_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "incident" INTEGER NOT NULL,
    "severity" "FindingSeverity" NOT NULL,
    "status" "FindingStatus" NOT NULL,
    "title" TEXT NOT NULL,
    "subject" JSONB NOT NULL,
    "evidence" JSONB NOT NULL,
    "explanation" TEXT NOT NULL,
    "remedy" JSONB NOT NULL,
    "first_seen_at" TIMESTAMP(3) NOT NULL,
    "last_seen_at" TIMESTAMP(3) NOT NULL,
    "resolved_at" TIMESTAMP(3),
    "acknowledged_by" TEXT,
    "acknowledged_at" TIMESTAMP(3),

    CONSTRAINT "findings_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "finding_events" (
    "id" SERIAL NOT NULL,
    "finding_id" TEXT NOT NULL,
    "type" "FindingEventType" NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "by" TEXT NOT NULL,
    "from_severity" "FindingSeverity",
    "to_severity" "FindingSeverity",
    "detail" TEXT NOT NULL DEFAULT '',

    CONSTRAINT "finding_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "hosts_name_key" ON "hosts"("name");

-- CreateIndex
CREATE UNIQUE INDEX "host_tokens_token_hash_key" ON "host_tokens"("token_hash");

-- CreateIndex
CREATE INDEX "host_tokens_host_id_idx" ON "host_tokens"("host_id");

-- CreateIndex
CREATE UNIQUE INDEX "observation_samples_host_id_sampled_at_key" ON "observation_samples"("host_id", "sampled_at" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "findings_fingerprint_key" ON "findings"("fingerprint");

-- CreateIndex
CREATE INDEX "findings_host_id_status_idx" ON "findings"("host_id", "status");

-- CreateIndex
CREATE INDEX "findings_status_severity_idx" ON "findings"("status", "severity");

-- CreateIndex
CREATE INDEX "finding_events_finding_id_at_idx" ON "finding_events"("finding_id", "at");

-- AddForeignKey
ALTER TABLE "host_tokens" ADD CONSTRAINT "host_tokens_host_id_fkey" FOREIGN KEY ("host_id") REFERENCES "hosts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "host_tokens" ADD CONSTRAINT "host_tokens_created_by_id_fkey" FOREIGN KEY ("created_by_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "observation_samples" ADD CONSTRAINT "observation_samples_host_id_fkey" FOREIGN KEY ("host_id") REFERENCES "hosts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "findings" ADD CONSTRAINT "findings_host_id_fkey" FOREIGN KEY ("host_id") REFERENCES "hosts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "finding_events" ADD CONSTRAINT "finding_events_finding_id_fkey" FOREIGN KEY ("finding_id") REFERENCES "findings"("id") ON DELETE CASCADE ON UPDATE CASCADE;
