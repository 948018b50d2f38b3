"""SETE import: the routes, vehicles, drivers and schools a municipality keeps in SETE (FNDE/UFG)."""
