package org.evb.standin;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * One STOMP frame, and the codec the original client got from Spring 5.1 (StompEncoder /
 * StompDecoder): outbound header names and values escaped STOMP-1.2 style in every frame but
 * CONNECT and CONNECTED, `content-length` appended to SEND (the only body frame a client writes),
 * inbound headers unescaped, a body read by `content-length` when given, else up to the NUL.
 */
final class StompFrame {
    private static final Set<String> COMMANDS = Set.of(
            "CONNECT", "STOMP", "CONNECTED", "SEND", "SUBSCRIBE", "UNSUBSCRIBE", "ACK", "NACK", "BEGIN", "COMMIT",
            "ABORT", "DISCONNECT", "MESSAGE", "RECEIPT", "ERROR");
    private static final Set<String> WITH_CONTENT_LENGTH = Set.of("SEND", "MESSAGE", "ERROR");

    final String command;
    /** Name/value pairs in wire order, unescaped; a name may repeat. */
    final List<String[]> headers;
    final byte[] body;

    StompFrame(String command, List<String[]> headers, byte[] body) {
        this.command = command;
        this.headers = headers;
        this.body = body;
    }

    /** The first value of a header (Spring's getFirstNativeHeader), or null. */
    String header(String name) {
        for (String[] h : headers) {
            if (h[0].equals(name)) return h[1];
        }
        return null;
    }

    String bodyText() {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** Thrown for a frame the decoder refuses (Spring: StompConversionException). */
    static final class FormatException extends Exception {
        FormatException(String message) {
            super(message);
        }
    }

    // ---- encoding -------------------------------------------------------------------------

    static String encode(String command, List<String[]> headers, String body) {
        byte[] payload = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
        boolean escape = !command.equals("CONNECT") && !command.equals("CONNECTED");
        boolean withLength = WITH_CONTENT_LENGTH.contains(command);
        StringBuilder out = new StringBuilder();
        out.append(command).append('\n');
        for (String[] h : headers) {
            if (withLength && h[0].equals("content-length")) continue;
            out.append(escape ? escape(h[0]) : h[0]).append(':').append(escape ? escape(h[1]) : h[1]).append('\n');
        }
        if (withLength) out.append("content-length:").append(payload.length).append('\n');
        out.append('\n');
        if (body != null) out.append(body);
        out.append('\0');
        return out.toString();
    }

    private static String escape(String s) {
        StringBuilder b = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            String rep = switch (c) {
                case '\\' -> "\\\\";
                case ':' -> "\\c";
                case '\n' -> "\\n";
                case '\r' -> "\\r";
                default -> null;
            };
            if (rep != null && b == null) b = new StringBuilder(s.substring(0, i));
            if (b != null) {
                if (rep != null) b.append(rep);
                else b.append(c);
            }
        }
        return b == null ? s : b.toString();
    }

    // ---- decoding -------------------------------------------------------------------------

    /** Every frame of one WebSocket text message; EOL-only heart-beats are skipped. */
    static List<StompFrame> decodeAll(String message) throws FormatException {
        byte[] in = message.getBytes(StandardCharsets.UTF_8);
        List<StompFrame> frames = new ArrayList<>();
        int[] pos = {0};
        while (true) {
            // heart-beats: bare EOLs between frames
            while (pos[0] < in.length && (in[pos[0]] == '\n' || (in[pos[0]] == '\r' && pos[0] + 1 < in.length && in[pos[0] + 1] == '\n'))) {
                pos[0] += in[pos[0]] == '\r' ? 2 : 1;
            }
            if (pos[0] >= in.length) return frames;
            frames.add(decodeOne(in, pos));
        }
    }

    private static StompFrame decodeOne(byte[] in, int[] pos) throws FormatException {
        String command = readLine(in, pos);
        if (command == null) throw new FormatException("incomplete frame: no end of the command line");
        if (!COMMANDS.contains(command)) throw new FormatException("unknown command " + command);
        List<String[]> headers = new ArrayList<>();
        while (true) {
            String line = readLine(in, pos);
            if (line == null) throw new FormatException("incomplete frame: headers not terminated");
            if (line.isEmpty()) break;
            int colon = line.indexOf(':');
            if (colon <= 0) throw new FormatException("illegal header line: " + line);
            headers.add(new String[] {unescape(line.substring(0, colon)), unescape(line.substring(colon + 1))});
        }
        String length = null;
        for (String[] h : headers) {
            if (h[0].equals("content-length")) {
                length = h[1];
                break;
            }
        }
        byte[] body;
        if (length != null) {
            int n;
            try {
                n = Integer.parseInt(length.trim());
            } catch (NumberFormatException e) {
                throw new FormatException("bad content-length " + length);
            }
            if (n < 0 || pos[0] + n >= in.length || in[pos[0] + n] != 0) {
                throw new FormatException("body does not end with NUL at content-length " + n);
            }
            body = java.util.Arrays.copyOfRange(in, pos[0], pos[0] + n);
            pos[0] += n + 1;
        } else {
            int end = pos[0];
            while (end < in.length && in[end] != 0) end++;
            if (end >= in.length) throw new FormatException("incomplete frame: no NUL");
            body = java.util.Arrays.copyOfRange(in, pos[0], end);
            pos[0] = end + 1;
        }
        return new StompFrame(command, headers, body);
    }

    /** One line without its EOL (LF or CRLF); null when the input ends first. */
    private static String readLine(byte[] in, int[] pos) throws FormatException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int i = pos[0]; i < in.length; i++) {
            if (in[i] == '\n') {
                pos[0] = i + 1;
                return line.toString(StandardCharsets.UTF_8);
            }
            if (in[i] == '\r') {
                if (i + 1 < in.length && in[i + 1] == '\n') {
                    pos[0] = i + 2;
                    return line.toString(StandardCharsets.UTF_8);
                }
                throw new FormatException("bare CR in a header line");
            }
            line.write(in[i]);
        }
        return null;
    }

    private static String unescape(String s) throws FormatException {
        if (s.indexOf('\\') < 0) return s;
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\') {
                b.append(c);
                continue;
            }
            if (i + 1 >= s.length()) throw new FormatException("bad escape at the end of " + s);
            char n = s.charAt(++i);
            switch (n) {
                case 'c' -> b.append(':');
                case 'n' -> b.append('\n');
                case 'r' -> b.append('\r');
                case '\\' -> b.append('\\');
                default -> throw new FormatException("bad escape \\" + n + " in " + s);
            }
        }
        return b.toString();
    }
}
