// The public gallery, paginated on Query (no Node needed).
import { graphql } from "react-relay";

export const query = graphql`
  query GalleryQuery {
    ...Gallery_query
  }
`;

export const fragment = graphql`
  fragment Gallery_query on Query
  @refetchable(queryName: "GalleryPaginationQuery")
  @argumentDefinitions(
    count: { type: "Int", defaultValue: 20 }
    cursor: { type: "String" }
  ) {
    explore(first: $count, after: $cursor) @connection(key: "Gallery_explore") {
      edges {
        node {
          name
          brand {
            name
          }
        }
      }
    }
  }
`;
