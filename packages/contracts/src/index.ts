export * from "./ids";
export * from "./errors";
export * from "./fleet";
export * from "./proxy-state-machine";
export * from "./auth";
export * from "./tables";
export * from "./director-control";
export * from "./redirect-control";
