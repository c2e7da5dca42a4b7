/**
 * The console the API commands talk to when neither --url nor TIDE_URL is given. Kept apart
 * from env.ts so that help text and the table commands never load env.ts's schema library.
 */
export const DEFAULT_URL = "http://localhost:3000";
