import type { BatchDecoder } from "./intake.ts";
import { readFrames, type StompFrame } from "./stomp-frame.ts";

/** A frame, or why the connection's frames cannot be read on (always the last item read). */
export type FrameItem = StompFrame | { malformed: string };

/**
 * The frames of a STOMP connection's text messages, a bounded number per take() (Intake): each
 * message is kept undecoded until its frames are asked for, and read on from where the last take
 * stopped. Frames never span messages (protocols.md 2.1). After a malformed frame nothing more is
 * read: the connection ends.
 */
export class FrameReader implements BatchDecoder<FrameItem> {
  private readonly messages: Buffer[] = [];
  /** Where the first message is read on from. */
  private offset = 0;
  private held = 0;
  private broken = false;

  get buffered(): number {
    return this.held;
  }

  append(bytes: Buffer): void {
    if (this.broken || bytes.length === 0) return;
    this.messages.push(bytes);
    this.held += bytes.length;
  }

  take(max: number): FrameItem[] {
    const out: FrameItem[] = [];
    while (out.length < max && this.messages.length > 0) {
      const message = this.messages[0] as Buffer;
      const run = readFrames(message, this.offset, max - out.length);
      out.push(...run.frames);
      this.held -= run.next - this.offset;
      this.offset = run.next;
      if (run.error !== undefined) {
        out.push({ malformed: run.error });
        this.broken = true;
        this.messages.length = 0;
        this.held = 0;
        this.offset = 0;
      } else if (run.next >= message.length) {
        this.messages.shift();
        this.offset = 0;
      }
    }
    return out;
  }
}
