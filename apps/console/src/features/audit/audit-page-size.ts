/** Audit events per page (server prefetch and client must agree on the query key). */
export const AUDIT_PAGE = 50;
