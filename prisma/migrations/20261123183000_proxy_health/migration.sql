-- Health checks of proxies (issue 12): a pool's check settings, an operator's pin, and each
-- director's view of each proxy from its agent's reports.
ALTER TABLE "pools" ADD COLUMN "health_check" JSONB NOT NULL DEFAULT '{}';

ALTER TABLE "proxies" ADD COLUMN "health_pinned" BOOLEAN;

CREATE TABLE "proxy_health_views" (
    "director_id" TEXT NOT NULL,
    "proxy_id" TEXT NOT NULL,
    "up" BOOLEAN,
    "since" TIMESTAMP(3),
    "checks" JSONB NOT NULL DEFAULT '[]',
    "reported_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "proxy_health_views_pkey" PRIMARY KEY ("director_id","proxy_id")
);

CREATE INDEX "proxy_health_views_proxy_id_idx" ON "proxy_health_views"("proxy_id");

ALTER TABLE "proxy_health_views" ADD CONSTRAINT "proxy_health_views_director_id_fkey" FOREIGN KEY ("director_id") REFERENCES "directors"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "proxy_health_views" ADD CONSTRAINT "proxy_health_views_proxy_id_fkey" FOREIGN KEY ("proxy_id") REFERENCES "proxies"("id") ON DELETE CASCADE ON UPDATE CASCADE;
