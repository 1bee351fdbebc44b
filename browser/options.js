import { defaults } from "./rules.js";

const api = globalThis.browser ?? globalThis.chrome;
const form = document.getElementById("rules");

const stored = { ...defaults, ...(await api.storage.sync.get(null)) };
form.querySelector(`input[value="${stored.mode}"]`).checked = true;
document.getElementById("megabytes").value = Math.round(stored.minimumBytes / 1e6);
document.getElementById("types").value = stored.types.join(", ");

form.addEventListener("change", () => {
  api.storage.sync.set({
    mode: form.querySelector("input[name=mode]:checked").value,
    minimumBytes: Math.max(1, Number(document.getElementById("megabytes").value)) * 1e6,
    types: document.getElementById("types").value.split(",").map((t) => t.trim()).filter(Boolean),
  });
});
