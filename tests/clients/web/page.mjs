// The clients a web app uses, bundled by esbuild for a page served on another
// origin than the gateway's (tests/api/http/test_browser_clients.py):
// urql with its default exchanges (a query, and a subscription over
// fetchSubscriptions), Apollo Client's GraphQLWsLink over graphql-ws, and
// graphql-sse resuming a cut stream with Last-Event-ID. Each records what it
// got in window.state; window.ready says the page has loaded.
import { ApolloClient, InMemoryCache, gql } from "@apollo/client";
import { GraphQLWsLink } from "@apollo/client/link/subscriptions";
import { Client, cacheExchange, fetchExchange } from "@urql/core";
import { createClient as createSSEClient } from "graphql-sse";
import { createClient as createWSClient } from "graphql-ws";

const ALERTS = `subscription ($brand: ID!, $after: String) {
  threatAlerts(brandId: $brand, after: $after) { id type cursor }
}`;
const BRAND = "query ($id: ID!) { brand(id: $id) { id name } }";

const state = { errors: [] };
window.state = state;

function failed(where) {
  return (error) => state.errors.push(`${where}: ${error?.message ?? JSON.stringify(error)}`);
}

// urql as it comes: default exchanges, GET for a query, subscriptions over fetch.
function urql({ url, key, brand, after }) {
  const client = new Client({
    url,
    exchanges: [cacheExchange, fetchExchange],
    fetchSubscriptions: true,
    fetchOptions: () => ({ headers: { Authorization: `Bearer ${key}` } }),
  });
  state.urql = { alerts: [] };
  client
    .query(BRAND, { id: brand })
    .toPromise()
    .then((result) => {
      state.urql.query = { data: result.data ?? null, error: result.error?.message ?? null };
    }, failed("urql query"));
  client.subscription(ALERTS, { brand, after }).subscribe((result) => {
    if (result.error) failed("urql subscription")(result.error);
    else state.urql.alerts.push(result.data.threatAlerts);
  });
}

// Apollo Client 4 with GraphQLWsLink: graphql-transport-ws from the page's origin.
function apolloOverWebSocket({ wsUrl, key, brand, after }) {
  state.apollo = { alerts: [], connected: false };
  const client = new ApolloClient({
    link: new GraphQLWsLink(
      createWSClient({
        url: wsUrl,
        connectionParams: { authorization: `Bearer ${key}` },
        on: { connected: () => { state.apollo.connected = true; } },
      }),
    ),
    cache: new InMemoryCache(),
  });
  client.subscribe({ query: gql(ALERTS), variables: { brand, after } }).subscribe({
    next: (result) => {
      if (result.error) failed("apollo")(result.error);
      else state.apollo.alerts.push(result.data.threatAlerts);
    },
    error: failed("apollo"),
  });
}

// graphql-sse in distinct connections mode; the test cuts the connection
// (a proxy between page and gateway) and the client comes back on its own,
// sending the last alert's cursor as Last-Event-ID (its parser drops SSE ids).
function sseResuming({ url, key, brand, after }) {
  let lastCursor = null;
  state.sse = { ids: [], reconnects: 0, done: false };
  const client = createSSEClient({
    url,
    headers: () => ({
      Authorization: `Bearer ${key}`,
      ...(lastCursor ? { "Last-Event-ID": lastCursor } : {}),
    }),
    retryAttempts: 3,
    retry: async () => {},
    on: { connecting: (reconnecting) => { if (reconnecting) state.sse.reconnects += 1; } },
  });
  client.subscribe(
    { query: ALERTS, variables: { brand, after } },
    {
      next: (result) => {
        if (result.errors) return failed("sse")({ message: JSON.stringify(result.errors) });
        lastCursor = result.data.threatAlerts.cursor;
        state.sse.ids.push(result.data.threatAlerts.id);
      },
      error: failed("sse"),
      complete: () => { state.sse.done = true; },
    },
  );
}

window.clients = { urql, apolloOverWebSocket, sseResuming };
window.ready = true;
