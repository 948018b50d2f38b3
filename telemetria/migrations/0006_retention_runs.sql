-- Every retention run that dropped data (or found nothing to drop): when, the cutoff it used and
-- the chunks it dropped, as evidence that only records older than the legal minimum (Lei
-- 3.588/2023 Art. 15 §6: at least 2 years) were deleted. Also how the service's periodic task
-- knows, across processes and hosts, when retention last ran. Small; never purged.
CREATE TABLE retention_runs (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ran_at         timestamptz NOT NULL DEFAULT now(),
    cutoff         timestamptz NOT NULL,
    retention_days integer NOT NULL CHECK (retention_days >= 730),
    source         text NOT NULL,
    chunks         jsonb NOT NULL
);
