// The registry pages (/cadastro/…) and the users page: the server says which one (config.entity);
// each is a small module under registry/ built on the same list + form pieces.
import { config, el } from "./api.js";
import { assignments } from "./registry/assignments.js";
import { contractors, drivers, trackers, vehicles } from "./registry/fleet.js";
import { gateways } from "./registry/gateways.js";
import { routes } from "./registry/routes.js";
import { users } from "./registry/users.js";
import { zones } from "./registry/zones.js";

const PAGES = {
  veiculos: vehicles,
  rastreadores: trackers,
  condutores: drivers,
  empresas: contractors,
  rotas: routes,
  atribuicoes: assignments,
  zonas: zones,
  usuarios: users,
  gateways,
};

const root = document.getElementById("registry");
const page = PAGES[config.entity];
if (page) page(root);
else root.append(el("p", { class: "error-text" }, "Página de cadastro desconhecida."));
