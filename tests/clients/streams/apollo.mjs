// Apollo Client (HttpLink, no WebSocket link) against a real gateway:
// a threatAlerts subscription over multipart HTTP and a query with @defer.
// Prints one JSON line: {"alert": {...}, "emissions": [...]}.
import { ApolloClient, HttpLink, InMemoryCache, gql } from "@apollo/client/core/index.js";

const { GATEWAY_URL, API_KEY, BRAND_ID, AFTER } = process.env;
const client = new ApolloClient({
  link: new HttpLink({ uri: `${GATEWAY_URL}/graphql`, headers: { Authorization: `Bearer ${API_KEY}` } }),
  cache: new InMemoryCache(),
});

const SUBSCRIBE = gql`
  subscription ($brand: ID!, $after: String) {
    threatAlerts(brandId: $brand, after: $after) { id type cursor }
  }
`;
const DEFERRED = gql`
  query ($id: ID!) {
    brand(id: $id) { id name ... @defer { stats { threatCount } } }
  }
`;

function firstAlert() {
  return new Promise((resolve, reject) => {
    const subscription = client
      .subscribe({ query: SUBSCRIBE, variables: { brand: BRAND_ID, after: AFTER } })
      .subscribe({
        next: (result) => {
          subscription.unsubscribe();
          if (result.errors) reject(new Error(JSON.stringify(result.errors)));
          else resolve(result.data.threatAlerts);
        },
        error: reject,
      });
    console.log(JSON.stringify({ subscribed: true }));
  });
}

function deferredQuery() {
  // Every result Apollo Client gives the application, in order: the initial
  // part (no stats yet), then the same query with the deferred stats merged.
  return new Promise((resolve, reject) => {
    const emissions = [];
    const subscription = client
      .watchQuery({ query: DEFERRED, variables: { id: BRAND_ID }, fetchPolicy: "network-only" })
      .subscribe({
        next: (result) => {
          emissions.push({ data: result.data, loading: result.loading });
          if (result.data?.brand?.stats) {
            subscription.unsubscribe();
            resolve(emissions);
          }
        },
        error: reject,
      });
  });
}

const timeout = setTimeout(() => {
  console.error("timed out");
  process.exit(2);
}, 15000);
const alert = await firstAlert();
const emissions = await deferredQuery();
clearTimeout(timeout);
console.log(JSON.stringify({ alert, emissions }));
process.exit(0);
