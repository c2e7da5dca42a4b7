/** swagger-ui-dist ships no types; the docs route uses only this. */
declare module "swagger-ui-dist/absolute-path.js" {
  /** Absolute path of the installed package's folder (its bundle and stylesheet are there). */
  export default function getAbsoluteFSPath(): string;
}
