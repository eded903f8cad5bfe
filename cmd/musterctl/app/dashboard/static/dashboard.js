// Live updates: the server pushes the page's body, rendered, as the event "fleet" at every
// change on the hub. The browser reconnects by itself when the stream breaks.
"use strict";
(function () {
  const body = document.body;
  const fleet = document.getElementById("fleet");
  const events = new EventSource("events");
  events.addEventListener("fleet", function (e) {
    fleet.innerHTML = e.data;
    body.dataset.live = "connected";
  });
  events.onerror = function () {
    body.dataset.live = "reconnecting";
  };
})();
