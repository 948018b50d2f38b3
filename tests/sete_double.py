"""A SETE double: SETE's REST API answering from shapes recorded from SETE's own clients (tests/payloads/sete).

The shapes come from seteWeb's js/db_rest.js (login: `data.token.access_token`; lists: `{"data": [...]}`),
modules/rota/rota-dados-ctrl.js (`/rotas/{ibge}/{id}/shape` read as `.data.shape`; `/veiculos` as an object
with `id_veiculo`; `/motoristas` as `[{"cpf_motorista"}]`), and the *-model.js field names. A test edits
`double.data` to make SETE change between two imports.
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

PAYLOADS = Path(__file__).parent / "payloads" / "sete"
IBGE = "1100114"
USER = "semed@jaru.ro.gov.br"
PASSWORD = "senha-da-semed"


def recorded() -> dict[str, Any]:
    return {p.stem: orjson.loads(p.read_bytes()) for p in PAYLOADS.glob("*.json")}


class SeteDouble:
    def __init__(self) -> None:
        self.data = copy.deepcopy(recorded())
        self.token = self.data["auth"]["data"]["token"]["access_token"]
        self.requests: list[str] = []
        self.app = Starlette(routes=[
            Route("/authenticator/sete", self.login, methods=["POST"]),
            Route("/rotas/{ibge}", self.routes),
            Route("/rotas/{ibge}/{rid:int}", self.route),
            Route("/rotas/{ibge}/{rid:int}/{what}", self.route_part),
            Route("/escolas/{ibge}/{sid:int}", self.school),
            Route("/veiculos/{ibge}", self.listing("veiculos")),
            Route("/motoristas/{ibge}", self.listing("motoristas")),
        ])  # fmt: skip

    async def login(self, request: Request) -> JSONResponse:
        body = await request.json()
        md5 = hashlib.md5(PASSWORD.encode(), usedforsecurity=False).hexdigest()
        if body.get("usuario") != USER or body.get("senha") != md5:
            return JSONResponse({"result": False, "messages": "Usuário ou senha inválidos"}, 401)
        return JSONResponse(self.data["auth"])

    def _refused(self, request: Request) -> JSONResponse | None:
        self.requests.append(request.url.path)
        if request.headers.get("authorization") != self.token:  # the raw token, no scheme (db_rest.js)
            return JSONResponse({"result": False, "messages": "Token inválido"}, 403)
        if request.path_params.get("ibge") != IBGE:
            return JSONResponse({"result": False, "messages": "Município não encontrado"}, 404)
        return None

    async def routes(self, request: Request) -> JSONResponse:
        return self._refused(request) or JSONResponse(self.data["rotas"])

    async def route(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        rid = request.path_params["rid"]
        found = [r for r in self.data["rotas"]["data"] if r["id_rota"] == rid]
        return JSONResponse(found[0]) if found else JSONResponse({"result": False}, 404)

    async def route_part(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        key = f"{request.path_params['what']}_{request.path_params['rid']}"
        if key in self.data:
            return JSONResponse(self.data[key])
        if request.path_params["what"] == "shape":
            return JSONResponse({"result": False, "messages": "Rota sem traçado"}, 404)
        return JSONResponse({"result": True, "total": 0, "data": []})

    async def school(self, request: Request) -> JSONResponse:
        if refused := self._refused(request):
            return refused
        key = f"escola_{request.path_params['sid']}"
        return JSONResponse(self.data[key]) if key in self.data else JSONResponse({"result": False}, 404)

    def listing(self, name: str) -> Any:
        async def answer(request: Request) -> JSONResponse:
            return self._refused(request) or JSONResponse(self.data[name])

        return answer
