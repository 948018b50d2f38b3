"""SQL of users, sessions and personal API tokens."""

from __future__ import annotations

USER_COLUMNS = (
    "u.id, u.username, u.full_name, u.role, u.contractor_id, u.designated, u.superior_authority, u.active,"
    " u.locked_until, u.last_login_at, u.created_at"
)

INSERT_USER = f"""
INSERT INTO users AS u (username, full_name, password_hash, role, contractor_id, designated, superior_authority)
VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING {USER_COLUMNS}"""

USER_FOR_LOGIN = """
SELECT id, username, password_hash, role, contractor_id, active FROM users WHERE username = $1"""

USER_BY_ID = f"SELECT {USER_COLUMNS} FROM users u WHERE u.id = $1"

USER_BY_USERNAME = f"SELECT {USER_COLUMNS} FROM users u WHERE u.username = $1"

OTHER_ACTIVE_ADMINS = "SELECT count(*) FROM users WHERE role = 'admin' AND active AND id <> $1"

LIST_USERS = f"""
SELECT {USER_COLUMNS}, count(*) OVER () AS total FROM users u ORDER BY u.username LIMIT $1 OFFSET $2"""

# Only the columns named in $2 change (a NULL array entry means "keep").
UPDATE_USER = f"""
UPDATE users AS u SET
    full_name     = CASE WHEN 'full_name' = ANY($2) THEN $3 ELSE u.full_name END,
    role          = CASE WHEN 'role' = ANY($2) THEN $4 ELSE u.role END,
    contractor_id = CASE WHEN 'role' = ANY($2) OR 'contractor_id' = ANY($2) THEN $5 ELSE u.contractor_id END,
    active        = CASE WHEN 'active' = ANY($2) THEN $6 ELSE u.active END,
    password_hash = CASE WHEN 'password' = ANY($2) THEN $7 ELSE u.password_hash END,
    failed_logins = CASE WHEN 'password' = ANY($2) OR 'active' = ANY($2) THEN 0 ELSE u.failed_logins END,
    locked_until  = CASE WHEN 'password' = ANY($2) OR 'active' = ANY($2) THEN NULL ELSE u.locked_until END,
    designated    = CASE WHEN 'designated' = ANY($2) THEN $8 ELSE u.designated END,
    superior_authority = CASE WHEN 'superior_authority' = ANY($2) THEN $9 ELSE u.superior_authority END
WHERE u.id = $1 RETURNING {USER_COLUMNS}"""

# What auth/limits.py decides from, in one pass over the audit log's last minutes (every process
# writes it; there is no index but time, so one scan, no materialized intermediate): $1 is the
# attempted username (NULL: it could not be one), $2 the client's address; the last $3 seconds
# count for the address, the last $4 for the account from that address.
#  - attempts: logins tried from the address, oldest first;
#  - failures: the account's wrong or refused logins from the address, newest first;
#  - last_login: the account's last login from the address; unlocked: the last time an admin lifted
#    its lockouts (`telemetria user unlock`, or a new password or active flag set for the user).
LOGIN_LIMITS = """
WITH account AS (SELECT 'user:' || id AS target FROM users WHERE username = $1)
SELECT
    coalesce(array_agg(at ORDER BY at) FILTER (
        WHERE at > now() - make_interval(secs => $3::float8) AND action IN ('auth.login', 'auth.login_failed')
          AND ip IS NOT DISTINCT FROM $2::inet), '{}') AS attempts,
    coalesce(array_agg(at ORDER BY at DESC) FILTER (
        WHERE action = 'auth.login_failed' AND username = $1 AND ip IS NOT DISTINCT FROM $2::inet
          AND detail ->> 'reason' <> 'locked'), '{}') AS failures,
    max(at) FILTER (WHERE action = 'auth.login' AND username = $1 AND ip IS NOT DISTINCT FROM $2::inet) AS last_login,
    max(at) FILTER (
        WHERE target = (SELECT target FROM account)
          AND (action = 'auth.unlock' OR detail -> 'fields' ?| array['password', 'active'])) AS unlocked,
    now() AS now
FROM audit_log
WHERE at > now() - make_interval(secs => greatest($3::float8, $4::float8))
  AND action IN ('auth.login', 'auth.login_failed', 'auth.unlock', 'user.update')
  AND (ip IS NOT DISTINCT FROM $2::inet OR username = $1 OR target = (SELECT target FROM account))"""

LOGIN_SUCCEEDED = """
UPDATE users SET failed_logins = 0, locked_until = NULL, last_login_at = now(),
    password_hash = coalesce($2, password_hash)
WHERE id = $1"""

INSERT_SESSION = "INSERT INTO sessions (id_hash, user_id, csrf_token, ip) VALUES ($1, $2, $3, $4)"

# A session lives while used at least every `idle` seconds and for at most `max_age` seconds;
# looking it up is using it.
TOUCH_SESSION = """
UPDATE sessions s SET last_seen_at = now()
FROM users u
WHERE s.id_hash = $1 AND u.id = s.user_id AND u.active
  AND s.last_seen_at > now() - make_interval(secs => $2)
  AND s.created_at > now() - make_interval(secs => $3)
RETURNING u.id, u.username, u.role, u.contractor_id, s.csrf_token"""

DELETE_SESSION = "DELETE FROM sessions WHERE id_hash = $1"

DELETE_USER_SESSIONS = "DELETE FROM sessions WHERE user_id = $1"

DELETE_EXPIRED_SESSIONS = """
DELETE FROM sessions
WHERE last_seen_at < now() - make_interval(secs => $1) OR created_at < now() - make_interval(secs => $2)"""

# $4 is the expiry; NULL only when the creator asked for a token that never expires.
INSERT_TOKEN = """
INSERT INTO api_tokens (user_id, name, token_hash, expires_at) VALUES ($1, $2, $3, $4)
RETURNING id, name, created_at, expires_at"""

# The token's user and whether it has expired; only a token still in force counts as used.
TOKEN_PRINCIPAL = """
WITH found AS (
    SELECT t.id, t.expires_at, t.expires_at <= now() AS expired,
           u.id AS user_id, u.username, u.role, u.contractor_id
    FROM api_tokens t JOIN users u ON u.id = t.user_id
    WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND u.active
), used AS (
    UPDATE api_tokens t SET last_used_at = now() FROM found f WHERE t.id = f.id AND f.expired IS NOT TRUE
)
SELECT * FROM found"""

LIST_TOKENS = """
SELECT id, name, created_at, expires_at, coalesce(expires_at <= now(), false) AS expired, last_used_at, revoked_at,
       count(*) OVER () AS total
FROM api_tokens WHERE user_id = $1 ORDER BY id LIMIT $2 OFFSET $3"""

# A user revokes their own tokens; an admin may revoke anyone's ($3).
# Whether an active user carries the "designated servidor" flag (decides occurrences besides the admins).
USER_DESIGNATED = "SELECT coalesce((SELECT designated FROM users WHERE id = $1 AND active), false)"
# Whether an active user is flagged as the superior authority (judges appeals besides the admins, Lei 14.133 Art. 166).
USER_SUPERIOR = "SELECT coalesce((SELECT superior_authority FROM users WHERE id = $1 AND active), false)"

REVOKE_TOKEN = """
UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
WHERE id = $1 AND (user_id = $2 OR $3) RETURNING id, user_id, revoked_at"""
