// A brand's page: its products, paginated with @connection.
import { graphql } from "react-relay";

export const query = graphql`
  query BrandPageQuery($brandId: ID!) {
    brand(id: $brandId) {
      name
      ...BrandProducts_brand
    }
  }
`;
