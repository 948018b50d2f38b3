"""SQL of the SETE import: its links, and our rows' current values to compare (writes go through the registry)."""

from __future__ import annotations

LINKS = "SELECT kind, sete_id, local_id, imported FROM sete_links WHERE ibge = $1"

UPSERT_LINK = """
INSERT INTO sete_links (ibge, kind, sete_id, local_id, imported) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (ibge, kind, sete_id) DO UPDATE SET local_id = EXCLUDED.local_id, imported = EXCLUDED.imported,
                                                imported_at = now()"""

VEHICLE = "SELECT plate, capacity, kind FROM vehicles WHERE id = $1"
VEHICLE_BY_PLATE = "SELECT id FROM vehicles WHERE plate = $1"
DRIVER = "SELECT name, cnh_category FROM drivers WHERE id = $1"
DRIVER_BY_CPF = "SELECT id FROM drivers WHERE cpf = $1"
ROUTE = "SELECT code, name, shift, declared_km, geometry FROM routes WHERE id = $1"
ROUTE_BY_CODE = "SELECT id FROM routes WHERE code = $1 AND school_year = $2"
