"""Brazilian documents of the registry: CPF, CNPJ (numeric and alphanumeric) and CNH category (pure)."""

from __future__ import annotations

import re
from collections.abc import Sequence

# Punctuation is optional, but when present it must sit where the official masks put it.
_CPF = re.compile(r"\d{3}\.?\d{3}\.?\d{3}-?\d{2}")
# Alphanumeric CNPJ (IN RFB 2.229/2024, issued from July 2026): the 12-character root and branch may hold
# uppercase letters; the two check digits stay numeric.
_CNPJ = re.compile(r"[0-9A-Z]{2}\.?[0-9A-Z]{3}\.?[0-9A-Z]{3}/?[0-9A-Z]{4}-?\d{2}")
_CPF_WEIGHTS = tuple(range(10, 1, -1))  # 10..2 for the first check digit; 11..2 for the second
_CNPJ_WEIGHTS = (5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2)  # for the first check digit; (6,) + these for the second
# CTB Art. 138 II asks for category D; E is the category above it and also drives D vehicles. The A in AD/AE
# (motorcycles) is a separate, combined entitlement that changes nothing here.
SCHOOL_TRANSPORT_CNH = frozenset({"D", "E", "AD", "AE"})


class DocumentError(ValueError):
    """A document number or category that cannot be accepted; `field` names the document."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def _check_digit(chars: str, weights: Sequence[int]) -> str:
    # Mod 11 over character values ord(c) - 48: '0'..'9' -> 0..9 and 'A'..'Z' -> 17..42, the rule of
    # IN RFB 2.229/2024 for alphanumeric CNPJ, which reduces to the classic one for digits.
    r = sum((ord(c) - 48) * w for c, w in zip(chars, weights, strict=True)) % 11
    return "0" if r < 2 else str(11 - r)


def _validate(
    field: str, text: str, pattern: re.Pattern[str], n: int, weights: Sequence[int], personal: bool = False
) -> str:
    """The document's characters, or DocumentError; a `personal` one (a CPF) is never repeated in the message."""
    if not isinstance(text, str):
        raise DocumentError(field, f"expected text, got {type(text).__name__}")
    raw = text.strip()
    shown = "the value" if personal else repr(raw)  # error messages end up in logs (LGPD)
    if not pattern.fullmatch(raw):
        if pattern.fullmatch(raw.upper()):
            raise DocumentError(field, f"{shown}: letters must be uppercase (IN RFB 2.229/2024)")
        raise DocumentError(field, f"{shown} is not a {field.upper()} ({n} characters, optionally punctuated)")
    value = re.sub(r"[./-]", "", raw)
    if len(set(value)) == 1:
        raise DocumentError(
            field, f"{shown} repeats one digit; such numbers pass the check digits but are never issued"
        )
    body = value[:-2]
    first = _check_digit(body, weights)
    second = _check_digit(body + first, (weights[0] + 1, *weights))
    if value[-2:] != first + second:
        expected = "" if personal else f" (expected {first}{second})"
        raise DocumentError(field, f"{shown} has wrong check digits{expected}")
    return value


def normalize_cpf(text: str) -> str:
    """The 11 digits of a valid CPF given as '123.456.789-09' or '12345678909'; DocumentError otherwise."""
    return _validate("cpf", text, _CPF, 11, _CPF_WEIGHTS, personal=True)


def normalize_cnpj(text: str) -> str:
    """The 14 characters of a valid CNPJ, numeric or alphanumeric (uppercase letters in the first 12)."""
    return _validate("cnpj", text, _CNPJ, 14, _CNPJ_WEIGHTS)


def normalize_cnh_category(text: str) -> str:
    """The CNH category in uppercase if it allows driving school transport ('D', 'E', 'AD' or 'AE')."""
    if not isinstance(text, str):
        raise DocumentError("cnh_category", f"expected text, got {type(text).__name__}")
    category = text.strip().upper()
    if category not in SCHOOL_TRANSPORT_CNH:
        raise DocumentError(
            "cnh_category",
            f"{text.strip()!r} does not allow driving school transport: CTB Art. 138 II requires category D "
            "(or E, which includes it; accepted: D, E, AD, AE)",
        )
    return category
