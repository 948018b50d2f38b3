-- Notification of new occurrences (issue 18): an outbox that survives restarts and failures. notify.enqueue writes
-- one row per occurrence and channel in the same transaction as the occurrence; notify.deliver_round sends the due
-- ones and records the outcome; a failed one is retried later (next_at, backoff), never dropped. docs/operations.md.
CREATE TABLE notify_outbox (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,   -- the delivery id receivers dedupe on
    occurrence_id bigint NOT NULL REFERENCES occurrences (id) ON DELETE CASCADE,
    channel       text NOT NULL CHECK (channel IN ('email', 'webhook')),
    attempts      integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_at       timestamptz NOT NULL DEFAULT now(),                -- due from; while sending, the claim's lease
    sent_at       timestamptz,
    last_error    text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (occurrence_id, channel)
);
CREATE INDEX notify_outbox_due ON notify_outbox (next_at) WHERE sent_at IS NULL;

-- What the running service announces: its channels and kinds, written from its settings at start (one row), so
-- that enqueue, called wherever occurrences are inserted, needs no settings of its own.
CREATE TABLE notify_config (
    singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    channels   text[] NOT NULL DEFAULT '{}',
    kinds      text[] NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now()
);
