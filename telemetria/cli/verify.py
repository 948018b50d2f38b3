"""`telemetria verify FILE`: does an exported track file (CSV or XLSX) match its daily seals? (the database's)

Answers as the page "Verificar arquivo" does (issue 36), in Portuguese and in three words: **autêntico** (the rows
match a seal), **ainda não selado** (the day is not closed yet: the rows match the data stored today; try again
tomorrow) or **alterado** (a row differs: the first one, both sides as the file shows them, local time and decimal
comma). Then one line per vehicle-day. `--json` prints the answer of `POST /api/v1/seals/verify` instead.

Exit status: 0 autêntico; 1 alterado (or not verifiable: the day's positions are no longer kept); 2 the file
cannot be read as a track export; 3 ainda não selado (not an alteration: verify it again once the day is sealed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from telemetria.cli.common import Subparsers, emit, run_db
from telemetria.settings import Settings

VALID, INVALID, UNUSABLE, NOT_SEALED_YET = 0, 1, 2, 3

# The verdict's words, as /verificar shows them (web/static/js/verify.js's WORDS): the file's, then a day's.
WORDS = {
    "autentico": ("AUTÊNTICO", "autêntico"),
    "ainda_nao_selado": ("AINDA NÃO SELADO", "ainda não selado"),
    "alterado": ("ALTERADO", "alterado"),
    "nao_verificavel": ("NÃO VERIFICÁVEL", "não verificável"),
}


def _word(verdict: Any, valid: Any) -> tuple[str, str]:
    return WORDS.get(str(verdict or ""), WORDS["autentico" if valid else "alterado"])


def _days(n: int) -> str:
    return f"{n} {'dia verificado' if n == 1 else 'dias verificados'}"


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _date(iso: str) -> str:
    """`2026-10-20` as the file shows a day: 20/10/2026."""
    y, m, d = iso.split("-")
    return f"{d}/{m}/{y}"


def headline(answer: dict[str, Any]) -> str:
    """The file's verdict and what it means, in the page's words."""
    days = answer["days"]
    word, _ = _word(answer.get("verdict"), answer["valid"])
    verdict = answer.get("verdict") or ("autentico" if answer["valid"] else "alterado")
    if not days:
        text = "não há no arquivo nenhum dia de trajetória para verificar."
    elif verdict == "autentico":
        text = f"o arquivo confere com os selos: {_days(len(days))}, nenhuma diferença."
    elif verdict == "ainda_nao_selado":
        text = (
            "o dia ainda não foi selado (o selo é gerado depois que o dia termina): tente novamente amanhã. "
            f"As linhas conferem com os dados guardados hoje ({_days(len(days))})."
        )
    elif verdict == "alterado":
        changed = sum(1 for d in days if _word(d.get("verdict"), d["valid"]) == WORDS["alterado"])
        differ = "dia difere" if len(days) == 1 else "dias diferem"
        text = f"{changed} de {len(days)} {differ} dos selos ou dos dados guardados: a primeira linha diferente abaixo."
    else:
        text = "as posições de algum dia já não são guardadas: não há com o que comparar."
    return f"{word}: {_sentence(text)}"


def _side(shown: Any, raw: Any, missing: str) -> str:
    value = shown if shown is not None else raw
    return missing if value is None else str(value)


def describe(answer: dict[str, Any]) -> list[str]:
    """The answer as people read it: the verdict first, then a day a line (and its first difference under it)."""
    out = [headline(answer)]
    for d in answer["days"]:
        _, word = _word(d.get("verdict"), d["valid"])
        vehicle = f"{d['plate'] or '?'} (veículo {d['vehicle_id']})"
        version = f"versão {d['version']} do selo" if d["version"] is not None else "sem selo"
        rows = f"{d['rows']} {'linha' if d['rows'] == 1 else 'linhas'}"
        reason = f" ({d['reason']})" if d["reason"] else ""
        out.append(f"  {_date(d['date'])} {vehicle}, {version}, {rows}: {word}{reason}")
        diff = d["first_difference"]
        if diff is not None:
            out.append(f"    linha {diff['row']} do arquivo")
            expected = _side(diff.get("expected_shown"), diff["expected"], "nada (a linha não devia existir)")
            found = _side(diff.get("found_shown"), diff["found"], "nada (a linha falta no arquivo)")
            out.append(f"      esperado (selo):      {expected}")
            out.append(f"      encontrado (arquivo): {found}")
    if answer["reason"]:
        out.append(_sentence(str(answer["reason"])) + ".")
    return out


def exit_status(answer: dict[str, Any]) -> int:
    if answer["valid"]:
        return VALID
    return NOT_SEALED_YET if answer.get("verdict") == "ainda_nao_selado" else INVALID


def _unreadable(message: str) -> str:
    """The reader's reason (English, `file: …`, for the API's scripts) said to a person in Portuguese."""
    detail = message.removeprefix("file: ")
    if detail.startswith("not a track export"):
        return (
            "arquivo: não é um arquivo de trajetória exportado por este sistema; use o CSV ou o XLSX do "
            "relatório Trajetória, sem alterar o cabeçalho"
        )
    return f"arquivo: não pôde ser lido como uma trajetória exportada (motivo: {detail})"


def cmd_verify(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.seals import verify, verify_store

    path: Path = args.file
    try:
        data = path.read_bytes()
    except OSError as e:
        print(f"telemetria: arquivo: não foi possível ler {path}: {e.strerror or e}", file=sys.stderr)
        sys.exit(UNUSABLE)
    try:
        parsed = verify.parse(data)
    except verify.NotAnExport as e:
        print(f"telemetria: {_unreadable(str(e))}", file=sys.stderr)
        sys.exit(UNUSABLE)

    async def run(conn: Any) -> dict[str, Any]:
        return verify.report(await verify_store.check(conn, parsed, None))  # on the server: every vehicle

    answer = run_db(settings, run)
    if args.json:
        emit(answer)
    else:
        sys.stdout.write("".join(line + "\n" for line in describe(answer)))
    sys.exit(exit_status(answer))


def add_commands(sub: Subparsers) -> None:
    """Add the `verify` command to the `telemetria` parser."""
    ver = sub.add_parser(
        "verify", help="check an exported track file (CSV or XLSX) against the daily seals; answers in Portuguese "
        "(exit 0 autêntico, 1 alterado, 2 unreadable, 3 ainda não selado)",
    )  # fmt: skip
    ver.add_argument("file", type=Path, help="the exported file (trajetoria_....csv or .xlsx)")
    ver.add_argument("--json", action="store_true", help="print the answer as POST /api/v1/seals/verify gives it")
    ver.set_defaults(func=cmd_verify)
