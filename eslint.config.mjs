// Flat ESLint config for the whole monorepo (typescript-eslint, type-aware where it pays).
import js from "@eslint/js";
import reactHooks from "eslint-plugin-react-hooks";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "**/node_modules/**",
      "**/dist/**",
      "**/.next/**",
      "**/.turbo/**",
      "**/next-env.d.ts",
      ".tide/**",
      "e2e/test-results/**",
      "e2e/playwright-report/**",
      "dataplane/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Type-aware rules: each file is linted with the types of the tsconfig that owns it (the
    // project service finds it); config files outside every tsconfig get a default project.
    files: ["**/*.{ts,tsx,mts}"],
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["*.mts", "*.ts"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // A promise nobody awaits loses its error (an unhandled rejection) and its ordering.
      "@typescript-eslint/no-floating-promises": "error",
      // An async function where a void callback is expected (onSubmit, setInterval) does the same.
      "@typescript-eslint/no-misused-promises": "error",
      // A switch over a union must name every member, or say `default` on purpose.
      "@typescript-eslint/switch-exhaustiveness-check": [
        "error",
        { considerDefaultExhaustiveForUnions: true },
      ],
    },
  },
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: "module",
      globals: { process: "readonly", console: "readonly", Buffer: "readonly", URL: "readonly" },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "no-console": "off",
      eqeqeq: ["error", "always"],
      // Workspaces meet through their package exports ("@tide/lab", "@tide/devstack/…"), never by
      // a relative path into another workspace's folder: such an import skips the dependency
      // declaration, the exports and the package's own build.
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(\\.\\./)+(apps|packages|e2e)/",
              message: "Import another workspace through its package name and exports, not by relative path.",
            },
            {
              regex: "^(\\.\\./)+[^./][^/]*/src/",
              message: "Import another workspace through its package name and exports, not its src/ folder.",
            },
            {
              // No package.json by relative path: ../../../package.json from apps/agent/src is the
              // root's, outside every workspace (the agent once read its version so). A path cannot
              // tell the root's or another workspace's from the file's own, so all are refused.
              regex: "^(\\.\\./)+([^/]+/)*package\\.json$",
              message:
                "Do not import a package.json by relative path (the root's or another workspace's): take the value from the build or a package export.",
            },
          ],
        },
      ],
    },
  },
  {
    // The console's components: hooks only at the top level of a component or hook, and effects
    // that name everything they read (a missing dependency is a stale value on screen).
    files: ["apps/console/**/*.{ts,tsx}"],
    plugins: { "react-hooks": reactHooks },
    rules: {
      "react-hooks/rules-of-hooks": "error",
      "react-hooks/exhaustive-deps": "error",
    },
  },
  {
    // Configuration is parsed once per app (env.ts); raw process.env elsewhere is a bug (t3 habit).
    files: [
      "apps/**/*.{ts,tsx}",
      "packages/api/**/*.ts",
      "packages/db/src/**/*.ts",
      "packages/lab/src/**/*.ts",
    ],
    ignores: [
      "**/env.ts",
      "**/*.test.ts",
      "**/*.integration-test.ts",
      "**/*.lab-test.ts",
      "**/bench/**",
      "apps/tidectl/**",
    ],
    rules: {
      "no-restricted-properties": [
        "error",
        { object: "process", property: "env", message: "Read configuration through the app's env.ts." },
      ],
    },
  },
);
