import { readFileSync } from "node:fs";
import { join } from "node:path";

const README = join(import.meta.dirname, "..", "..", "README.md");

/** One fenced code block of README.md, with the heading it sits under. */
export interface Snippet {
  heading: string;
  lang: string;
  code: string;
}

/** Every fenced code block of README.md, in order. */
export function readmeSnippets(): Snippet[] {
  const out: Snippet[] = [];
  let heading = "";
  let open: { lang: string; lines: string[] } | null = null;
  for (const line of readFileSync(README, "utf8").split("\n")) {
    if (open) {
      if (line.startsWith("```")) {
        out.push({ heading, lang: open.lang, code: open.lines.join("\n") });
        open = null;
      } else open.lines.push(line);
    } else if (line.startsWith("```")) open = { lang: line.slice(3).trim(), lines: [] };
    else if (line.startsWith("#")) heading = line.replace(/^#+\s*/, "");
  }
  return out;
}

/** The one block of `lang` under `heading`; throws when there is not exactly one, so a renamed heading fails loudly. */
export function readmeSnippet(heading: string, lang: string): string {
  const found = readmeSnippets().filter((s) => s.heading === heading && s.lang === lang);
  if (found.length !== 1) throw new Error(`README.md: ${found.length} \`\`\`${lang} blocks under "${heading}", expected 1`);
  return (found[0] as Snippet).code;
}
