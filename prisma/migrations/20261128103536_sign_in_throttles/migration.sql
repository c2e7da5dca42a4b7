-- CreateTable
CREATE TABLE "sign_in_throttles" (
    "key" TEXT NOT NULL,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "last_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sign_in_throttles_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "sign_in_known_sources" (
    "email" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "last_success_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sign_in_known_sources_pkey" PRIMARY KEY ("email","source")
);

-- CreateIndex
CREATE INDEX "sign_in_throttles_last_at_idx" ON "sign_in_throttles"("last_at");

-- CreateIndex
CREATE INDEX "sign_in_known_sources_last_success_at_idx" ON "sign_in_known_sources"("last_success_at");
