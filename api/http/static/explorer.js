// Starts GraphiQL with proofgate's example tabs. The settings come from the
// page as JSON (see proofgate/api/explorer.py), so no script runs inline.
(function () {
  "use strict";

  var config = JSON.parse(document.getElementById("explorer-config").textContent);
  var endpoint = new URL(config.endpoint, window.location.href);
  var socket = new URL(endpoint.href);
  socket.protocol = endpoint.protocol === "https:" ? "wss:" : "ws:";

  // Headers typed in the editor go with every request, and as the
  // connection_init payload of subscriptions.
  var fetcher = GraphiQL.createFetcher({
    url: endpoint.href,
    subscriptionUrl: socket.href,
  });

  var root = ReactDOM.createRoot(document.getElementById("graphiql"));
  root.render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      defaultTabs: config.tabs,
      defaultEditorToolsVisibility: true,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: config.persistHeaders,
      showPersistHeadersSettings: true,
      inputValueDeprecation: true,
      storage: GraphiQL.createLocalStorage({ namespace: config.storageNamespace }),
    })
  );
})();
