-- Fiscalização's administrative process (issue 18): the "designated servidor" flag. A designated user decides
-- occurrences (Art. 42) besides the admins; only servidores (admin, monitor) may carry it.
ALTER TABLE users ADD COLUMN designated boolean NOT NULL DEFAULT false;
ALTER TABLE users ADD CONSTRAINT users_designated_servidor CHECK (NOT designated OR role IN ('admin', 'monitor'));

-- The list's filters: by status within a period, by kind.
CREATE INDEX occurrences_kind_start ON occurrences (kind, start_ts);
