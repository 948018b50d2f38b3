"""What the calendar and contract writes accept: pydantic models that validate at the edge and name the bad field."""

from __future__ import annotations

from datetime import date, time
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import Field, model_validator

from telemetria.ids import Id
from telemetria.registry.schemas import Name, OptText, Strict

# R$ with centavos: positive, at most 2 decimals; never float.
Money = Annotated[Decimal, Field(gt=0, max_digits=12, decimal_places=2, description="R$, at most 2 decimals")]
Pct = Annotated[Decimal, Field(ge=0, le=100, max_digits=5, decimal_places=2, description="percent, 0 to 100")]
Reason = Annotated[str, Field(min_length=1, max_length=500)]
PartialPay = Literal["proportional", "declared_km", "none"]
MAX_MARKS = 366


class NoSchoolDayIn(Strict):
    day: date = Field(alias="date")
    reason: Annotated[Name, Field(max_length=500, description="why there is no school (required)")]
    shifts: list[Literal["manha", "tarde", "noite"]] | None = Field(
        default=None, max_length=3, description="the shifts without school (manha, tarde, noite); none: the whole day"
    )


class ScheduleChangeIn(Strict):
    day: date = Field(alias="date")
    shift: Literal["manha", "tarde", "noite"]
    runs_due_from: time = Field(description="local time the shift's runs were due from that day, e.g. 09:30")
    reason: Annotated[Name, Field(max_length=500, description="why, e.g. saída antecipada (required)")]
    kind: Literal["saida_antecipada", "entrada_atrasada"] = Field(
        default="saida_antecipada",
        description="saida_antecipada (early dismissal: the runs due after runs_due_from are due from it) or "
        "entrada_atrasada (late start: the runs due before runs_due_from are due from it)",
    )


class ExtraSchoolDayIn(Strict):
    day: date = Field(alias="date")
    reason: OptText = None


class SchoolYearIn(Strict):
    start: date = Field(description="first school day, e.g. 2026-02-02")
    end: date = Field(description="last school day, e.g. 2026-12-18")
    no_school_days: list[NoSchoolDayIn] = Field(default_factory=list, max_length=MAX_MARKS)
    extra_school_days: list[ExtraSchoolDayIn] = Field(default_factory=list, max_length=MAX_MARKS)
    schedule_changes: list[ScheduleChangeIn] = Field(default_factory=list, max_length=MAX_MARKS)


class MunicipalHolidayIn(Strict):
    day: date = Field(alias="date")
    name: Annotated[Name, Field(max_length=200, description="e.g. Aniversário do Município")]


class MunicipalHolidaysIn(Strict):
    holidays: list[MunicipalHolidayIn] = Field(default_factory=list, max_length=60)


class PaymentRuleIn(Strict):
    made_min_coverage_pct: Pct = Decimal("95")
    partial_min_coverage_pct: Pct = Decimal("50")
    partial_pay: PartialPay = "proportional"
    off_route_km_paid: bool = False
    justified_paid: bool = False

    @model_validator(mode="after")
    def _ordered(self) -> PaymentRuleIn:
        if self.partial_min_coverage_pct > self.made_min_coverage_pct:
            raise ValueError("partial_min_coverage_pct: must not exceed made_min_coverage_pct")
        return self


class PaymentRulePatch(Strict):
    made_min_coverage_pct: Pct | None = None
    partial_min_coverage_pct: Pct | None = None
    partial_pay: PartialPay | None = None
    off_route_km_paid: bool | None = None
    justified_paid: bool | None = None


ContractNumber = Annotated[Name, Field(max_length=100, description="the contract's number, e.g. 012/2026")]


class ContractIn(Strict):
    contractor_id: Id
    number: ContractNumber
    lot: OptText = None
    valid_from: date
    valid_to: date
    price_per_km: Money
    price_per_km_unpaved: Money | None = Field(default=None, description="R$ per unpaved km, when it differs")
    payment_rule: PaymentRuleIn = Field(default_factory=PaymentRuleIn)


class ContractPatch(Strict):
    number: ContractNumber | None = None
    lot: OptText = None
    valid_from: date | None = None
    valid_to: date | None = None
    price_per_km: Money | None = None
    price_per_km_unpaved: Money | None = None
    payment_rule: PaymentRulePatch | None = None
    effective_from: date | None = Field(
        default=None, description="first day the new prices or rule apply (default: today, America/Porto_Velho)"
    )
