// Next's ambient types (CSS modules, images). next-env.d.ts is generated and git-ignored, so a fresh
// clone typechecks from this file instead.
/// <reference types="next" />
/// <reference types="next/image-types/global" />
