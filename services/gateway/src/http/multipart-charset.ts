/** Longest part header block read; a longer one is malformed. */
const MAX_HEADER_BLOCK_BYTES = 32 * 1024;
const HEADER_END = Buffer.from("\r\n\r\n");

/** The boundary of a multipart Content-Type, or undefined when it names none. */
export function boundaryOf(contentType: string): string | undefined {
  const m = /;\s*boundary\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(contentType);
  return m?.[1] ?? m?.[2] ?? undefined;
}

/** A header line: a field name (an RFC 9110 token) and a colon, or an obsolete folded continuation. */
const HEADER_LINE = /^(?:[!#$%&'*+.^_`|~0-9A-Za-z-]+:|[ \t])/;

/**
 * Whether every line of a part header block (up to its blank line) is a header line. The parser
 * skips a part whose header it cannot read without a word; such a body is refused instead.
 */
function wellFormed(block: string): boolean {
  const lines = block.split("\r\n");
  // The block begins right after the delimiter: its first "line" is the rest of the delimiter's
  // line (transport padding, or "--" at the close), and it ends with the blank line.
  return lines.slice(1, -2).every((line) => HEADER_LINE.test(line));
}

/** A part header block without the `charset` parameter of its Content-Type line. */
function withoutCharset(block: string): string {
  return block.replace(/^content-type:[^\r\n]*/gim, (line) => line.replace(/;\s*charset\s*=\s*("[^"]*"|[^;\s]*)/gi, ""));
}

/**
 * Drops the `charset` parameter from every part's Content-Type on the way to the multipart
 * parser, so that each text part is decoded as UTF-8 whatever it declares, as urlencoded bodies
 * are (the original forced UTF-8 on every request): a part declared `charset=x-bogus` came
 * through empty, one declared latin1 as mojibake. Only part header blocks (from a boundary
 * delimiter to the blank line) are touched; part contents pass as sent. Streaming and linear:
 * at most one delimiter's length, or one header block, is held back. `write` and `end` hand what
 * may pass to `out`, synchronously (the reader time-slices the calls). A header block that is
 * not header lines, or is longer than MAX_HEADER_BLOCK_BYTES, is told to `malformed` once and
 * passes as sent.
 */
export class PartCharsetStripper {
  private readonly delimiter: Buffer;
  // Bytes held back while looking for a delimiter (fewer than its length). Starts with a CRLF:
  // the delimiter is "CRLF--boundary" and the first boundary has none in front; what comes
  // before the first delimiter is preamble, which the parser ignores.
  private held: Buffer = Buffer.from("\r\n");
  private inHeaders = false;
  /** The header block read so far, and its last bytes (where a blank line may have begun). */
  private headerParts: Buffer[] = [];
  private headerBytes = 0;
  private tail: Buffer = Buffer.alloc(0);

  private readonly out: (bytes: Buffer) => void;
  private readonly malformed: (why: string) => void;

  constructor(boundary: string, out: (bytes: Buffer) => void, malformed: (why: string) => void = () => {}) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, "latin1");
    this.out = out;
    this.malformed = malformed;
  }

  write(chunk: Buffer): void {
    let rest = chunk;
    while (rest.length > 0) rest = this.inHeaders ? this.readHeaders(rest) : this.findDelimiter(rest);
  }

  end(): void {
    if (this.held.length > 0) this.push(this.held);
    for (const part of this.headerParts) this.push(part);
    this.held = Buffer.alloc(0);
    this.headerParts = [];
  }

  private push(bytes: Buffer): void {
    if (bytes.length > 0) this.out(bytes);
  }

  /** Passes bytes on up to and including the next delimiter; returns what follows it. */
  private findDelimiter(rest: Buffer): Buffer {
    // Only the first look at a chunk joins it to held bytes; after a match nothing is held.
    const probe = this.held.length > 0 ? Buffer.concat([this.held, rest]) : rest;
    this.held = Buffer.alloc(0);
    const at = probe.indexOf(this.delimiter);
    if (at < 0) {
      const keep = Math.min(probe.length, this.delimiter.length - 1);
      this.push(probe.subarray(0, probe.length - keep));
      this.held = Buffer.from(probe.subarray(probe.length - keep));
      return Buffer.alloc(0);
    }
    const end = at + this.delimiter.length;
    this.push(probe.subarray(0, end));
    this.inHeaders = true;
    return probe.subarray(end);
  }

  /** Gathers a part's header block up to its blank line, passes it on rewritten; returns what follows. */
  private readHeaders(rest: Buffer): Buffer {
    const probe = this.tail.length > 0 ? Buffer.concat([this.tail, rest]) : rest;
    const at = probe.indexOf(HEADER_END);
    if (at < 0) {
      this.headerParts.push(rest);
      this.headerBytes += rest.length;
      this.tail = Buffer.from(probe.subarray(Math.max(0, probe.length - (HEADER_END.length - 1))));
      if (this.headerBytes > MAX_HEADER_BLOCK_BYTES) {
        this.malformed(`a part header is longer than ${MAX_HEADER_BLOCK_BYTES} bytes`);
        for (const part of this.headerParts) this.push(part);
        this.endHeaders();
      }
      return Buffer.alloc(0);
    }
    const end = at + HEADER_END.length - this.tail.length;
    const block = Buffer.concat([...this.headerParts, rest.subarray(0, end)]).toString("latin1");
    if (block.length > MAX_HEADER_BLOCK_BYTES) this.malformed(`a part header is longer than ${MAX_HEADER_BLOCK_BYTES} bytes`);
    else if (!block.startsWith("--") && !wellFormed(block)) this.malformed("malformed part header");
    this.push(Buffer.from(withoutCharset(block), "latin1"));
    this.endHeaders();
    return rest.subarray(end);
  }

  private endHeaders(): void {
    this.inHeaders = false;
    this.headerParts = [];
    this.headerBytes = 0;
    this.tail = Buffer.alloc(0);
  }
}
