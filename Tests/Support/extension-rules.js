// The browser extension's rules (browser/rules.js), run as they are under gjs, with no browser:
// which downloads go to Ferry, and what is sent for one. Exits 1 naming the first that fails.
//     gjs -m Tests/Support/extension-rules.js
import { handsOver, message, fileName } from "../../browser/rules.js";
import System from "system";

let failed = 0;
function check(what, got, want) {
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    printerr(`FAIL ${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    failed++;
  }
}

const iso = { url: "https://example.org/get?id=7", finalUrl: "https://cdn.example.org/os.iso", totalBytes: 3e9,
  mime: "application/x-iso9660-image", filename: "", referrer: "https://example.org/downloads" };
const note = { url: "https://example.org/n.txt", totalBytes: 2000, mime: "text/plain", filename: "/home/u/Downloads/n.txt" };

check("all: everything", [handsOver(iso, { mode: "all" }), handsOver(note, { mode: "all" })], [true, true]);
check("larger than 10 MB", [handsOver(iso, { mode: "larger", minimumBytes: 1e7 }), handsOver(note, { mode: "larger", minimumBytes: 1e7 })], [true, false]);
check("by type (name)", [handsOver(iso, { mode: "types", types: ["iso"] }), handsOver(note, { mode: "types", types: [".iso"] })], [true, false]);
check("by type (MIME)", handsOver(note, { mode: "types", types: ["text/plain"] }), true);
check("menu only: not on its own", handsOver(iso, { mode: "menu" }), false);
check("menu only: from the menu", handsOver(iso, { mode: "menu" }, { fromMenu: true }), true);
check("the modifier keeps one in the browser", handsOver(iso, { mode: "all" }, { skip: true }), false);
check("blob: and data: stay", [handsOver({ url: "blob:https://x/1" }, {}), handsOver({ url: "data:text/plain,hi" }, {})], [false, false]);
check("the final URL's name", fileName(iso), "os.iso");
check("the browser's path's name", fileName(note), "n.txt");
check("what is sent, and nothing else", message(iso, [{ name: "sid", value: "1" }, { name: "t", value: "d" }], "UA"),
  { type: "download", url: "https://cdn.example.org/os.iso", referrer: "https://example.org/downloads",
    cookies: "sid=1; t=d", userAgent: "UA", filename: "os.iso" });

System.exit(failed ? 1 : 0);
