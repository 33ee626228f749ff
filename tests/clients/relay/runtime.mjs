// relay-runtime against a real gateway, with the artifacts relay-compiler
// wrote (GENERATED) and their persisted ids sent as documentId: BrandPageQuery
// loads a brand's first page of products, then BrandProductsPaginationQuery
// (refetched through node(id: $nodeId)) the next. With DATA_ID=nodeId the
// environment keys records by nodeId, as README's Relay section says, and the
// second page joins the first; without, it lands on another record.
// Prints one JSON line: {"first": n, "merged": [ids...]}.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const {
  ConnectionHandler, Environment, Network, RecordSource, Store, commitLocalUpdate, fetchQuery,
} = require("relay-runtime");

const { GATEWAY_URL, API_KEY, BRAND_ID, GENERATED, DATA_ID } = process.env;
const artifact = (name) => require(path.join(GENERATED, `${name}.graphql.js`));

async function fetchFn(params, variables) {
  const response = await fetch(`${GATEWAY_URL}/graphql`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/graphql-response+json, application/json",
      Authorization: `Bearer ${API_KEY}`,
    },
    body: JSON.stringify({ documentId: params.id, variables }),
  });
  return response.json();
}

const environment = new Environment({
  network: Network.create(fetchFn),
  store: new Store(new RecordSource()),
  ...(DATA_ID === "nodeId" ? { getDataID: (value) => value.nodeId ?? value.id } : {}),
});

function brandConnection() {
  let found = null;
  commitLocalUpdate(environment, (store) => {
    const brand = store.getRoot().getLinkedRecord("brand", { id: BRAND_ID });
    const products = ConnectionHandler.getConnection(brand, "BrandProducts_products");
    found = {
      nodeId: brand.getValue("nodeId"),
      cursor: products.getLinkedRecord("pageInfo").getValue("endCursor"),
      ids: products.getLinkedRecords("edges").map((edge) => edge.getLinkedRecord("node").getValue("id")),
    };
  });
  return found;
}

await fetchQuery(environment, artifact("BrandPageQuery"), { brandId: BRAND_ID }).toPromise();
const first = brandConnection();
const next = { nodeId: first.nodeId, count: 10, cursor: first.cursor };
await fetchQuery(environment, artifact("BrandProductsPaginationQuery"), next).toPromise();
console.log(JSON.stringify({ first: first.ids.length, merged: brandConnection().ids }));
