import { readFileSync } from "node:fs";

/** A PEM file that cannot be read: one line naming the setting, the file and the fix. */
export class PemFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PemFileError";
  }
}

/** Reads the file a setting names; what `what` should be is in the message when it cannot be read. */
export function readPemFile(setting: string, path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === "ENOENT"
        ? "no such file"
        : code === "EACCES"
          ? "cannot be read by this service's user (permission denied); make it readable"
          : code === "EISDIR"
            ? "is a directory"
            : `cannot be read (${code ?? (err as Error).message})`;
    throw new PemFileError(`${setting} (${path}): ${why}; point it at ${what}`);
  }
}
