import { describe, expect, it } from "vitest";
import { readmeSnippet, readmeSnippets } from "./support/readme-snippets.ts";

// An eventId depends on the ledger it was sealed in (`<topic hash>-<sequence>-<block>`), so a
// command that names one works only on an empty ledger; the snippets take it from the publish
// answer instead. Sample output in comments may show one. Run for real in readme-snippets.int.test.ts.
const EVENT_ID = /\b[0-9a-f]{8}-\d+-\d+\b/;
const withoutComments = (lang: string, code: string) =>
  code
    .split("\n")
    .map((line) => (lang === "ts" ? line.replace(/(^|\s)\/\/.*$/, "") : line.replace(/(^|\s)#.*$/, "")))
    .join("\n");

describe("README snippets", () => {
  it("no command in a README snippet names a literal eventId", () => {
    const code = readmeSnippets().filter((s) => s.lang === "sh" || s.lang === "ts");
    expect(code.length).toBeGreaterThan(5);
    for (const s of code) expect(withoutComments(s.lang, s.code), `${s.heading} (${s.lang})`).not.toMatch(EVENT_ID);
  });

  it("the literal-eventId check sees one in a command but not in a comment", () => {
    expect(withoutComments("sh", 'curl "$B/rest/getEvent?eventId=4cf7f4cc-1-1"')).toMatch(EVENT_ID);
    expect(withoutComments("sh", '# {"eventId":"4cf7f4cc-1-1"}')).not.toMatch(EVENT_ID);
    expect(withoutComments("ts", "console.log(e); // SUCCESS df09ed59-1-1")).not.toMatch(EVENT_ID);
  });

  it("lists subscriptions by the addresses admin/listNodes answers, not a written-down node", () => {
    const callbacks = readmeSnippet("Callbacks", "sh");
    expect(callbacks).toMatch(/NODES=\$\(curl -s "\$M\/admin\/listNodes"/);
    expect(callbacks).toContain('listSubscription?nodeIp=$NODES"');
  });
});
