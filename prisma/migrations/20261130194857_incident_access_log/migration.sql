-- CreateTable
CREATE TABLE "incident_access_log" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor" TEXT NOT NULL,
    "actor_kind" TEXT NOT NULL,
    "request_ref" TEXT NOT NULL,
    "format" TEXT NOT NULL,

    CONSTRAINT "incident_access_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "incident_access_log_at_id_idx" ON "incident_access_log"("at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "incident_access_log_request_ref_at_idx" ON "incident_access_log"("request_ref", "at" DESC);

-- What Prisma cannot express: the closed sets of values.
ALTER TABLE "incident_access_log"
  ADD CONSTRAINT "incident_access_log_actor_kind_check" CHECK ("actor_kind" IN ('session', 'personal_token', 'api_key')),
  ADD CONSTRAINT "incident_access_log_format_check" CHECK ("format" IN ('page', 'json', 'markdown'));
