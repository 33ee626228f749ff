// useRefetchableFragment: one product refetched by its nodeId.
import { graphql } from "react-relay";

export const fragment = graphql`
  fragment ProductRow_product on Product
  @refetchable(queryName: "ProductRowRefetchQuery") {
    id
    name
    sku
    status
    certificate {
      hash
      keyId
    }
  }
`;
