/** Versions per page in the versions list (server prefetch and client must agree on the query key). */
export const VERSIONS_PAGE = 50;
