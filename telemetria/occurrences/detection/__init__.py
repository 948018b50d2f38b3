"""Detection (pure rules and the live detector): occurrence candidates derived from a vehicle's day of
fixes and the day's runs, by fix time, reconciled with what is stored; the detector's SQL and store."""
