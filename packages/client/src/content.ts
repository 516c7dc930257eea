/**
 * An event's `content` travels as Base64 (getEvent's reply, a callback's `event`), as the
 * original broker's byte[] did. These turn it back into what was published, with the platform's
 * own decoders only, so the client stays dependency-free.
 */

type Content = { content: string } | string;

/**
 * The bytes of an event's Base64 `content` (or of the Base64 string itself): exactly what was
 * published, for binary payloads. Throws the platform's `InvalidCharacterError` on text that is
 * not Base64, rather than returning some other bytes.
 */
export function decodeContentBytes(content: Content): Uint8Array {
  const binary = atob(typeof content === "string" ? content : content.content);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * The text of an event's Base64 `content` (or of the Base64 string itself), read as UTF-8, the
 * encoding the broker stores published text in. Bytes that are not UTF-8 become U+FFFD, so a binary payload never
 * throws here: use decodeContentBytes() for those.
 */
export function decodeContent(content: Content): string {
  return new TextDecoder().decode(decodeContentBytes(content));
}
