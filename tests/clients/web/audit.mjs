// graphql-http's audit of a GraphQL-over-HTTP server, against a real gateway.
// tests/api/http/test_graphql_http_audit.py. Prints one JSON line: {"ok": n, "warn": [...], "error": [...]}.
import { auditServer } from "graphql-http";

const results = await auditServer({ url: `${process.env.GATEWAY_URL}/graphql` });
const report = { ok: 0, warn: [], error: [] };
for (const result of results) {
  if (result.status === "ok") report.ok += 1;
  else report[result.status].push({ id: result.id, name: result.name, reason: result.reason });
}
console.log(JSON.stringify(report));
