"""Screenshots of the key pages, on desktop and phone widths, of the demo (`./dev run`) of a checkout (issue 36).

    .venv/bin/python -m bench.screens --out test-artifacts/screens/after
    .venv/bin/python -m bench.screens --tree /work/other-checkout --out test-artifacts/screens/before

Runs the demo of the checkout `--tree` (its own .venv, `telemetria demo`: the live fleet and, where the checkout
has it, the backfilled past weeks) on a scratch database made for the run on the cluster TELEMETRIA_DATABASE_URL
names (dropped at the end), waits until the past weeks are filled in (or `--settle` seconds for a checkout whose
demo has no past), logs in as the demo's admin in Debian's chromium (Playwright, as the browser tests) and saves
the pages below at 1280×800 and 390×844 as small PNGs (the viewport, reduced to 256 colours). The screenshots of
the state issue 36 was filed against and of its fix are kept in test-artifacts/screens/.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
from PIL import Image
from playwright.async_api import Browser, Page, async_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
# (name, path) of each page shown logged in as the admin; "{occurrence}" is an occurrence in process.
PAGES = [
    ("01-mapa", "/mapa"),
    ("02-painel-do-dia", "/painel"),
    ("03-boletim", "/boletim?contract_id={contract}&mes={month}"),
    ("04-ocorrencias", "/ocorrencias"),
    ("05-processo", "/ocorrencias/{occurrence}"),
    ("06-relatorio-30s", "/relatorios/reporting?contractor_id={contractor}&from={from_}&to={to}"),
    ("07-verificar", "/verificar"),
    ("08-auditoria", "/auditoria"),
]
PUBLIC = [("09-publico", "/publico"), ("10-publico-servico", "/publico/servico")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def with_database(url: str, name: str) -> str:
    """The URL with its database (the path) replaced."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


async def _admin(url: str, sql: str) -> None:
    conn = await asyncpg.connect(with_database(url, "postgres"))
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@contextmanager
def demo(tree: Path, url: str, settle_s: float, wait_s: float) -> Iterator[tuple[str, str]]:
    """The checkout's demo serving on a scratch database: (base URL, admin password); stopped and dropped after."""
    name = f"telemetria_screens_{os.getpid()}"
    asyncio.run(_admin(url, f"CREATE DATABASE {name}"))
    password = secrets.token_urlsafe(12)
    data = tempfile.TemporaryDirectory(prefix="screens-")
    env = {**os.environ, "TELEMETRIA_DATABASE_URL": with_database(url, name), "TELEMETRIA_DATA_DIR": data.name,
           "TELEMETRIA_PASSWORD": password}  # fmt: skip
    exe = str(tree / ".venv" / "bin" / "telemetria")
    proc = None
    try:
        subprocess.run([exe, "migrate"], env=env, cwd=tree, check=True, capture_output=True)
        port = free_port()
        proc = subprocess.Popen([exe, "demo", "--host", "127.0.0.1", "--port", str(port)], env=env, cwd=tree,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
        lines: list[str] = []
        filled = threading.Event()

        def read() -> None:
            assert proc is not None and proc.stdout is not None
            for line in proc.stdout:
                lines.append(line.rstrip())
                print(f"  | {line.rstrip()}", flush=True)
                if re.search(r"past weeks (filled in|failed)|no active 'admin'", line):
                    filled.set()

        threading.Thread(target=read, daemon=True).start()
        start = time.monotonic()
        while not any(line.startswith("Log in") or "http://" in line for line in lines):
            if proc.poll() is not None or time.monotonic() - start > 120:
                raise SystemExit("the demo did not start:\n" + "\n".join(lines[-20:]))
            time.sleep(0.5)
        if any("filling in" in line for line in lines):
            if not filled.wait(wait_s):
                print(f"  (still filling in after {wait_s:.0f} s: screenshots of the pages as they are)", flush=True)
        else:  # a demo with no past: some minutes of its live fleet
            time.sleep(settle_s)
        yield f"http://127.0.0.1:{port}", password
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
        asyncio.run(_admin(url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        data.cleanup()


def shrink(path: Path) -> None:
    """The PNG in 256 colours (a page is flat colour and text: a third of the bytes, no visible loss)."""
    with Image.open(path) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


async def settle(page: Page) -> None:
    try:
        await page.wait_for_load_state("networkidle", timeout=8000)
    except Exception:  # the live map polls: never idle for long
        pass
    # A page still loading its data says "Carregando…": wait for it to answer (a busy machine takes a while).
    try:
        await page.get_by_text(re.compile("^(Carregando|Verificando)")).first.wait_for(state="hidden", timeout=90000)
    except Exception:
        pass
    await page.wait_for_timeout(1200)


async def first_occurrence(page: Page, base: str) -> int | None:
    """An occurrence in process (notified or later) or, none, the first one; None when there is none."""
    period = f"from={date.today() - timedelta(days=70)}&to={date.today()}"
    for query in ("status=decided", "status=under_appeal", "status=notified", ""):
        r = await page.request.get(f"{base}/api/v1/occurrences?limit=1&{period}&{query}")
        if r.ok:
            items = (await r.json()).get("items") or []
            if items:
                return int(items[0]["id"])
    return None


def last_weekday() -> date:
    """The last Monday-to-Friday before today (the demo's past has school days only)."""
    day = date.today() - timedelta(days=1)
    while day.weekday() >= 5:
        day -= timedelta(days=1)
    return day


async def first_id(page: Page, url: str) -> int | None:
    """The first id a list endpoint answers (its `items`, or the list itself); None when none or refused."""
    r = await page.request.get(url)
    if not r.ok:
        return None
    body = await r.json()
    items = body.get("items", []) if isinstance(body, dict) else body
    return int(items[0]["id"]) if items else None


async def verify_a_file(page: Page, base: str, out: Path) -> None:
    """On /verificar: the track CSV of the last weekday of the first vehicle, sent as exported (its answer)."""
    vehicle = await first_id(page, f"{base}/api/v1/vehicles")
    if vehicle is None:
        return
    day = last_weekday().isoformat()
    r = await page.request.get(f"{base}/api/v1/reports/track?vehicle_id={vehicle}&from={day}&to={day}&format=csv")
    if not r.ok:
        return
    file = out / "trajetoria.csv"
    file.write_bytes(await r.body())
    try:
        await page.locator("#v-file").set_input_files(str(file))
        await page.locator("#v-form button[type=submit]").click()
        await page.locator("#v-result").wait_for(state="visible", timeout=20000)
    except Exception as e:  # a checkout without the page's ids: the page as it opens
        print(f"  (verificar: {type(e).__name__})", flush=True)
    finally:
        file.unlink(missing_ok=True)


async def capture(browser: Browser, base: str, password: str, out: Path, size: str) -> list[Path]:
    width, height = SIZES[size]
    saved = []
    ctx = await browser.new_context(viewport={"width": width, "height": height}, locale="pt-BR",
                                    timezone_id="America/Porto_Velho")  # fmt: skip
    page = await ctx.new_page()
    await page.goto(base + "/entrar")
    await page.get_by_label("Usuário").fill("admin")
    await page.get_by_label("Senha").fill(password)
    await page.get_by_role("button", name="Entrar").click()
    await page.wait_for_url(re.compile(r"/(painel|mapa)$"))
    last_month = date.today().replace(day=1) - timedelta(days=1)
    ids = {
        "occurrence": await first_occurrence(page, base),
        "contract": await first_id(page, f"{base}/api/v1/contracts"),
        "contractor": await first_id(page, f"{base}/api/v1/contractors"),
        "month": f"{last_month:%Y-%m}",  # the demo's closed month
        "from_": f"{date.today() - timedelta(days=14)}",
        "to": f"{date.today() - timedelta(days=1)}",
    }
    for name, path in PAGES:
        if "{occurrence}" in path and ids["occurrence"] is None:
            continue
        path = path.format(**{k: "" if v is None else v for k, v in ids.items()})
        await page.goto(base + path)
        await settle(page)
        if path == "/verificar":
            await verify_a_file(page, base, out)
        target = out / f"{name}-{size}.png"
        await page.screenshot(path=str(target))
        saved.append(target)
    await ctx.close()
    ctx = await browser.new_context(viewport={"width": width, "height": height}, locale="pt-BR")
    page = await ctx.new_page()
    for name, path in PUBLIC:
        await page.goto(base + path)
        await settle(page)
        target = out / f"{name}-{size}.png"
        await page.screenshot(path=str(target))
        saved.append(target)
    await ctx.close()
    return saved


async def shoot(base: str, password: str, out: Path) -> list[Path]:
    async with async_playwright() as pw:
        args = ["--no-sandbox", "--disable-gpu", "--lang=pt-BR"]
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=args)
        try:
            saved = []
            for size in SIZES:
                saved += await capture(browser, base, password, out, size)
            return saved
        finally:
            await browser.close()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose demo to run (its .venv set up)")
    p.add_argument("--out", type=Path, required=True, help="folder for the PNGs")
    p.add_argument("--wait", type=float, default=900.0, help="seconds to wait for the backfilled past weeks")
    p.add_argument("--settle", type=float, default=90.0, help="seconds of live demo when it backfills nothing")
    args = p.parse_args(argv)
    url = os.environ.get("TELEMETRIA_DATABASE_URL")
    if not url:
        raise SystemExit("TELEMETRIA_DATABASE_URL names the cluster to make the scratch database on")
    args.out.mkdir(parents=True, exist_ok=True)
    with demo(args.tree.resolve(), url, args.settle, args.wait) as (base, password):
        saved = asyncio.run(shoot(base, password, args.out))
    for path in saved:
        shrink(path)
    total = sum(path.stat().st_size for path in saved)
    print(f"{len(saved)} screenshots in {args.out} ({total / 1024:.0f} KiB)")


if __name__ == "__main__":
    main(sys.argv[1:])
