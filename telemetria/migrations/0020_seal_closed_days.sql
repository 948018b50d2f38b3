-- Days closed before the seals existed (issue 19) have their rollups and no seal: sealing happens when the
-- refresher recomputes a vehicle-day, and nothing would mark those days again. Sweep every closed day once more
-- (what `telemetria rollup refresh --all` does after a restore): the refresher then recomputes and seals them in
-- the background, oldest day first, 200 vehicle-days a round. A new installation has swept nothing yet: no change.
UPDATE rollup_horizon SET swept_through = NULL;
