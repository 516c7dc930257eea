import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["packages/*/src/**/*.test.ts", "services/*/src/**/*.test.ts", "test/**/*.test.ts", "bench/**/*.test.ts"],
          exclude: ["**/*.int.test.ts", "**/node_modules/**"],
        },
      },
      {
        test: {
          name: "integration",
          include: ["packages/*/src/**/*.int.test.ts", "services/*/src/**/*.int.test.ts", "test/**/*.int.test.ts"],
          globalSetup: ["./test/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // Two cores: suites start their own services, so run at most two files at once.
          maxWorkers: 2,
          execArgv: ["--disable-warning=TimeoutNegativeWarning"],
        },
      },
    ],
  },
});
