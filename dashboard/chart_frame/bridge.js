/* calib's figure frame: draws one Plotly figure sent by dashboard/chart.py.

   Streamlit (custom components, API version 1) shows this page in an iframe of its own
   origin and posts it the figure's JSON as a "streamlit:render" message; the page answers
   with its height. Plotly's basic bundle (scatter and bar traces, about a quarter of the
   full plotly.js that st.plotly_chart loads) is fetched while the first message is on its
   way (index.html preloads it, at an address with its version: the server lets browsers
   keep it, and the pages prefetch it before any frame exists). No HTML of the figure's
   text is ever written here: Plotly draws it as SVG text. */
(function () {
  "use strict";
  var pending = null;      // the latest render arguments not yet drawn
  var drawing = false;
  var node = document.getElementById("figure");

  function send(type, extra) {
    var message = { isStreamlitMessage: true, type: type };
    for (var k in extra) { message[k] = extra[k]; }
    window.parent.postMessage(message, "*");
  }

  function reportHeight() {
    send("streamlit:setFrameHeight", { height: Math.ceil(document.documentElement.scrollHeight) });
  }

  // Streamlit's dark theme: the figure's white paper and dark text would glare; take the
  // theme's colours instead (a light theme keeps the figure as built, as in the HTML report)
  function themed(layout, theme) {
    if (!theme || theme.base !== "dark") { return layout; }
    var grid = "rgba(250, 250, 250, 0.16)";
    layout.paper_bgcolor = theme.backgroundColor;
    layout.plot_bgcolor = theme.backgroundColor;
    layout.font = Object.assign({}, layout.font, { color: theme.textColor });
    // every axis, the subplots' too (xaxis2, yaxis3...)
    Object.keys(layout).concat(["xaxis", "yaxis"]).forEach(function (name) {
      if (!/^[xy]axis\d*$/.test(name)) { return; }
      layout[name] = Object.assign({}, layout[name], { gridcolor: grid, zerolinecolor: grid, linecolor: grid });
    });
    return layout;
  }

  function failed(why) {
    drawing = false;
    node.textContent = "This figure could not be drawn (" + why + ").";
    reportHeight();
  }

  function draw() {
    if (!pending || drawing || !window.Plotly) { return; }
    var args = pending;
    pending = null;
    drawing = true;
    var figure;
    try {
      figure = JSON.parse(args.spec);
    } catch (e) {
      failed("its data did not read");
      return;
    }
    var layout = themed(figure.layout || {}, args.theme);
    var config = Object.assign({ responsive: true }, args.config || {});
    window.Plotly.react(node, figure.data || [], layout, config).then(function () {
      drawing = false;
      reportHeight();
      draw();  // a newer figure arrived while this one was drawn
    }, function () { failed("Plotly refused it"); });
  }

  window.addEventListener("message", function (event) {
    if (event.source !== window.parent || !event.data || event.data.type !== "streamlit:render") { return; }
    pending = { spec: event.data.args.spec, config: event.data.args.config, theme: event.data.theme };
    draw();
  });
  window.addEventListener("resize", reportHeight);

  var plotly = document.createElement("script");
  plotly.src = document.getElementById("plotly-js").href;  // the preloaded, versioned address
  plotly.onload = draw;
  plotly.onerror = function () { failed("plotly.js did not load"); };
  document.head.appendChild(plotly);
  send("streamlit:componentReady", { apiVersion: 1 });
})();
