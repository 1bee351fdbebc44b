// Hands downloads to Ferry through its native messaging host (dev.ferry.browser): the
// browser's own copy is canceled and erased only once Ferry has accepted; on any failure the
// browser keeps the download.
import { defaults, handsOver, message } from "./rules.js";

const api = globalThis.browser ?? globalThis.chrome;
const host = "dev.ferry.browser";
let skipNext = false;        // the user held Shift on the link: this one stays with the browser
const fromMenu = new Set();  // URLs "Download with Ferry" started

api.runtime.onMessage.addListener((m) => { if (m && m.skipFerry) skipNext = true; });

api.runtime.onInstalled.addListener(() => {
  api.contextMenus.create({ id: "ferry-download", title: "Download with Ferry", contexts: ["link"] });
});

api.contextMenus.onClicked.addListener((info) => {
  if (info.menuItemId !== "ferry-download" || !info.linkUrl) return;
  fromMenu.add(info.linkUrl);
  api.downloads.download({ url: info.linkUrl });
});

async function say(text, title) {
  await api.action.setBadgeText({ text });
  await api.action.setTitle({ title });
  setTimeout(() => api.action.setBadgeText({ text: "" }), 8000);
}

/** Whether this download goes to Ferry (the user's rule, the modifier, the menu). */
async function chosen(item) {
  const url = item.finalUrl || item.url;
  const menu = fromMenu.delete(url) || fromMenu.delete(item.url);
  const skip = skipNext;
  skipNext = false;
  return handsOver(item, { ...defaults, ...(await api.storage.sync.get(null)) }, { skip, fromMenu: menu });
}

/** Asks Ferry to take it; on its yes the browser's copy goes. Throws what went wrong. */
async function handOver(item) {
  const cookies = await api.cookies.getAll({ url: item.finalUrl || item.url });
  const reply = await api.runtime.sendNativeMessage(host, message(item, cookies, navigator.userAgent));
  if (!reply || !reply.ok) throw new Error(reply && reply.error ? reply.error : "no answer from Ferry");
  await api.downloads.cancel(item.id);
  await api.downloads.erase({ id: item.id });
  await say("↓", `Ferry took the download (task ${reply.task}); ferry view shows it`);
}

async function keep(error) {
  await say("!", `Ferry did not take it (${error.message}); the browser keeps the download`);
}

if (api.downloads.onDeterminingFilename) {
  // Chromium: a download waits for its name before it can complete, so nothing is finished
  // while Ferry is asked (a small file would be, by the time onCreated's listener ran).
  api.downloads.onDeterminingFilename.addListener((item, suggest) => {
    chosen(item).then(async (take) => {
      if (!take) return suggest();
      try {
        await handOver(item);
      } catch (e) {
        suggest();
        await keep(e);
      }
    });
    return true;   // suggest is called later
  });
} else {
  // Firefox: paused while Ferry is asked.
  api.downloads.onCreated.addListener(async (item) => {
    if (!(await chosen(item))) return;
    try {
      await api.downloads.pause(item.id);
    } catch (_) {
      return;   // finished already: nothing to hand over
    }
    try {
      await handOver(item);
    } catch (e) {
      await api.downloads.resume(item.id).catch(() => {});
      await keep(e);
    }
  });
}
