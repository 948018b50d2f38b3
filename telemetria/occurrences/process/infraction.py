"""An infraction's legal basis (pure): which articles of Lei 3.588/2023 define infractions, the severity and the
penalties each allows.

Only Art. 36–39 define infractions with penalties; Art. 9 §1 (≤ 2 h on board), Art. 15 §1 XII (the tracker) and
Art. 26 (no other itineraries while carrying passengers) state duties. A finding that breaches a duty is
communicated to the Secretaria (Art. 34); only an infraction, an inciso of Art. 36–39, can lead to a warning or a
fine. Art. 36 and 37 punish with "advertência escrita e/ou multa": a warning, a fine, or both. Art. 38 and 39 with
"advertência escrita e multa": both together (Lei 14.133/2021 Art. 156 §7 lets a warning go with a fine).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from telemetria.occurrences.model import Severity


class Penalty(StrEnum):
    NONE = "none"
    WARNING = "warning"
    FINE = "fine"
    WARNING_AND_FINE = "warning_and_fine"


WITH_FINE = frozenset({Penalty.FINE, Penalty.WARNING_AND_FINE})
SANCTIONS = frozenset({Penalty.WARNING, Penalty.FINE, Penalty.WARNING_AND_FINE})

# Article → (severity, the last inciso): Art. 36 I–VII, 37 I–XI, 38 I–IX, 39 I–XI.
ARTICLES: Mapping[int, tuple[Severity, int]] = {
    36: (Severity.LEVE, 7), 37: (Severity.MEDIA, 11), 38: (Severity.GRAVE, 9), 39: (Severity.GRAVISSIMA, 11),
}  # fmt: skip
ROMAN = {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6, "VII": 7, "VIII": 8, "IX": 9, "X": 10, "XI": 11}
_ARTICLE = re.compile(r"Art\. (3[6-9]), ([IVX]+)")


@dataclass(frozen=True, slots=True)
class Infraction:
    article: str  # "Art. 38, IX"
    number: int  # 38
    inciso: int  # 9
    severity: Severity

    @property
    def penalties(self) -> frozenset[Penalty]:
        """What a decision may apply: Art. 36–37 "e/ou"; Art. 38–39 "e" (both, or none when not proved)."""
        if self.number in (38, 39):
            return frozenset({Penalty.NONE, Penalty.WARNING_AND_FINE})
        return frozenset(Penalty)


def parse(article: str) -> Infraction:
    """The infraction an article names, "Art. 3X, <inciso>"; ValueError naming what is wrong otherwise."""
    m = _ARTICLE.fullmatch(article.strip())
    if m is None:
        raise ValueError(
            f"{article!r} is not an inciso of Art. 36–39 (e.g. 'Art. 38, IX'); duties such as Art. 9 §1, 15 or 26 "
            "are not infractions"
        )
    number, inciso = int(m[1]), ROMAN.get(m[2], 0)
    severity, last = ARTICLES[number]
    if not 1 <= inciso <= last:
        raise ValueError(f"{article!r}: Art. {number} has incisos I to {_roman(last)}")
    return Infraction(f"Art. {number}, {m[2]}", number, inciso, severity)


def maybe(article: str | None) -> Infraction | None:
    """The infraction of a stored article, or None for a finding (no article, or an old duty article)."""
    if article is None:
        return None
    try:
        return parse(article)
    except ValueError:
        return None


def _roman(n: int) -> str:
    return next(k for k, v in ROMAN.items() if v == n)
