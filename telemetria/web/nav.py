"""The pages of the web system, who may open each, and the menu a role sees: one table, used by pages and menu."""

from __future__ import annotations

from dataclasses import dataclass

from telemetria.auth.roles import Perm, Principal


@dataclass(frozen=True, slots=True)
class Page:
    path: str
    title: str
    perm: Perm
    group: str  # the menu heading it sits under ("" for the top level)


# Reports: the page's path segment, its API kind and title. The form and columns live in static/js/reports/.
REPORTS = {
    "km": "Km rodados",
    "summary": "Resumo por veículo",
    "trips": "Trajetos (trechos)",
    "speeding": "Excesso de velocidade",
    "stops": "Paradas",
    "route-deviation": "Desvios de rota",
    "track": "Trajetória",
    "schedule": "Cumprimento de horários",
    "reporting": "Regularidade de transmissão",
}

# Registry pages: the path segment and title. What each lists and edits lives in static/js/registry.js.
REGISTRY = {
    "veiculos": "Veículos",
    "rastreadores": "Rastreadores",
    "condutores": "Condutores",
    "empresas": "Empresas contratadas",
    "rotas": "Rotas",
    "atribuicoes": "Atribuições",
    "zonas": "Zonas de velocidade",
}

# Contract execution (issue 17): what the Secretaria pays by. Every role reads them (a contractor only its own
# contracts, as the API scopes them); the pages offer writes only to those whose permissions allow them.
CONTRACTS = {
    "/contratos": "Contratos",
    "/calendario-escolar": "Calendário escolar",
    "/boletim": "Boletim de medição",
}

# Fiscalização (issue 18): the day panel is the servidor's home; the occurrences and their process. A contractor
# reads its own occurrences from `notified` on (the API scopes them); only an admin edits the classification.
FISCALIZACAO = {
    "/ocorrencias": ("Ocorrências", Perm.READ),
    "/fiscalizacao/classificacao": ("Classificação das ocorrências", Perm.CLASSIFY_OCCURRENCES),
}

PAGES: tuple[Page, ...] = (
    Page("/painel", "Painel do dia", Perm.READ, ""),
    Page("/mapa", "Mapa ao vivo", Perm.READ, ""),
    Page("/historico", "Histórico do veículo", Perm.READ, ""),
    *(Page(f"/relatorios/{k}", t, Perm.READ, "Relatórios") for k, t in REPORTS.items()),
    # Issue 19: any logged-in user checks an exported track file against the daily seals.
    Page("/verificar", "Verificar arquivo", Perm.READ, "Relatórios"),
    *(Page(f"/cadastro/{k}", t, Perm.WRITE_REGISTRY, "Cadastro") for k, t in REGISTRY.items()),
    *(Page(path, t, Perm.READ, "Contratos") for path, t in CONTRACTS.items()),
    *(Page(path, t, perm, "Fiscalização") for path, (t, perm) in FISCALIZACAO.items()),
    Page("/usuarios", "Usuários", Perm.MANAGE_USERS, "Administração"),
    # Traccar servers forwarding positions (issue 35): a gateway token is a credential of the installation.
    Page("/gateways-traccar", "Servidores Traccar", Perm.MANAGE_USERS, "Administração"),
    Page("/auditoria", "Registro de auditoria", Perm.READ_AUDIT, "Administração"),
    # Issue 36: the UPFM's R$ per year, kept in the registry (a fine's R$ = its UPFM × the year's value).
    Page("/administracao/upfm", "Valor da UPFM", Perm.CLASSIFY_OCCURRENCES, "Administração"),
)

ROLE_NAMES = {"admin": "Administrador", "monitor": "Servidor", "auditor": "Controle externo",
              "contractor": "Empresa contratada"}  # fmt: skip


# Where each role lands after logging in: the servidor's day starts at the day panel (what needs attention now);
# a contractor follows its own fleet on the live map, and an auditor, who reads rather than acts, starts there too.
HOMES = {"admin": "/painel", "monitor": "/painel"}


def home(who: Principal) -> str:
    """The page a principal's session opens on."""
    return HOMES.get(who.role.value, "/mapa")


def menu(who: Principal) -> list[tuple[str, list[Page]]]:
    """The menu groups this principal may open, in order, each with its pages."""
    groups: dict[str, list[Page]] = {}
    for page in PAGES:
        if who.can(page.perm):
            groups.setdefault(page.group, []).append(page)
    return list(groups.items())
