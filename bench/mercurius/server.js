'use strict'
// Fastify + Mercurius with graphql-jit: the Node baseline of bench/api.py.
// The same field names, nesting and data as bench/_bare.py (objects built once
// at start-up, each product's brand through a per-request batched loader), served
// the way Mercurius's documentation recommends for speed: `jit: 1` compiles a
// query with graphql-jit after its first run. `node server.js PORT`.
const crypto = require('node:crypto')
const Fastify = require('fastify')
const mercurius = require('mercurius')

const PAGE_SIZE = 50

const schema = `
  enum ProductStatus { ACTIVE TRANSFERRED RECALLED FLAGGED }
  type Certificate { hash: String! signature: String! keyId: String! algorithm: String! chainHead: String! }
  type PageInfo { hasNextPage: Boolean! endCursor: String }
  type Edge { cursor: String! node: Product! }
  type ProductConnection { edges: [Edge!]! pageInfo: PageInfo! }
  type Brand {
    id: ID!
    name: String!
    domain: String!
    products(first: Int, after: String): ProductConnection!
  }
  type Product {
    id: ID!
    name: String!
    sku: String
    status: ProductStatus!
    certificate: Certificate!
    brand: Brand!
  }
  type Viewer { role: String! brandId: ID }
  type Query {
    brand(id: ID!): Brand
    viewer: Viewer!
  }
`

function product (brand, index) {
  const digest = crypto.createHash('sha256').update(`product ${index}`).digest('hex')
  return {
    id: `01BENCHPRODUCT${String(index).padStart(12, '0')}`,
    name: `Product ${index}`,
    sku: `SKU-${String(index).padStart(5, '0')}`,
    status: 'ACTIVE',
    certificate: {
      hash: digest,
      signature: 's'.repeat(86),
      keyId: 'k'.repeat(16),
      algorithm: 'Ed25519',
      chainHead: digest
    },
    brandId: brand.id
  }
}

const BRAND = { id: '01BENCHBRAND00000000000000', name: 'Bench', domain: 'bench.example' }
const PRODUCTS = Array.from({ length: PAGE_SIZE }, (_, i) => product(BRAND, i))
const cursor = (i) => `cursor-${String(i).padStart(4, '0')}-` + 'c'.repeat(80)
const CONNECTION = {
  edges: PRODUCTS.map((node, i) => ({ cursor: cursor(i), node })),
  pageInfo: { hasNextPage: true, endCursor: cursor(PAGE_SIZE - 1) }
}

const resolvers = {
  Query: {
    brand: async () => BRAND,
    viewer: () => ({ role: 'ANONYMOUS', brandId: null })
  },
  Brand: {
    products: () => CONNECTION
  }
}

// Mercurius batches each loader per request, like a DataLoader made per request.
const loaders = {
  Product: {
    brand: async (queries) => queries.map(() => BRAND)
  }
}

const app = Fastify({ logger: false })
app.register(mercurius, { schema, resolvers, loaders, jit: 1 })

const port = Number(process.argv[2])
app.listen({ host: '127.0.0.1', port }, (err) => {
  if (err) {
    console.error(err)
    process.exit(1)
  }
  console.log(`mercurius listening on 127.0.0.1:${port}`)
})
