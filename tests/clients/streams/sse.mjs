// The graphql-sse client (distinct connections mode) against a real gateway,
// through a TCP proxy this script cuts after CUT_AFTER alerts: the client
// reconnects on its own, and its headers() sends the last alert's cursor as
// Last-Event-ID (graphql-sse's parser drops SSE ids, so the application keeps
// the cursor it selected). Prints JSON lines: {"subscribed": true}, {"cut": true},
// then {"ids": [...], "reconnects": n}.
import net from "node:net";
import { createClient } from "graphql-sse";

const { GATEWAY_URL, API_KEY, BRAND_ID, AFTER } = process.env;
const COUNT = Number(process.env.COUNT);
const CUT_AFTER = Number(process.env.CUT_AFTER);
const upstream = new URL(GATEWAY_URL);

const sockets = new Set();
const proxy = net.createServer((client) => {
  const server = net.connect(Number(upstream.port), upstream.hostname);
  for (const [a, b] of [[client, server], [server, client]]) {
    a.pipe(b);
    a.on("error", () => b.destroy());
    a.on("close", () => b.destroy());
    sockets.add(a);
  }
});
await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve));

let lastCursor = null;
let reconnects = 0;
const ids = [];
const sse = createClient({
  url: `http://127.0.0.1:${proxy.address().port}/graphql`,
  headers: () => ({
    Authorization: `Bearer ${API_KEY}`,
    ...(lastCursor ? { "Last-Event-ID": lastCursor } : {}),
  }),
  retryAttempts: 3,
  retry: async () => {},
  on: { connecting: (reconnecting) => { if (reconnecting) reconnects += 1; } },
});

const timeout = setTimeout(() => {
  console.log(JSON.stringify({ ids, reconnects, timedOut: true }));
  process.exit(2);
}, 20000);
const query = `subscription ($brand: ID!, $after: String) {
  threatAlerts(brandId: $brand, after: $after) { id cursor }
}`;
console.log(JSON.stringify({ subscribed: true }));
for await (const result of sse.iterate({ query, variables: { brand: BRAND_ID, after: AFTER } })) {
  if (result.errors) throw new Error(JSON.stringify(result.errors));
  const alert = result.data.threatAlerts;
  ids.push(alert.id);
  lastCursor = alert.cursor;
  if (ids.length === CUT_AFTER) {
    for (const socket of sockets) socket.destroy();
    console.log(JSON.stringify({ cut: true }));
  }
  if (ids.length === COUNT) break;
}
clearTimeout(timeout);
console.log(JSON.stringify({ ids, reconnects }));
sse.dispose();
proxy.close();
process.exit(0);
