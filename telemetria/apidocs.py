"""The API's documentation pages, served whole from this service (no CDN), and its summaries in Portuguese.

Swagger UI (`/docs`) and ReDoc (`/redoc`) come from the `fastapi-offline` package's files, mounted at
`/docs-assets`; each page starts its viewer from a script file of ours, so no inline script is needed
and the pages keep a strict Content-Security-Policy. Every operation's summary is in SUMMARIES (a test
checks that none is missing): the people who read these pages read the web system in Portuguese.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import APIRouter
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs-assets"
router = APIRouter(include_in_schema=False)

SUMMARIES: dict[tuple[str, str], str] = {
    ("POST", "/api/v1/fixes"): "Enviar posições (uma ou um lote) de um rastreador",
    ("GET", "/osmand"): "Enviar posições pelo protocolo OsmAnd (Traccar Client e aparelhos)",
    ("POST", "/osmand"): "Enviar posições pelo protocolo OsmAnd (Traccar Client e aparelhos)",
    ("POST", "/api/v1/auth/login"): "Entrar (usuário e senha; abre uma sessão)",
    ("POST", "/api/v1/auth/logout"): "Sair (encerra a sessão)",
    ("GET", "/api/v1/auth/me"): "Quem sou eu: usuário, perfil e empresa da sessão ou do token",
    ("POST", "/api/v1/tokens"): "Criar token pessoal para scripts (mostrado uma vez)",
    ("GET", "/api/v1/tokens"): "Listar meus tokens pessoais",
    ("DELETE", "/api/v1/tokens/{token_id}"): "Revogar um token pessoal",
    ("GET", "/api/v1/users"): "Listar usuários",
    ("POST", "/api/v1/users"): "Cadastrar usuário",
    ("PATCH", "/api/v1/users/{user_id}"): "Alterar usuário",
    ("GET", "/api/v1/contractors"): "Listar empresas contratadas",
    ("POST", "/api/v1/contractors"): "Cadastrar empresa contratada",
    ("GET", "/api/v1/contractors/{contractor_id}"): "Ver uma empresa contratada",
    ("PATCH", "/api/v1/contractors/{contractor_id}"): "Alterar empresa contratada",
    ("GET", "/api/v1/vehicles"): "Listar veículos",
    ("POST", "/api/v1/vehicles"): "Cadastrar veículo",
    ("GET", "/api/v1/vehicles/{vehicle_id}"): "Ver um veículo",
    ("PATCH", "/api/v1/vehicles/{vehicle_id}"): "Alterar veículo",
    ("GET", "/api/v1/trackers"): "Listar rastreadores",
    ("POST", "/api/v1/trackers"): "Cadastrar rastreador num veículo (o token é mostrado uma vez)",
    ("POST", "/api/v1/trackers/{tracker_id}/token"): "Gerar novo token do rastreador (o antigo deixa de valer)",
    ("POST", "/api/v1/trackers/{tracker_id}/move"): "Instalar o rastreador em outro veículo",
    ("PATCH", "/api/v1/trackers/{tracker_id}"): "Alterar rastreador",
    ("GET", "/api/v1/drivers"): "Listar condutores",
    ("POST", "/api/v1/drivers"): "Cadastrar condutor",
    ("GET", "/api/v1/drivers/{driver_id}"): "Ver um condutor",
    ("PATCH", "/api/v1/drivers/{driver_id}"): "Alterar condutor",
    ("GET", "/api/v1/driver-assignments"): "Listar condutores por veículo",
    ("POST", "/api/v1/driver-assignments"): "Atribuir condutor a veículo",
    ("DELETE", "/api/v1/driver-assignments/{assignment_id}"): "Remover atribuição de condutor",
    ("GET", "/api/v1/routes"): "Listar rotas",
    ("POST", "/api/v1/routes"): "Cadastrar rota (GeoJSON, GPX ou KML, com paradas)",
    ("GET", "/api/v1/routes/{route_id}"): "Ver uma rota com traçado, paradas e extensão",
    ("PATCH", "/api/v1/routes/{route_id}"): "Alterar rota",
    ("PUT", "/api/v1/routes/{route_id}/stops"): "Substituir os pontos da rota (embarque, escola, garagem)",
    ("GET", "/api/v1/route-assignments"): "Listar rotas por veículo",
    ("POST", "/api/v1/route-assignments"): "Atribuir rota a veículo (dias da semana e vigência)",
    ("DELETE", "/api/v1/route-assignments/{assignment_id}"): "Remover atribuição de rota",
    ("GET", "/api/v1/speed-zones"): "Listar zonas de velocidade",
    ("POST", "/api/v1/speed-zones"): "Cadastrar zona de velocidade",
    ("PATCH", "/api/v1/speed-zones/{zone_id}"): "Alterar zona de velocidade",
    ("GET", "/api/v1/school-years/{year}"): "Ver o calendário escolar do ano (dias letivos, feriados, dias sem aula)",
    ("PUT", "/api/v1/school-years/{year}"): "Definir o calendário escolar do ano (início, fim, dias sem aula e extras)",
    ("GET", "/api/v1/contracts"): "Listar contratos (preço por km e regra de pagamento em vigor)",
    ("POST", "/api/v1/contracts"): "Cadastrar contrato (empresa, número, lote, vigência, preço por km)",
    ("GET", "/api/v1/contracts/{contract_id}"): "Ver um contrato",
    ("PATCH", "/api/v1/contracts/{contract_id}"): "Alterar contrato (preço e regra: nova versão a partir de uma data)",
    ("GET", "/api/v1/contracts/{contract_id}/history"): "Histórico das versões de preço e regra do contrato",
    ("GET", "/api/v1/routes/{route_id}/history"): "Histórico das versões do itinerário (traçado, paradas, km, limites)",
    ("GET", "/api/v1/speed-zones/{zone_id}/history"): "Histórico das versões da zona de velocidade",
    ("GET", "/api/v1/vehicles/{vehicle_id}/history"): "Histórico das versões do limite de velocidade do veículo",
    ("GET", "/api/v1/route-assignments/{assignment_id}/history"): "Histórico das versões da atribuição de itinerário",
    ("GET", "/api/v1/audit"): "Registro de auditoria: quem fez o quê, quando e de onde",
    ("GET", "/api/v1/reports/km"): "Relatório: km rodados por veículo (ou por veículo e dia) e total",
    ("GET", "/api/v1/seals"): "Selos diários: todas as versões dos selos dos dias dos veículos",
    ("GET", "/public/seals"): "Público: raízes diárias dos selos da frota (sem login)",
    ("GET", "/public/seals/{day}"): "Público: raízes de um dia e as folhas da mais recente (sem login)",
    ("GET", "/api/v1/reports/summary"): "Relatório: resumo por veículo (km, tempo, trechos, alertas, condutores)",
    ("GET", "/api/v1/reports/speeding"): "Relatório: excessos de velocidade (CTB Art. 218)",
    ("GET", "/api/v1/reports/trips"): "Relatório: trajetos (trechos) entre paradas",
    ("GET", "/api/v1/reports/route-deviation"): "Relatório: desvios da rota atribuída",
    ("GET", "/api/v1/reports/stops"): "Relatório: paradas, em ponto autorizado ou não",
    ("GET", "/api/v1/reports/track"): "Relatório: trajetória (posições; também GeoJSON, GPX e KML)",
    ("GET", "/api/v1/reports/reporting"): "Relatório: regularidade de transmissão (a cada 30 s)",
    ("GET", "/api/v1/reports/schedule"): "Relatório: cumprimento de horários e corridas não realizadas",
    ("GET", "/api/v1/reports/measurement"): "Boletim de medição: corridas devidas, realizadas, km e valor a pagar",
    ("POST", "/api/v1/run-justifications"): "Justificar uma corrida não realizada ou parcial de uma rota",
    ("PATCH", "/api/v1/run-justifications/{justification_id}"): "Corrigir o motivo de uma justificativa (mês aberto)",
    ("POST", "/api/v1/measurements/{contract_id}/{month}/close"): "Fechar o mês: congelar o boletim de medição",
    ("POST", "/api/v1/measurements/{contract_id}/{month}/reopen"): "Reabrir um mês fechado (administrador, com motivo)",
    ("GET", "/api/v1/live"): "Mapa ao vivo: última posição de cada veículo visível",
    ("GET", "/api/v1/day"): "Painel do dia: em serviço, corridas do dia, alertas, rastreadores mudos, regra dos 30 s",
    ("GET", "/public/itineraries"): "Itinerários do ano letivo em vigor (público, sem login)",
    ("GET", "/public/service"): "Serviço prestado por rota num mês: corridas devidas, realizadas e km (público)",
    ("GET", "/healthz"): "Saúde do processo (responde enquanto o serviço está de pé)",
    ("GET", "/readyz"): "Prontidão: banco de dados alcançável e migrações aplicadas",
    ("GET", "/metrics"): "Métricas no formato Prometheus",
    ("GET", "/api/v1/occurrences"): "Listar ocorrências da fiscalização (período, veículo, empresa, tipo, situação)",
    ("GET", "/api/v1/occurrences/{occurrence_id}"): "Ver uma ocorrência com o histórico do processo e a evidência",
    ("POST", "/api/v1/occurrences/{occurrence_id}/review"): "Revisar: confirmar (congela a evidência) ou arquivar",
    (
        "POST",
        "/api/v1/occurrences/{occurrence_id}/notify",
    ): "Notificar a empresa: emitir o Termo de Comunicação e abrir o prazo de defesa",
    ("GET", "/api/v1/occurrences/{occurrence_id}/termo.pdf"): "Termo de Comunicação à Secretaria (PDF, Art. 34)",
    (
        "GET",
        "/api/v1/occurrences/{occurrence_id}/notificacao.pdf",
    ): "Notificação para defesa prévia da empresa, com o prazo (PDF)",
    ("POST", "/api/v1/occurrences/{occurrence_id}/defense"): "Apresentar defesa da empresa (texto e anexos)",
    ("POST", "/api/v1/occurrences/{occurrence_id}/appeal"): "Recorrer da decisão (Lei 14.133, Art. 166)",
    (
        "POST",
        "/api/v1/occurrences/{occurrence_id}/appeal-decision",
    ): "Julgar o recurso: manter, reformar ou anular, com motivação",
    ("GET", "/api/v1/occurrences/{occurrence_id}/attachments/{attachment_id}"): "Baixar um anexo da ocorrência",
    (
        "POST",
        "/api/v1/occurrences/{occurrence_id}/decision",
    ): "Decidir: sem penalidade, advertência, multa ou ambas (Art. 42)",
    ("POST", "/api/v1/occurrences/{occurrence_id}/close"): "Encerrar o processo da ocorrência decidida",
    ("GET", "/api/v1/occurrence-kinds"): "Classificação de cada tipo de ocorrência (artigo e gravidade)",
    ("PUT", "/api/v1/occurrence-kinds/{kind}"): "Alterar o artigo e a gravidade de um tipo de ocorrência",
    ("GET", "/api/v1/upfm-values"): "Valor da UPFM em reais, por ano (conversão das multas)",
    ("PUT", "/api/v1/upfm-values/{year}"): "Definir o valor da UPFM de um ano (auditado: valor anterior e novo)",
    ("POST", "/api/v1/seals/verify"): "Verificar um arquivo de trajetória exportado (CSV ou XLSX) contra os selos",
    ("GET", "/api/v1/roads/status"): "Malha viária em uso (OpenStreetMap importado): origem, data, km",
    ("GET", "/api/v1/roads"): "Vias da malha importada numa área (GeoJSON): o mapa de fundo sem internet",
    ("GET", "/api/v1/holidays/{year}"): "Feriados do ano: nacionais, de Rondônia e municipais (dias úteis dos prazos)",
    ("PUT", "/api/v1/holidays/{year}/municipal"): "Definir os feriados municipais do ano",
    ("POST", "/api/v1/traccar/positions"): "Receber posições encaminhadas por um servidor Traccar (JSON)",
    ("GET", "/api/v1/traccar/positions"): "Receber uma posição encaminhada por um servidor Traccar (modo URL)",
    ("GET", "/api/v1/traccar/gateways"): "Listar os servidores Traccar autorizados",
    ("POST", "/api/v1/traccar/gateways"): "Autorizar um servidor Traccar e emitir a sua chave",
    ("PATCH", "/api/v1/traccar/gateways/{gateway_id}"): "Desativar ou reativar um servidor Traccar",
    ("POST", "/api/v1/traccar/gateways/{gateway_id}/token"): "Trocar a chave de um servidor Traccar",
    ("POST", "/api/v1/sete/import"): "Importar do SETE rotas, veículos, motoristas e escolas (simular ou aplicar)",
}


def summarize(schema: dict[str, Any]) -> list[tuple[str, str]]:
    """Put the Portuguese summary on every operation of `schema`; returns the operations that have none."""
    missing = []
    for path, ops in schema.get("paths", {}).items():
        for method, op in ops.items():
            summary = SUMMARIES.get((method.upper(), path))
            if summary is None:
                missing.append((method.upper(), path))
            else:
                op["summary"] = summary
    return missing


def assets() -> StaticFiles:
    """The Swagger UI and ReDoc files, from the installed package."""
    return StaticFiles(directory=Path(fastapi_offline.__file__).parent / "static")


HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
}


def _page(title: str, head: str, body: str) -> HTMLResponse:
    html = f"""<!doctype html>
<html lang="pt-BR">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="icon" href="/favicon.ico">
{head}
</head>
<body>
{body}
</body>
</html>"""
    return HTMLResponse(html, headers=HEADERS)


@router.get("/docs")
async def swagger() -> HTMLResponse:
    return _page(
        "Telemetria · documentação da API",
        f'<link rel="stylesheet" href="{ASSETS}/swagger-ui.css">',
        f'<div id="swagger-ui"></div>\n<script src="{ASSETS}/swagger-ui-bundle.js"></script>\n'
        '<script src="/static/js/apidocs.js"></script>',
    )


@router.get("/redoc")
async def redoc() -> HTMLResponse:
    return _page(
        "Telemetria · documentação da API (ReDoc)",
        "",
        f'<redoc spec-url="/openapi.json"></redoc>\n<script src="{ASSETS}/redoc.standalone.js"></script>',
    )
