#!/usr/bin/env node
// The one file that runs both ways. Installed from the package, there is no src/ (the tarball
// ships dist/, since Node does not strip types under node_modules). In the repository, the
// TypeScript sources run as they are, and the client they import must be its sources too: the
// "development" condition of its package.json `exports`, added here to every resolution.
import { existsSync } from "node:fs";
import { registerHooks } from "node:module";

const source = new URL("../src/main.ts", import.meta.url);
let entry = new URL("../dist/src/main.js", import.meta.url);
if (existsSync(source)) {
  registerHooks({
    resolve: (specifier, context, next) => next(specifier, { ...context, conditions: [...context.conditions, "development"] }),
  });
  entry = source;
}
const { main } = await import(entry.href);

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
});
