// What every page has: the menu on small screens and the logout button.
import { api, explain, leave, toast } from "./api.js";

const toggle = document.querySelector(".menu-toggle");
if (toggle) {
  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    document.getElementById("menu").classList.toggle("open", open);
  });
}

const logout = document.getElementById("logout");
if (logout) {
  logout.addEventListener("click", async () => {
    leave();
    try {
      await api("/api/v1/auth/logout", { method: "POST" });
    } catch (err) {
      if (err.status !== 401) { leave(false); toast(explain(err), "error"); return; }
    }
    location.assign("/entrar");
  });
}

// Menu groups: one open at a time; Escape or a click elsewhere closes them.
const groups = [...document.querySelectorAll(".menu-group")];
for (const g of groups) {
  g.addEventListener("toggle", () => { if (g.open) for (const o of groups) if (o !== g) o.open = false; });
}
document.addEventListener("click", (e) => { for (const g of groups) if (!g.contains(e.target)) g.open = false; });
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape") for (const g of groups) if (g.open) { g.open = false; g.querySelector("summary").focus(); }
});
