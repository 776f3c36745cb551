/* calib's sidebar closer: on a narrow screen, the sidebar closes once a page is chosen.

   Streamlit closes its sidebar after a tap on a page link only when the browser calls
   itself a phone (its user agent); a narrow window with any other (a tablet, a phone asking
   for the desktop site, a small laptop window) kept the sidebar open over most of the page
   after every tap. dashboard/navigation.py draws this frame (0 px high) on every page with
   the page's name; when the name differs from the last one this tab showed (or, before any,
   the address differs from the one the tab was loaded at), and the
   window is at most "narrow" px wide, the sidebar's own collapse button is clicked, as a
   person would. The same page rerun (a widget in the sidebar changed) leaves it open. */
(function () {
  "use strict";

  function send(type, extra) {
    var message = { isStreamlitMessage: true, type: type };
    for (var k in extra) { message[k] = extra[k]; }
    window.parent.postMessage(message, "*");
  }

  function closeSidebar(doc) {
    var bar = doc.querySelector("[data-testid=stSidebar]");
    if (!bar || bar.getAttribute("data-collapsed") !== "false") { return; }
    var button = doc.querySelector("[data-testid=stSidebarCollapseButton] button");
    if (button) { button.click(); }
  }

  // the path the tab was loaded at (page links move it with history.pushState, which leaves
  // the navigation entry as it was)
  function loadedPath(top) {
    var nav = top.performance.getEntriesByType("navigation")[0];
    return nav ? new URL(nav.name).pathname : top.location.pathname;
  }

  window.addEventListener("message", function (event) {
    if (event.source !== window.parent || !event.data || event.data.type !== "streamlit:render") { return; }
    var args = event.data.args || {};
    var page = String(args.page || "");
    try {
      var top = window.parent;
      var last = top.calibSidebarPage;
      top.calibSidebarPage = page;  // a string: nothing of this frame outlives it there
      // no page seen yet: the tab's first page (the address it was loaded at: leave the
      // sidebar as the person set it, since a narrow screen opens with it closed), or a page
      // tapped before this frame first reported (the address moved: close it)
      var first = last === undefined;
      var moved = first ? top.location.pathname !== loadedPath(top) : last !== page;
      if (moved && top.innerWidth <= Number(args.narrow)) {
        closeSidebar(top.document);
      }
    } catch (e) { /* another origin: nothing to close */ }
    send("streamlit:setFrameHeight", { height: 0 });
  });
  send("streamlit:componentReady", { apiVersion: 1 });
})();
