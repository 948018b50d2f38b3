"""CPF, CNPJ and CNH category: known numbers, every rejection, and official mask → normalize round trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from telemetria.registry.documents import (
    DocumentError,
    normalize_cnh_category,
    normalize_cnpj,
    normalize_cpf,
)

ALNUM = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def oracle_dv(body: str, weights: list[int]) -> str:
    """Check digit by the textbook shortcut (10·Σ mod 11) mod 10, equivalent to 'r < 2 → 0 else 11 − r'."""
    total = sum((ALNUM.index(c) + (7 if c.isalpha() else 0)) * w for c, w in zip(body, weights, strict=True))
    return str(10 * total % 11 % 10)


def masked_cpf(d: str) -> str:
    """The official mask, '123.456.789-09', as people type it."""
    return f"{d[:3]}.{d[3:6]}.{d[6:9]}-{d[9:]}"


def masked_cnpj(d: str) -> str:
    """The official mask, '11.222.333/0001-81'."""
    return f"{d[:2]}.{d[2:5]}.{d[5:8]}/{d[8:12]}-{d[12:]}"


def cpf_with_dv(nine: str) -> str:
    d1 = oracle_dv(nine, list(range(10, 1, -1)))
    return nine + d1 + oracle_dv(nine + d1, list(range(11, 1, -1)))


def cnpj_with_dv(twelve: str) -> str:
    w = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    d1 = oracle_dv(twelve, w[1:])
    return twelve + d1 + oracle_dv(twelve + d1, w)


def test_oracle_agrees_with_published_examples() -> None:
    assert cpf_with_dv("529982247") == "52998224725"
    assert cnpj_with_dv("112223330001") == "11222333000181"
    assert cnpj_with_dv("12ABC34501DE") == "12ABC34501DE35"  # the Receita Federal's alphanumeric example


@pytest.mark.parametrize(
    ("text", "digits"),
    [
        ("123.456.789-09", "12345678909"),
        ("12345678909", "12345678909"),
        ("529.982.247-25", "52998224725"),
        (" 111.444.777-35 ", "11144477735"),
        ("000.000.001-91", "00000000191"),  # leading zeros are kept: a CPF is text, not a number
    ],
)
def test_valid_cpf(text: str, digits: str) -> None:
    assert normalize_cpf(text) == digits


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("529.982.247-24", "the value has wrong check digits"),  # neither the CPF nor its right digits repeated
        ("529.982.247-15", "check digits"),
        ("111.111.111-11", "repeats one digit"),
        ("000.000.000-00", "repeats one digit"),
        ("1234567890", "is not a CPF"),
        ("123456789091", "is not a CPF"),
        ("123.456.789/09", "is not a CPF"),
        ("123-456-789.09", "is not a CPF"),
        ("123.456.78a-09", "is not a CPF"),
        ("", "is not a CPF"),
    ],
)
def test_invalid_cpf(text: str, words: str) -> None:
    with pytest.raises(DocumentError) as e:
        normalize_cpf(text)
    assert e.value.field == "cpf" and str(e.value).startswith("cpf: ") and words in str(e.value)


def test_cpf_rejects_non_text() -> None:
    with pytest.raises(DocumentError, match="cpf: expected text"):
        normalize_cpf(12345678909)  # type: ignore[arg-type]


def test_a_cpf_in_the_official_mask() -> None:
    assert normalize_cpf(masked_cpf("52998224725")) == "52998224725"
    assert normalize_cpf("123.456.789-09") == "12345678909"
    with pytest.raises(DocumentError):
        normalize_cpf(masked_cpf("52998224724"))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("11.222.333/0001-81", "11222333000181"),
        ("11222333000181", "11222333000181"),
        ("11.444.777/0001-61", "11444777000161"),
        ("12.ABC.345/01DE-35", "12ABC34501DE35"),
        ("12ABC34501DE35", "12ABC34501DE35"),
    ],
)
def test_valid_cnpj(text: str, value: str) -> None:
    assert normalize_cnpj(text) == value


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("11.222.333/0001-80", "check digits (expected 81)"),
        ("12.ABC.345/01DE-36", "check digits (expected 35)"),
        ("00.000.000/0000-00", "repeats one digit"),
        ("11.111.111/1111-11", "repeats one digit"),
        ("12.abc.345/01de-35", "uppercase"),
        ("12.ABC.345/01DE-3A", "is not a CNPJ"),  # check digits are always numeric
        ("11.222.333/0001-8", "is not a CNPJ"),
        ("11.222.333.0001-81", "is not a CNPJ"),
        ("12.AB$.345/01DE-35", "is not a CNPJ"),
    ],
)
def test_invalid_cnpj(text: str, words: str) -> None:
    with pytest.raises(DocumentError) as e:
        normalize_cnpj(text)
    assert e.value.field == "cnpj" and str(e.value).startswith("cnpj: ") and words in str(e.value)


def test_a_cnpj_in_the_official_mask() -> None:
    assert normalize_cnpj(masked_cnpj("11222333000181")) == "11222333000181"
    assert normalize_cnpj(masked_cnpj("12ABC34501DE35")) == "12ABC34501DE35"


@pytest.mark.parametrize(("text", "category"), [("D", "D"), ("E", "E"), ("ad", "AD"), (" AE ", "AE"), ("e", "E")])
def test_cnh_categories_for_school_transport(text: str, category: str) -> None:
    assert normalize_cnh_category(text) == category


@pytest.mark.parametrize("text", ["A", "B", "C", "AB", "AC", "ACC", "DE", "", "D E", "Ｄ"])
def test_other_cnh_categories_are_refused_citing_the_ctb(text: str) -> None:
    with pytest.raises(DocumentError) as e:
        normalize_cnh_category(text)
    assert e.value.field == "cnh_category" and "CTB Art. 138" in str(e.value) and "cnh_category" in str(e.value)


nine_digits = st.text(alphabet="0123456789", min_size=9, max_size=9).filter(lambda s: len(set(s)) > 1)
twelve_alnum = st.text(alphabet=ALNUM, min_size=12, max_size=12).filter(lambda s: len(set(s)) > 1)


@given(nine_digits)
def test_cpf_format_normalize_round_trip(nine: str) -> None:
    cpf = cpf_with_dv(nine)
    assert normalize_cpf(masked_cpf(cpf)) == cpf
    assert normalize_cpf(cpf) == cpf


@given(twelve_alnum)
def test_cnpj_format_normalize_round_trip(twelve: str) -> None:
    cnpj = cnpj_with_dv(twelve)
    assert normalize_cnpj(masked_cnpj(cnpj)) == cnpj
    assert normalize_cnpj(cnpj) == cnpj


@given(nine_digits, st.integers(1, 9))
def test_cpf_with_a_changed_check_digit_is_refused(nine: str, shift: int) -> None:
    cpf = cpf_with_dv(nine)
    bad = cpf[:-1] + str((int(cpf[-1]) + shift) % 10)
    with pytest.raises(DocumentError, match="check digits"):
        normalize_cpf(bad)


@given(twelve_alnum, st.integers(1, 9))
def test_cnpj_with_a_changed_check_digit_is_refused(twelve: str, shift: int) -> None:
    cnpj = cnpj_with_dv(twelve)
    bad = cnpj[:-2] + str((int(cnpj[-2]) + shift) % 10) + cnpj[-1]
    with pytest.raises(DocumentError, match="check digits"):
        normalize_cnpj(bad)
