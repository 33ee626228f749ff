// usePaginationFragment: refetched through node(id:) with the brand's nodeId.
import { graphql } from "react-relay";

export const fragment = graphql`
  fragment BrandProducts_brand on Brand
  @refetchable(queryName: "BrandProductsPaginationQuery")
  @argumentDefinitions(
    count: { type: "Int", defaultValue: 10 }
    cursor: { type: "String" }
  ) {
    name
    products(first: $count, after: $cursor)
      @connection(key: "BrandProducts_products") {
      edges {
        node {
          id
          ...ProductRow_product
        }
      }
    }
  }
`;
