// Shift held on a link: that download stays with the browser (said to the background script).
document.addEventListener("click", (e) => {
  if (e.shiftKey && e.target instanceof Element && e.target.closest("a[href]")) {
    (globalThis.browser ?? globalThis.chrome).runtime.sendMessage({ skipFerry: true });
  }
}, true);
