/** The socket as a session uses it (a `ws` WebSocket in stomp-endpoint.ts; a WebSocket or TCP socket for MQTT). */
export interface StompSocket {
  /** Sends one text message (STOMP) or bytes (MQTT); `done` runs once it has been written out (or failed). */
  send(data: string | Buffer, done: (err?: Error) => void): void;
  /** Bytes accepted by send and not yet written to the network. */
  readonly bufferedAmount: number;
  readonly isOpen: boolean;
  close(code: number, reason: string): void;
  /** Stops reading messages (TCP then holds the client), and starts again. */
  pause(): void;
  resume(): void;
}

/**
 * Writes not yet completed past which there is no room, whatever their bytes: Node hands a
 * socket's buffered writes to the kernel in one writev and runs their callbacks in one turn, so
 * a megabyte of 2-byte PINGRESPs would be half a million of them at once (a loop held for ~80 ms).
 */
export const MAX_PENDING_WRITES = 1_024;

/**
 * Writes a session's frames and says when the socket has room: past `limitBytes` waiting to be
 * written, or MAX_PENDING_WRITES writes, `room()` waits until half of either has gone out (or the
 * socket closes). Deliveries await it before each frame, so a slow reader holds at most about
 * `limitBytes` plus one frame of ours.
 */
export class SocketWriter {
  private readonly socket: StompSocket;
  private readonly limitBytes: number;
  private waiters: (() => void)[] = [];
  private pendingWrites = 0;
  private ended = false;

  constructor(socket: StompSocket, limitBytes: number) {
    this.socket = socket;
    this.limitBytes = limitBytes;
  }

  get open(): boolean {
    return !this.ended && this.socket.isOpen;
  }

  send(data: string | Buffer): void {
    if (!this.open) return;
    this.pendingWrites++;
    this.socket.send(data, () => {
      this.pendingWrites--;
      this.written();
    });
  }

  room(): Promise<void> {
    if (!this.open || (this.socket.bufferedAmount <= this.limitBytes && this.pendingWrites <= MAX_PENDING_WRITES)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Closes after what was sent (the WebSocket close frame follows the queued messages). */
  close(code: number, reason: string): void {
    if (!this.open) return;
    this.ended = true;
    this.socket.close(code, reason);
    this.release();
  }

  /** The socket is gone: whoever waits for room goes on (and finds it closed). */
  closed(): void {
    this.ended = true;
    this.release();
  }

  private written(): void {
    const drained = this.socket.bufferedAmount <= this.limitBytes / 2 && this.pendingWrites <= MAX_PENDING_WRITES / 2;
    if (this.waiters.length > 0 && (!this.open || drained)) this.release();
  }

  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
