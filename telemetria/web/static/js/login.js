import { api, config, explain } from "./api.js";

const form = document.getElementById("login-form");
const error = document.getElementById("login-error");

function show(message, field) {
  error.textContent = message;
  error.hidden = false;
  for (const input of form.querySelectorAll("input")) input.removeAttribute("aria-invalid");
  if (field) form.elements[field].setAttribute("aria-invalid", "true");
  (field ? form.elements[field] : form.elements.password).focus();
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const username = form.elements.username.value.trim();
  const password = form.elements.password.value;
  if (!username) return show("Informe o usuário.", "username");
  if (!password) return show("Informe a senha.", "password");
  const button = form.querySelector("button");
  button.disabled = true;
  try {
    await api("/api/v1/auth/login", { method: "POST", body: { username, password } });
    location.assign(config.next || "/"); // "/": each role's home
  } catch (err) {
    if (err.status === 401) show("Usuário ou senha incorretos.", "password");
    else if (err.status === 429) show("Muitas tentativas erradas: o acesso foi bloqueado por alguns minutos. Tente mais tarde.");
    else show(explain(err));
    form.elements.password.value = "";
  } finally {
    button.disabled = false;
  }
});
