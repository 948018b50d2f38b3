-- Who had a vehicle on each day (issue 33). A vehicle that moves from contractor B to A is A's from the day of
-- the move only: A reads its track, trips and seals of its own days, never B's, and a driver's card on a fix
-- is looked up among the drivers of the contractor that had the vehicle on the fix's local day.
--
-- vehicle_contractors keeps each vehicle's contractor from a local day (America/Porto_Velho) on; the earliest
-- row's day is -infinity (as the registry's earliest version, 0011): fixes stored before a vehicle was
-- registered, or before it was first given a contractor, are its first contractor's. Rows are written by a trigger on vehicles, so every write path (the
-- API, the CLI, the demo, hand-written SQL) records the move; the day is the transaction's
-- telemetria.effective_from when set (a registry edit's date), else today.
CREATE TABLE vehicle_contractors (
    vehicle_id    integer NOT NULL REFERENCES vehicles (id) ON DELETE CASCADE,
    valid_from    date NOT NULL,
    contractor_id integer REFERENCES contractors (id),
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (vehicle_id, valid_from)
);

INSERT INTO vehicle_contractors (vehicle_id, valid_from, contractor_id)
SELECT id, '-infinity', contractor_id FROM vehicles;

CREATE FUNCTION vehicle_contractor_moved() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    eff date := coalesce(nullif(current_setting('telemetria.effective_from', true), '')::date,
                         (now() AT TIME ZONE 'America/Porto_Velho')::date);
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.contractor_id IS NOT DISTINCT FROM OLD.contractor_id THEN
        RETURN NULL;
    END IF;
    -- A vehicle's first contractor (on registration, or given later to a vehicle that never had one) completes
    -- its registration: it had the vehicle from the start. Only a move from one contractor to another is dated.
    IF TG_OP = 'INSERT' OR NOT EXISTS (SELECT 1 FROM vehicle_contractors c
                                       WHERE c.vehicle_id = NEW.id AND c.contractor_id IS NOT NULL) THEN
        eff := '-infinity';
    END IF;
    INSERT INTO vehicle_contractors (vehicle_id, valid_from, contractor_id)
    VALUES (NEW.id, eff, NEW.contractor_id)
    ON CONFLICT (vehicle_id, valid_from) DO UPDATE SET contractor_id = EXCLUDED.contractor_id, created_at = now();
    RETURN NULL;
END $$;

CREATE TRIGGER vehicle_contractor_moved AFTER INSERT OR UPDATE OF contractor_id ON vehicles
    FOR EACH ROW EXECUTE FUNCTION vehicle_contractor_moved();

-- The contractor that had `vehicle` on local day `day` (NULL: none).
CREATE FUNCTION vehicle_contractor_on(vehicle integer, day date) RETURNS integer
LANGUAGE sql STABLE AS $$
    SELECT c.contractor_id FROM vehicle_contractors c
    WHERE c.vehicle_id = vehicle AND c.valid_from <= day
    ORDER BY c.valid_from DESC LIMIT 1
$$;

-- Whether `scope` (a contractor; NULL: every contractor) may read `vehicle`'s data of local day `day`.
CREATE FUNCTION vehicle_in_scope(scope integer, vehicle integer, day date) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT scope IS NULL OR vehicle_contractor_on(vehicle, day) IS NOT DISTINCT FROM scope
$$;

-- A fix's driver (replaces 0004's): the card it carries when that card is registered to a driver of the
-- contractor that had the vehicle on the fix's local day; else, as for a card nobody registered, the driver
-- assigned to the vehicle at the fix's time. Another company's card resolves to nothing of that company's, so
-- the service tells no name for a card that is not the vehicle's contractor's.
CREATE OR REPLACE FUNCTION fix_driver(vehicle integer, at timestamptz, card text) RETURNS integer
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT d.id FROM drivers d
         WHERE card IS NOT NULL AND d.card_id = card
           AND d.contractor_id = vehicle_contractor_on(vehicle, (at AT TIME ZONE 'America/Porto_Velho')::date)),
        (SELECT a.driver_id FROM driver_assignments a WHERE a.vehicle_id = vehicle AND a.during @> at))
$$;

-- Each vehicle's contractors with the local days each had it: `during` is [valid_from, next valid_from), its
-- lower bound NULL (from the beginning) for the first row.
CREATE VIEW vehicle_contractor_spans AS
SELECT c.vehicle_id, c.contractor_id,
       daterange(CASE WHEN c.valid_from = '-infinity' THEN NULL ELSE c.valid_from END,
                 lead(c.valid_from) OVER (PARTITION BY c.vehicle_id ORDER BY c.valid_from), '[)') AS during
FROM vehicle_contractors c;
