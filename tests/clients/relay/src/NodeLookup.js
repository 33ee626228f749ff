// Any object by its global id, as a router's loader would fetch it.
import { graphql } from "react-relay";

export const query = graphql`
  query NodeLookupQuery($id: ID!) {
    node(id: $id) {
      __typename
      ... on Product {
        ...ProductRow_product @alias
      }
      ... on Brand {
        name
        domain
      }
      ... on ThreatAlert {
        type
        severity
        product {
          name
        }
      }
    }
  }
`;
