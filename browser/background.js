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

async function settings() {
  return { ...defaults, ...(await api.storage.sync.get(null)) };
}

async function say(text, title) {
  await api.action.setBadgeText({ text });
  await api.action.setTitle({ title });
  setTimeout(() => api.action.setBadgeText({ text: "" }), 8000);
}

api.downloads.onCreated.addListener(async (item) => {
  const url = item.finalUrl || item.url;
  const menu = fromMenu.delete(url);
  const skip = skipNext;
  skipNext = false;
  if (!handsOver(item, await settings(), { skip, fromMenu: menu })) return;
  try {
    await api.downloads.pause(item.id);
  } catch (_) {
    return;   // finished already (a small file): nothing to hand over
  }
  try {
    const cookies = await api.cookies.getAll({ url });
    const reply = await api.runtime.sendNativeMessage(host, message(item, cookies, navigator.userAgent));
    if (!reply || !reply.ok) throw new Error(reply && reply.error ? reply.error : "no answer from Ferry");
    await api.downloads.cancel(item.id);
    await api.downloads.erase({ id: item.id });
    await say("↓", `Ferry took the download (task ${reply.task}): see ferry view`);
  } catch (e) {
    await api.downloads.resume(item.id).catch(() => {});
    await say("!", `Ferry did not take it (${e.message}); the browser keeps the download`);
  }
});
