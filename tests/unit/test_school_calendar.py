"""Easter, the national holidays and the school days of a school year, with known answers; no database."""

from __future__ import annotations

import re
from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from telemetria.contracts.calendar import CalendarError, MarkedDay, SchoolYear, check, days_off, school_days
from telemetria.contracts.holidays import FERIADO, PONTO_FACULTATIVO, easter, national_holidays

# Published Easter Sundays (Western churches), including the extremes (22 March, 25 April) and the years
# where simpler algorithms go wrong (1954, 1981, 2049, 2076: Gauss's exceptions).
KNOWN_EASTERS = {
    1583: (4, 10), 1600: (4, 2), 1700: (4, 11), 1761: (3, 22), 1800: (4, 13), 1818: (3, 22), 1886: (4, 25),
    1900: (4, 15), 1943: (4, 25), 1954: (4, 18), 1961: (4, 2), 1962: (4, 22), 1970: (3, 29), 1981: (4, 19),
    1985: (4, 7), 1990: (4, 15), 1999: (4, 4), 2000: (4, 23), 2001: (4, 15), 2002: (3, 31), 2003: (4, 20),
    2004: (4, 11), 2005: (3, 27), 2006: (4, 16), 2007: (4, 8), 2008: (3, 23), 2009: (4, 12), 2010: (4, 4),
    2011: (4, 24), 2012: (4, 8), 2013: (3, 31), 2014: (4, 20), 2015: (4, 5), 2016: (3, 27), 2017: (4, 16),
    2018: (4, 1), 2019: (4, 21), 2020: (4, 12), 2021: (4, 4), 2022: (4, 17), 2023: (4, 9), 2024: (3, 31),
    2025: (4, 20), 2026: (4, 5), 2027: (3, 28), 2028: (4, 16), 2029: (4, 1), 2030: (4, 21), 2031: (4, 13),
    2032: (3, 28), 2033: (4, 17), 2034: (4, 9), 2035: (3, 25), 2038: (4, 25), 2049: (4, 18), 2076: (4, 19),
    2100: (3, 28), 2285: (3, 22),
}  # fmt: skip


@pytest.mark.parametrize(("year", "month_day"), KNOWN_EASTERS.items())
def test_easter_matches_the_published_dates(year: int, month_day: tuple[int, int]) -> None:
    assert easter(year) == date(year, *month_day)


def _oudin(y: int) -> date:
    """Oudin's algorithm (1940), as in Tøndering's calendar FAQ: written independently of the one under test."""
    g, c = y % 19, y // 100
    h = (c - c // 4 - (8 * c + 13) // 25 + 19 * g + 15) % 30
    i = h - (h // 28) * (1 - (29 // (h + 1)) * ((21 - g) // 11))
    ell = i - (y + y // 4 + i + 2 - c + c // 4) % 7
    month = 3 + (ell + 40) // 44
    return date(y, month, ell + 28 - 31 * (month // 4))


def test_easter_agrees_with_an_independent_algorithm_over_the_whole_cycle() -> None:
    assert [easter(y) for y in range(1583, 4100)] == [_oudin(y) for y in range(1583, 4100)]


@given(st.integers(1583, 9999))
def test_easter_is_a_sunday_from_22_march_to_25_april(year: int) -> None:
    e = easter(year)
    assert e.isoweekday() == 7 and date(year, 3, 22) <= e <= date(year, 4, 25)


def test_easter_before_the_gregorian_calendar_is_refused() -> None:
    with pytest.raises(ValueError, match="Gregorian"):
        easter(1582)


def test_the_2026_holidays_with_their_kinds() -> None:
    got = {(h.day.isoformat(), h.kind) for h in national_holidays(2026)}
    assert got == {
        ("2026-01-01", FERIADO), ("2026-02-16", PONTO_FACULTATIVO), ("2026-02-17", PONTO_FACULTATIVO),
        ("2026-04-03", FERIADO), ("2026-04-21", FERIADO), ("2026-05-01", FERIADO),
        ("2026-06-04", PONTO_FACULTATIVO), ("2026-09-07", FERIADO), ("2026-10-12", FERIADO),
        ("2026-11-02", FERIADO), ("2026-11-15", FERIADO), ("2026-11-20", FERIADO), ("2026-12-25", FERIADO),
    }  # fmt: skip


def test_consciencia_negra_is_national_from_2024_on() -> None:
    assert date(2023, 11, 20) not in {h.day for h in national_holidays(2023)}
    assert date(2024, 11, 20) in {h.day for h in national_holidays(2024)}


@pytest.mark.parametrize("year", [2000, 2079])
def test_good_friday_on_tiradentes_is_one_feriado_with_both_names(year: int) -> None:
    same = [h for h in national_holidays(year) if h.day == date(year, 4, 21)]
    assert len(same) == 1 and same[0].kind == FERIADO
    assert "Tiradentes" in same[0].name and "Sexta-feira Santa" in same[0].name


@given(st.integers(1583, 2500))
def test_easter_based_days_keep_their_distance_and_weekday(year: int) -> None:
    by_name = {h.name: h.day for h in national_holidays(year)}
    e = easter(year)
    carnival = [d for n, d in by_name.items() if n.startswith("Carnaval")]
    assert sorted(carnival) == [e - timedelta(days=48), e - timedelta(days=47)]
    assert [d.isoweekday() for d in sorted(carnival)] == [1, 2]
    assert by_name["Corpus Christi"] == e + timedelta(days=60) and by_name["Corpus Christi"].isoweekday() == 4


# --- school days --------------------------------------------------------------------------------

Y2026 = SchoolYear(2026, date(2026, 2, 2), date(2026, 12, 18))


def _weekdays(start: date, end: date) -> int:
    return sum(1 for n in range((end - start).days + 1) if (start + timedelta(n)).isoweekday() <= 5)


def test_school_days_of_2026_without_marks() -> None:
    days = school_days(Y2026)
    # Weekday holidays and pontos facultativos inside 2 Feb-18 Dec 2026: Carnaval 16-17 Feb, Good Friday 3 Apr,
    # Tiradentes 21 Apr (Tue), 1 May (Fri), Corpus Christi 4 Jun, 7 Sep (Mon), 12 Oct (Mon), 2 Nov (Mon),
    # 20 Nov (Fri); 15 Nov is a Sunday.
    assert len(days) == _weekdays(Y2026.start, Y2026.end) - 10
    assert days[0] == date(2026, 2, 2) and days[-1] == date(2026, 12, 18)
    assert all(d.isoweekday() <= 5 for d in days)
    for off in ("2026-02-16", "2026-02-17", "2026-04-03", "2026-04-21", "2026-06-04", "2026-11-20"):
        assert date.fromisoformat(off) not in days


def test_marks_remove_and_add_school_days() -> None:
    sy = SchoolYear(
        2026, Y2026.start, Y2026.end,
        (MarkedDay(date(2026, 3, 10), "chuva fechou as estradas"),),
        (MarkedDay(date(2026, 3, 14), "reposição da chuva de 10/03"), MarkedDay(date(2026, 2, 17), None)),
    )  # fmt: skip
    check(sy)
    days = school_days(sy)
    assert len(days) == len(school_days(Y2026)) - 1 + 2
    assert date(2026, 3, 10) not in days and date(2026, 3, 14) in days and date(2026, 2, 17) in days
    off = {d["date"]: (d["kind"], d["reason"]) for d in days_off(sy)}
    assert off["2026-03-10"] == ("sem_aula", "chuva fechou as estradas")
    assert off["2026-02-16"] == (PONTO_FACULTATIVO, "Carnaval (segunda-feira)")
    assert "2026-02-17" not in off and "2026-03-14" not in off


def _bad(field: str, words: str, **change: object) -> tuple[str, str, dict[str, object]]:
    return field, words, change


NS = MarkedDay(date(2026, 3, 10), "chuva")


@pytest.mark.parametrize(
    ("field", "words", "change"),
    [
        _bad("end", "before start", start=date(2026, 12, 18), end=date(2026, 2, 2)),
        _bad("start", "not in 2026", start=date(2025, 12, 1)),
        _bad("end", "not in 2026", end=date(2027, 1, 29)),
        _bad("year", "2000", year=1999, start=date(1999, 2, 1), end=date(1999, 12, 1)),
        _bad("no_school_days[0].date", "outside the school year", no_school_days=(MarkedDay(date(2026, 1, 20), "r"),)),
        _bad("no_school_days[0].reason", "say why", no_school_days=(MarkedDay(date(2026, 3, 10), "  "),)),
        _bad("no_school_days[0].reason", "say why", no_school_days=(MarkedDay(date(2026, 3, 10), None),)),
        _bad("no_school_days[1].date", "already listed", no_school_days=(NS, NS)),
        _bad("no_school_days[0].date", "a Saturday", no_school_days=(MarkedDay(date(2026, 3, 14), "r"),)),
        _bad("no_school_days[0].date", "Tiradentes", no_school_days=(MarkedDay(date(2026, 4, 21), "r"),)),
        _bad("extra_school_days[0].date", "already a school", extra_school_days=(MarkedDay(date(2026, 3, 9), None),)),
        _bad("extra_school_days[0].date", "outside", extra_school_days=(MarkedDay(date(2026, 12, 19), None),)),
        _bad("extra_school_days[0].date", "already listed in no_school_days[0]", no_school_days=(NS,),
             extra_school_days=(MarkedDay(NS.day, None),)),
    ],
)  # fmt: skip
def test_a_bad_school_year_names_its_field(field: str, words: str, change: dict[str, object]) -> None:
    values: dict[str, object] = {"year": 2026, "start": Y2026.start, "end": Y2026.end} | change
    with pytest.raises(CalendarError, match=re.escape(words)) as e:
        check(SchoolYear(**values))  # type: ignore[arg-type]
    assert e.value.field == field and str(e.value).startswith(field)


@given(st.integers(2000, 2100), st.integers(0, 364), st.integers(0, 364))
def test_school_days_are_weekdays_or_marked_extras_within_the_year(year: int, a: int, b: int) -> None:
    start, end = sorted((date(year, 1, 1) + timedelta(a), date(year, 1, 1) + timedelta(b)))
    end = min(end, date(year, 12, 31))
    sy = SchoolYear(year, start, end)
    check(sy)
    holidays = {h.day for h in national_holidays(year)}
    days = school_days(sy)
    assert all(start <= d <= end and d.isoweekday() <= 5 and d not in holidays for d in days)
    assert len(days) + len(days_off(sy)) == _weekdays(start, end)
