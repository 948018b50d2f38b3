"""Brazilian national holidays of any year, fixed and Easter-based, each with its kind and legal basis; pure.

Two kinds, kept apart in the data because they mean different things for a school day:

- `feriado`: a holiday by federal law. Never a school day.
- `ponto_facultativo`: Carnaval (Monday and Tuesday) and Corpus Christi are *not* legal holidays: the federal
  government declares them optional days off each year (Portaria do Ministério da Gestão), and states and
  municipalities decide for themselves. School calendars in Rondônia (the state's SEDUC and the municipal
  networks) normally have no classes on them, and the municipal law this service follows (Lei 3.588/2023,
  Jaru/RO) leaves the school calendar to the Secretaria. So by default they are days *without* school, and the
  Secretaria turns one into a school day by listing it among the year's extra school days.

Ash Wednesday is a ponto facultativo only until 14h; schools hold classes, so it is not listed. State holidays
(in Rondônia: 4 January, creation of the state; 18 June, Dia do Evangélico: `state_holidays`) and municipal ones
(stored by the Secretaria, table municipal_holidays) are not national: for the school calendar the Secretaria marks
them as days without school, with the reason; for business days (the terms of defence and appeal of Lei
14.133/2021, occurrences/process/deadline.py) they are never business days.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

Kind = Literal["feriado", "ponto_facultativo"]
FERIADO: Kind = "feriado"
PONTO_FACULTATIVO: Kind = "ponto_facultativo"

FIRST_YEAR = 1583  # the first full year of the Gregorian calendar, which the Easter computation assumes
CONSCIENCIA_NEGRA_SINCE = 2024  # Lei 14.759/2023 made 20 November a national holiday


@dataclass(frozen=True, slots=True)
class Holiday:
    day: date
    name: str
    kind: Kind
    basis: str  # the law (or practice) that makes it one

    def as_json(self) -> dict[str, str]:
        return {"date": self.day.isoformat(), "name": self.name, "kind": self.kind, "basis": self.basis}


LEI_662 = "Lei 662/1949, redação da Lei 10.607/2002"
FACULTATIVO = "ponto facultativo (não é feriado por lei federal)"

# (month, day, name, basis)
_FIXED = (
    (1, 1, "Confraternização Universal", LEI_662),
    (4, 21, "Tiradentes", LEI_662),
    (5, 1, "Dia do Trabalho", LEI_662),
    (9, 7, "Independência do Brasil", LEI_662),
    (10, 12, "Nossa Senhora Aparecida", "Lei 6.802/1980"),
    (11, 2, "Finados", LEI_662),
    (11, 15, "Proclamação da República", LEI_662),
    (11, 20, "Dia Nacional de Zumbi e da Consciência Negra", "Lei 14.759/2023"),
    (12, 25, "Natal", LEI_662),
)

# (days from Easter Sunday, name, kind, basis)
_MOVABLE = (
    (-48, "Carnaval (segunda-feira)", PONTO_FACULTATIVO, FACULTATIVO),
    (-47, "Carnaval (terça-feira)", PONTO_FACULTATIVO, FACULTATIVO),
    (
        -2,
        "Sexta-feira Santa (Paixão de Cristo)",
        FERIADO,
        "Lei 9.093/1995 (feriado religioso, observado em todo o país)",
    ),
    (60, "Corpus Christi", PONTO_FACULTATIVO, FACULTATIVO),
)


def easter(year: int) -> date:
    """Easter Sunday of a Gregorian year: the Anonymous Gregorian algorithm (Meeus/Jones/Butcher)."""
    if year < FIRST_YEAR:
        raise ValueError(f"year: {year} is before the Gregorian calendar ({FIRST_YEAR})")
    a = year % 19
    b, c = divmod(year, 100)
    d, e = divmod(b, 4)
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    ell = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * ell) // 451
    month, day = divmod(h + ell - 7 * m + 114, 31)
    return date(year, month, day + 1)


def national_holidays(year: int) -> list[Holiday]:
    """The year's national holidays and pontos facultativos, by date; one entry per date.

    When two fall on the same date (Good Friday on 21 April, as in 2000 and 2079), the entry is one
    `feriado` whose name joins both.
    """
    found: list[Holiday] = [
        Holiday(date(year, m, d), name, FERIADO, basis)
        for m, d, name, basis in _FIXED
        if (m, d) != (11, 20) or year >= CONSCIENCIA_NEGRA_SINCE
    ]
    sunday = easter(year)
    found += [Holiday(sunday + timedelta(days=n), name, kind, basis) for n, name, kind, basis in _MOVABLE]
    by_day: dict[date, Holiday] = {}
    for h in sorted(found, key=lambda h: (h.day, h.kind != FERIADO)):
        other = by_day.get(h.day)
        by_day[h.day] = h if other is None else Holiday(h.day, f"{other.name} / {h.name}", other.kind, other.basis)
    return [by_day[d] for d in sorted(by_day)]


ESTADUAL = "feriado estadual de Rondônia"

# (month, day, name): Rondônia's state holidays, observed by the Prefeitura's offices in every municipality.
_STATE_RO = (
    (1, 4, "Criação do Estado de Rondônia"),
    (6, 18, "Dia do Evangélico"),
)


def state_holidays(year: int) -> list[Holiday]:
    """Rondônia's state holidays of the year (`feriado`, by state law), by date."""
    return [Holiday(date(year, m, d), name, FERIADO, ESTADUAL) for m, d, name in _STATE_RO]
