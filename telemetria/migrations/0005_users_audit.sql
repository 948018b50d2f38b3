-- Who may see what: users with roles, browser sessions, personal API tokens, and the audit log.

CREATE TABLE users (
    id            integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    username      text NOT NULL UNIQUE CHECK (username ~ '^[a-z0-9][a-z0-9._@-]{1,63}$'),
    full_name     text,
    password_hash text NOT NULL,
    role          text NOT NULL CHECK (role IN ('admin', 'monitor', 'auditor', 'contractor')),
    contractor_id integer REFERENCES contractors (id),
    active        boolean NOT NULL DEFAULT true,
    failed_logins integer NOT NULL DEFAULT 0,
    locked_until  timestamptz,
    last_login_at timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    -- A contractor user sees one contractor's fleet; the other roles see all of it.
    CHECK ((role = 'contractor') = (contractor_id IS NOT NULL))
);

-- Session ids and API tokens are 256-bit random: only their sha256 is stored.
CREATE TABLE sessions (
    id_hash      bytea PRIMARY KEY,
    user_id      integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    ip           inet
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE api_tokens (
    id           integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id      integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         text NOT NULL DEFAULT '',
    token_hash   bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

-- Append-only: rows are never updated or deleted by the application; retention drops whole
-- chunks older than the retention period (drop_chunks), like the fixes.
CREATE TABLE audit_log (
    at         timestamptz NOT NULL DEFAULT now(),
    id         bigint GENERATED ALWAYS AS IDENTITY,
    user_id    integer,
    username   text,
    role       text,
    action     text NOT NULL,
    target     text,
    detail     jsonb,
    ip         inet
);
SELECT create_hypertable('audit_log', by_range('at', INTERVAL '30 days'));

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
