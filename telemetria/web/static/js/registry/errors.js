// The API's refusals as plain Portuguese, each tied to the field that caused it.
// The server writes its reasons in English ("plate: already registered"); people read these instead.
import { ApiError, explain } from "../api.js";

const RULES = [
  // A duplicate says which value is taken: on a phone the field it sits under can be off the screen.
  [/^username: '?([^']*)'? is taken/i, (m) => `Nome de usuário: «${m[1]}» já está em uso; escolha outro.`],
  [/already (registered|exists)|is taken/i, "Já existe um cadastro com esse valor."],
  [/is not a Brazilian plate/i, "Placa inválida: use o formato ABC1234 ou ABC1D23."],
  [/wrong check digits/i, "Número inválido: os dígitos verificadores não conferem."],
  [/is not a CPF/i, "CPF inválido: são 11 dígitos, com ou sem pontuação."],
  [/is not a CNPJ/i, "CNPJ inválido: são 14 caracteres, com ou sem pontuação."],
  [/letters must be uppercase/i, "Use letras maiúsculas no CNPJ."],
  [/does not allow driving school transport/i,
    "Essa categoria de CNH não permite conduzir transporte escolar: exige D ou E (CTB Art. 138 II)."],
  [/must have at least (\d+) characters/i, (m) => `A senha precisa ter pelo menos ${m[1]} caracteres.`],
  [/must have at most (\d+) characters/i, (m) => `A senha pode ter no máximo ${m[1]} caracteres.`],
  [/must not contain the username/i, "A senha não pode conter o nome de usuário."],
  [/2 to 64 characters, lower-case/i,
    "Use de 2 a 64 caracteres: letras minúsculas, dígitos e . _ @ -, começando por letra ou dígito."],
  [/a contractor user must name its contractor/i, "Escolha a empresa deste usuário."],
  [/only contractor users belong/i, "Só usuários do perfil Empresa contratada pertencem a uma empresa."],
  [/last active admin/i, "É o último administrador ativo: torne outro usuário administrador antes."],
  [/overlaps another/i, "O período se sobrepõe a outro já cadastrado para este veículo ou condutor."],
  [/must be after valid_from|must not be before valid_from/i, "O fim precisa ser depois do início."],
  [/already in .* at that time/i, "O rastreador já está neste veículo nesse momento."],
  [/installation starting after/i, "O rastreador tem uma instalação que começa depois desse momento."],
  [/still in use/i, "Ainda está em uso por outros cadastros."],
  [/no such record|^no \w+ \d+|no vehicle|no contractor|no tracker/i, "Registro não encontrado."],
  [/may not be null/i, "Campo obrigatório."],
  [/nothing to change/i, "Nada foi alterado."],
  [/reaches (\d{4})-(\d{2}), a closed month of contract (\S+)/i, (m) => `A alteração alcança ${m[2]}/${m[1]}, mês já `
    + `fechado do contrato ${m[3]}: reabra o mês primeiro, ou faça a alteração valer a partir do mês seguinte.`],
  [/look swapped/i, "Latitude e longitude parecem trocadas (GeoJSON e KML escrevem longitude, latitude)."],
  [/the file is empty/i, "O arquivo está vazio."],
  [/KMZ/, "KMZ (KML compactado) não é aceito: descompacte e envie o .kml que está dentro."],
  [/unrecognised format|unknown format/i, "Formato não reconhecido: envie um arquivo GeoJSON, GPX ou KML."],
  [/entity declarations/i, "O arquivo XML tem declarações de entidade, que não são aceitas por segurança."],
  [/not well-formed XML|not valid JSON|expected a <\w+> document/i,
    "O arquivo está corrompido ou não é um GeoJSON, GPX ou KML válido."],
  [/no line found/i, "Nenhuma linha encontrada: a rota precisa de uma LineString (GeoJSON, KML) ou de uma trilha (GPX)."],
  [/at least 2 distinct points/i, "A rota precisa de pelo menos 2 pontos distintos."],
  [/lines that do not join/i, "O arquivo tem várias linhas que não se ligam umas às outras."],
  [/areas are not routes/i, "Uma rota é uma linha, não uma área (polígono)."],
  [/a jump of ([\d.]+) km/i, (m) => `Há um salto de ${m[1].replace(".", ",")} km entre dois pontos seguidos: isso não é uma estrada.`],
  [/km long; a route is at most/i, "A linha tem mais de 1000 km: não parece uma rota."],
  [/outside Brazil|is outside -/i, "Coordenada fora do Brasil ou fora do intervalo válido."],
  [/is not a time of day/i, "Horário inválido: use HH:MM."],
  [/is not boarding, school or garage/i, "Tipo de ponto inválido: use embarque, escola ou garagem."],
  [/a zone is a GeoJSON Polygon/i, "A zona precisa ser um polígono GeoJSON (Polygon ou MultiPolygon)."],
  [/ring needs 4 or more/i, "Cada anel do polígono precisa de 4 ou mais posições, a última igual à primeira."],
  [/invalid polygon/i, "Polígono inválido (as bordas se cruzam?)."],
  [/km² allowed/i, "A zona é grande demais."],
  [/larger than \d+ bytes/i, "O arquivo é grande demais (máximo 10 MB)."],
  [/contains control characters/i, "Há caracteres não permitidos no texto."],
  // contracts and the school calendar (telemetria/contracts/)
  [/is before valid_from|is before start/i, "O fim precisa ser depois do início."],
  [/outside the contract's validity/i, "A data precisa estar dentro da vigência do contrato."],
  [/effective_from: only with/i, "Informe esta data só quando mudar o preço ou a regra de pagamento."],
  [/must not exceed made_min_coverage_pct/i, "O % para parcial não pode passar do % para realizada."],
  [/decimal places|valid decimal|Decimal input/i, "Use um valor em reais com até 2 casas decimais, por exemplo 4,35."],
  [/is outside the school year/i, "A data está fora do ano letivo (entre o início e o fim)."],
  [/has no school anyway: it is a (Saturday|Sunday)/i, "Esse dia já não tem aula: é fim de semana."],
  [/has no school anyway: it is (.+) \((feriado|ponto_facultativo)\)/i,
    (m) => `Esse dia já não tem aula: ${m[1]} (${m[2] === "feriado" ? "feriado nacional" : "ponto facultativo"}).`],
  [/is already a school day/i, "Esse dia já é letivo."],
  [/is already listed in/i, "Essa data foi marcada duas vezes."],
  [/say why there is no school/i, "Diga por que não há aula nesse dia."],
  [/^(start|end): \S+ is not in \d{4}/i, "A data precisa estar no ano escolhido."],
  // the boletim de medição (telemetria/measurement/) answers its refusals in Portuguese, as `message`
  // (shown as it is by explain); only pydantic's 422 for a blank reason comes through here
  [/diga o motivo/i, "Diga o motivo."],
  // pydantic's own words (422)
  [/Field required|Input should be a valid (string|dictionary)/i, "Campo obrigatório."],
  [/String should have at least 1 character/i, "Campo obrigatório."],
  [/String should have at least (\d+)/i, (m) => `Use pelo menos ${m[1]} caracteres.`],
  [/String should have at most (\d+)/i, (m) => `Use no máximo ${m[1]} caracteres.`],
  [/List should have at least 1 item/i, "Escolha pelo menos um."],
  [/greater than or equal to ([\d.]+)/i, (m) => `O valor mínimo é ${num(m[1])}.`],
  [/less than or equal to ([\d.]+)/i, (m) => `O valor máximo é ${num(m[1])}.`],
  [/greater than ([\d.]+)/i, (m) => `Precisa ser maior que ${num(m[1])}.`],
  [/less than ([\d.]+)/i, (m) => `Precisa ser menor que ${num(m[1])}.`],
  [/valid integer/i, "Use um número inteiro."],
  [/valid number/i, "Use um número."],
  [/valid (date|datetime|time)|date or time/i, "Data ou hora inválida."],
  [/Input should be/i, "Valor não aceito: escolha uma das opções."],
];

function num(text) {
  return String(Number(text)).replace(".", ",");
}

// A Portuguese sentence for one English reason, or null when it is not one we know.
export function portuguese(reason) {
  if (!reason) return null;
  for (const [pattern, text] of RULES) {
    const m = pattern.exec(reason);
    if (m) return typeof text === "function" ? text(m) : text;
  }
  return null;
}

// "body.stops.0.name" or "stops[0].lat" → { name: "name", index: 0, root: "stops" }.
export function parsePath(path) {
  if (!path) return { name: null, index: null, root: null };
  const parts = String(path).replace(/\[(\d+)\]/g, ".$1").split(".")
    .filter((p) => p && !["body", "query", "path"].includes(p));
  const index = parts.find((p) => /^\d+$/.test(p));
  const words = parts.filter((p) => !/^\d+$/.test(p));
  return { name: words.length ? words[words.length - 1] : null, index: index === undefined ? null : Number(index),
    root: words[0] || null };
}

// Every problem an error names: [{ path, message }], the message already in Portuguese.
export function problems(err) {
  if (!(err instanceof ApiError)) return [];
  const out = [];
  if (Array.isArray(err.body.errors)) {
    for (const e of err.body.errors) {
      out.push({ path: parsePath(e.field), message: portuguese(e.error) || "Valor inválido." });
    }
  } else if (err.body.field) {
    // A refusal the server wrote for a person (`message`) is shown as it is, never matched against the rules.
    const said = typeof err.body.message === "string" && err.body.message ? explain(err) : null;
    out.push({ path: parsePath(err.body.field),
      message: err.body.pt || said || portuguese(err.body.detail) || explain(err) });
  }
  return out;
}

// A refusal found before asking the server, shown the same way as the server's.
export function refusal(field, message) {
  return new ApiError(400, { detail: message, field, pt: message });
}

// One sentence for the whole error (for a message box or a toast).
export function sentence(err, labels = {}) {
  if (err instanceof ApiError) {
    if (err.body.pt) return err.body.pt;
    if (typeof err.body.message === "string" && err.body.message) return explain(err);
    const known = portuguese(err.body.detail);
    if (known && err.status !== 401) {
      const { name } = parsePath(err.field);
      return name && labels[name] ? `${labels[name]}: ${known}` : known;
    }
  }
  return explain(err, labels);
}
