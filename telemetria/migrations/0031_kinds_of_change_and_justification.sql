-- Issue 31, the points left: what kind a schedule change is, and what kind a justification is.
--
-- A schedule change (school_schedule_changes) is an early dismissal (saida_antecipada: the shift's runs due
-- after runs_due_from are due from it, as before this migration) or a late start (entrada_atrasada: the shift's
-- runs due before runs_due_from are due from it). measurement/schoolday.py moves the runs.
ALTER TABLE school_schedule_changes ADD COLUMN kind text NOT NULL DEFAULT 'saida_antecipada'
    CHECK (kind IN ('saida_antecipada', 'entrada_atrasada'));

-- A justification (run_justifications) says the run was not made (nao_realizada, as before this migration), or
-- that it was made on its own day outside its window (feito_fora_do_horario), from `made_at` (local time): the
-- run is then judged over that time instead of its window (measurement/boletim.py).
ALTER TABLE run_justifications ADD COLUMN kind text NOT NULL DEFAULT 'nao_realizada'
    CHECK (kind IN ('nao_realizada', 'feito_fora_do_horario'));
ALTER TABLE run_justifications ADD COLUMN made_at time;
ALTER TABLE run_justifications ADD CONSTRAINT run_justifications_made_at
    CHECK ((kind = 'feito_fora_do_horario') = (made_at IS NOT NULL));
