-- Personal API tokens expire (issue 13): a new token lives a year unless its creator chooses
-- another end, or none (NULL) explicitly. Tokens made before this had no end: they get a year from
-- their creation, but at least 30 days from now, so no script stops without notice at the upgrade.
ALTER TABLE api_tokens ADD COLUMN expires_at timestamptz;

UPDATE api_tokens SET expires_at = greatest(created_at + interval '1 year', now() + interval '30 days');
