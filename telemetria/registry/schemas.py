"""What registry writes accept: pydantic models that validate at the edge and name the bad field."""

from __future__ import annotations

import re
from datetime import date, datetime, time
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from telemetria.ids import Id
from telemetria.localtime import LocalDateTime
from telemetria.registry import documents
from telemetria.registry.fleet import normalize_plate

VehicleKind = Literal["onibus", "micro-onibus", "van", "automovel", "outro"]


def _plate(v: str) -> str:
    return normalize_plate(v)  # RegistryError is a ValueError: pydantic reports it on the field


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _printable(v: str) -> str:
    """Text without control characters (PostgreSQL refuses NUL; the rest is never meant)."""
    if _CONTROL.search(v):
        raise ValueError("contains control characters")
    return v.strip()


def _opt_text(v: str | None) -> str | None:
    return _printable(v) or None if v is not None else None


Plate = Annotated[str, AfterValidator(_plate)]
Cnpj = Annotated[str, AfterValidator(documents.normalize_cnpj)]
Cpf = Annotated[str, AfterValidator(documents.normalize_cpf)]
CnhCategory = Annotated[str, AfterValidator(documents.normalize_cnh_category)]
Name = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_printable)]
OptText = Annotated[str | None, Field(max_length=500), AfterValidator(_opt_text)]
SpeedLimit = Annotated[float, Field(gt=0, le=150, description="km/h")]
# The day an edit applies from (the registry remembers: days before keep the version then in force).
EffectiveFrom = Annotated[
    date | None,
    Field(default=None, description="first day the change applies (local date; default: today); not before the "
          "newest version's first day"),
]  # fmt: skip


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ContractorIn(Strict):
    name: Name
    cnpj: Cnpj
    contract_number: OptText = None
    active: bool = True


class ContractorPatch(Strict):
    name: Name | None = None
    cnpj: Cnpj | None = None
    contract_number: OptText = None
    active: bool | None = None


class VehicleIn(Strict):
    plate: Plate
    prefix: OptText = None
    description: OptText = None
    contractor_id: Id | None = None
    capacity: int | None = Field(default=None, ge=1, le=200, description="lotação: seated passengers")
    manufacture_year: int | None = Field(default=None, ge=1950, le=2100)
    kind: VehicleKind | None = None
    speed_limit_kmh: SpeedLimit | None = None
    active: bool = True
    effective_from: EffectiveFrom = None


class VehiclePatch(Strict):
    plate: Plate | None = None
    prefix: OptText = None
    description: OptText = None
    contractor_id: Id | None = None
    capacity: int | None = Field(default=None, ge=1, le=200)
    manufacture_year: int | None = Field(default=None, ge=1950, le=2100)
    kind: VehicleKind | None = None
    speed_limit_kmh: SpeedLimit | None = None
    active: bool | None = None
    effective_from: EffectiveFrom = None  # only with speed_limit_kmh, the one field of a vehicle that is versioned


class TrackerIn(Strict):
    unique_id: Annotated[str, Field(min_length=1, max_length=64), AfterValidator(_printable)]
    vehicle_id: Id
    since: LocalDateTime | None = Field(default=None, description="installed from (default: no lower bound)")


class TrackerMove(Strict):
    vehicle_id: Id
    at: LocalDateTime | None = Field(default=None, description="from when (default: now)")


class TrackerPatch(Strict):
    active: bool


class DriverIn(Strict):
    name: Name
    cpf: Cpf
    cnh_category: CnhCategory
    card_id: OptText = None
    contractor_id: Id | None = None
    active: bool = True


class DriverPatch(Strict):
    name: Name | None = None
    cpf: Cpf | None = None
    cnh_category: CnhCategory | None = None
    card_id: OptText = None
    contractor_id: Id | None = None
    active: bool | None = None


class DriverAssignmentIn(Strict):
    driver_id: Id
    vehicle_id: Id
    valid_from: LocalDateTime | None = None
    valid_to: LocalDateTime | None = None


NOT_NULL = {
    "name",
    "cnpj",
    "plate",
    "cpf",
    "cnh_category",
    "active",
    "code",
    "speed_limit_kmh",
    "limit_kmh",
    "deviation_tolerance_m",
}


def changes(patch: BaseModel) -> dict[str, object]:
    """The fields a PATCH really sent; a required column sent as null is an error naming it."""
    sent = patch.model_dump(include=patch.model_fields_set)
    for k, v in sent.items():
        if v is None and k in NOT_NULL:
            raise ValueError(f"{k}: may not be null")
    return sent


def window_ok(valid_from: datetime | None, valid_to: datetime | None) -> None:
    if valid_from and valid_to and valid_to <= valid_from:
        raise ValueError("valid_to: must be after valid_from")


# --- routes, assignments, zones ---------------------------------------------------------------

StopKind = Literal["boarding", "school", "garage"]
Shift = Literal["matutino", "vespertino", "noturno", "integral"]


class RouteStopIn(Strict):
    name: Name
    lat: float = Field(ge=-90, le=90)
    lon: float = Field(ge=-180, le=180)
    kind: StopKind = "boarding"
    scheduled_time: time | None = Field(default=None, description="local time, e.g. 06:45")


class RouteFields(Strict):
    code: Name
    name: Name
    school_year: int = Field(default_factory=lambda: date.today().year, ge=2000, le=2100)
    shift: Shift | None = None
    declared_km: float | None = Field(default=None, gt=0, le=2000, description="km in the contract")
    contract_id: Id | None = Field(default=None, description="the contract the route is paid by")
    speed_limit_kmh: SpeedLimit = 60.0
    deviation_tolerance_m: float = Field(default=100.0, ge=10, le=5000)
    effective_from: EffectiveFrom = None


class RouteIn(RouteFields):
    geometry: dict[str, Any] = Field(description="GeoJSON LineString (or Feature of one), WGS84 lon/lat")
    stops: list[RouteStopIn] = Field(default_factory=list, max_length=500)


class RoutePatch(Strict):
    code: Name | None = None
    name: Name | None = None
    shift: Shift | None = None
    declared_km: float | None = Field(default=None, gt=0, le=2000)
    contract_id: Id | None = None
    speed_limit_kmh: SpeedLimit | None = None
    deviation_tolerance_m: float | None = Field(default=None, ge=10, le=5000)
    active: bool | None = None
    effective_from: EffectiveFrom = None


class StopsIn(Strict):
    stops: list[RouteStopIn] = Field(max_length=500)
    effective_from: EffectiveFrom = None


class RouteAssignmentIn(Strict):
    route_id: Id
    vehicle_id: Id
    valid_from: date
    valid_to: date | None = None
    weekdays: list[Annotated[int, Field(ge=1, le=7)]] = Field(
        default=[1, 2, 3, 4, 5], min_length=1, max_length=7, description="ISO weekdays, 1 = Monday"
    )
    effective_from: EffectiveFrom = None


class SpeedZoneIn(Strict):
    name: Name
    limit_kmh: SpeedLimit
    geometry: dict[str, Any] = Field(description="GeoJSON Polygon or MultiPolygon, WGS84 lon/lat")
    effective_from: EffectiveFrom = None


class SpeedZonePatch(Strict):
    name: Name | None = None
    limit_kmh: SpeedLimit | None = None
    active: bool | None = None
    effective_from: EffectiveFrom = None
