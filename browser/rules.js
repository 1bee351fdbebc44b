// Which downloads go to Ferry: decided from the download and the user's choice alone, with no
// browser API, so it is tested as it is (Tests/Support/extension-rules.js under gjs).

/** The user's choice, as the options page stores it. */
export const defaults = Object.freeze({
  mode: "all",            // "all" | "larger" | "types" | "menu" (only "Download with Ferry")
  minimumBytes: 10 * 1000 * 1000,
  types: ["iso", "zip", "tar.gz", "mp4", "mkv", "pdf"],
});

/** The file's name as the browser would give it: its path's last part, else the URL's. */
export function fileName(item) {
  const given = (item.filename || "").split(/[\\/]/).pop();
  if (given) return given;
  // By hand, not with URL: the same code runs under gjs, which has no URL class.
  const path = (item.finalUrl || item.url || "").split(/[?#]/)[0].replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "");
  const last = path.split("/").pop() || "";
  try {
    return decodeURIComponent(last);
  } catch (_) {
    return last;
  }
}

/**
 * Whether a download the browser started goes to Ferry. `item`: the browser's DownloadItem;
 * `skip`: the user held the modifier for this one; `fromMenu`: it came from the context menu.
 */
export function handsOver(item, settings, { skip = false, fromMenu = false } = {}) {
  if (skip) return false;
  const url = item.finalUrl || item.url || "";
  if (!/^https?:/i.test(url)) return false;   // blob:, data:, file: stay with the browser
  if (fromMenu) return true;
  const s = { ...defaults, ...settings };
  switch (s.mode) {
    case "all": return true;
    case "larger": return (item.totalBytes || item.fileSize || 0) >= s.minimumBytes;
    case "types": {
      const name = fileName(item).toLowerCase();
      const mime = (item.mime || "").toLowerCase();
      return s.types.some((t) => {
        const type = String(t).trim().toLowerCase().replace(/^\./, "");
        return type && (name.endsWith("." + type) || mime === type || (type.includes("/") && mime.startsWith(type)));
      });
    }
    default: return false;   // "menu": only what the context menu hands over
  }
}

/** The message the native host takes for a download (what is sent, and nothing else). */
export function message(item, cookies, userAgent) {
  return {
    type: "download",
    url: item.finalUrl || item.url,
    referrer: item.referrer || "",
    cookies: cookies.map((c) => `${c.name}=${c.value}`).join("; "),
    userAgent,
    filename: fileName(item),
  };
}
