package org.evb.standin;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.java_websocket.client.WebSocketClient;
import org.java_websocket.drafts.Draft_6455;
import org.java_websocket.handshake.ServerHandshake;

/**
 * The original Java client's STOMP side (weevent-client 1.6.0, reference protocols.md §5),
 * rewritten from its description: build / publish / subscribe / unSubscribe, MESSAGE routing
 * by `subscription-id`, and the reconnect-and-resubscribe loop. Brand-dependent names use
 * {@code prefix} (`weevent-` for the original).
 */
final class StandInClient implements AutoCloseable {
    static final long WAIT_MS = 10_000;
    static final long RECONNECT_MS = 3_000;
    static final int PING_SECONDS = 30;
    /** The client's code for a STOMP wait that ran out (sdk timeout). */
    static final int TIMEOUT_CODE = 101004;

    record Event(String topic, String eventId, Map<String, String> extensions, String content) {}

    record SendResult(String status, String eventId, String topic, String code, String message) {}

    interface Listener {
        void onEvent(String subscriptionId, Event event);
    }

    static final class BrokerException extends Exception {
        final int code;

        BrokerException(int code, String message) {
            super(message);
            this.code = code;
        }
    }

    /** One subscription this client ever made, kept for resubscribing after a reconnect. */
    private static final class Sub {
        final String destination;
        final Map<String, String> ext;
        final Listener listener;
        volatile String offset;
        /** The SUBSCRIBE `id` on the current connection. */
        volatile String stompId;

        Sub(String destination, String offset, Map<String, String> ext, Listener listener, String stompId) {
            this.destination = destination;
            this.offset = offset;
            this.ext = ext;
            this.listener = listener;
            this.stompId = stompId;
        }
    }

    private final String brokerUrl;
    private final URI stompUri;
    private final String groupId;
    private final String login;
    private final String passcode;
    private final String prefix;
    /** Connection events and reader faults, as JSON-able objects. */
    private final Consumer<Map<String, Object>> observer;
    /** Every subscription ever made, by broker subscription id, in the order made. */
    private final Map<String, Sub> subscriptions = java.util.Collections.synchronizedMap(new LinkedHashMap<>());
    private volatile Connection connection;
    private volatile boolean closed;
    private Thread reconnector;

    private StandInClient(String brokerUrl, String groupId, String login, String passcode, String prefix,
            Consumer<Map<String, Object>> observer) {
        this.brokerUrl = brokerUrl;
        this.stompUri = URI.create(stompUrlOf(brokerUrl));
        this.groupId = groupId == null || groupId.isBlank() ? "1" : groupId;
        this.login = login;
        this.passcode = passcode;
        this.prefix = prefix;
        this.observer = observer;
    }

    /** `http://` → `ws://`, `https://` → `wss://`, plus `/stomp`. */
    static String stompUrlOf(String brokerUrl) {
        String url = brokerUrl;
        if (url.startsWith("https://")) url = "wss://" + url.substring("https://".length());
        else if (url.startsWith("http://")) url = "ws://" + url.substring("http://".length());
        return url + "/stomp";
    }

    URI stompUri() {
        return stompUri;
    }

    /** WebSocket connect, CONNECT, wait for CONNECTED; then validateGroupId when the group is not `1`. */
    static StandInClient build(String brokerUrl, String groupId, String login, String passcode, String prefix,
            Consumer<Map<String, Object>> observer) throws BrokerException, InterruptedException {
        StandInClient client = new StandInClient(brokerUrl, groupId, login, passcode, prefix, observer);
        client.connection = client.open();
        if (!client.groupId.equals("1")) {
            try {
                client.validateGroupId();
            } catch (BrokerException | InterruptedException e) {
                client.close();
                throw e;
            }
        }
        return client;
    }

    private void validateGroupId() throws BrokerException, InterruptedException {
        String url = brokerUrl + "/admin/validateGroupId?groupId=" + URLEncoder.encode(groupId, StandardCharsets.UTF_8);
        HttpResponse<String> res;
        try {
            res = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofMillis(5000)).build()
                    .send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofMillis(5000)).GET().build(),
                            HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
            throw new BrokerException(TIMEOUT_CODE, "validateGroupId: " + e);
        }
        Matcher code = Pattern.compile("\"code\"\\s*:\\s*(-?\\d+)").matcher(res.body());
        if (!code.find()) throw new BrokerException(-1, "validateGroupId: no code in " + res.body());
        int c = Integer.parseInt(code.group(1));
        if (c != 0) {
            Matcher msg = Pattern.compile("\"message\"\\s*:\\s*\"([^\"]*)\"").matcher(res.body());
            throw new BrokerException(c, msg.find() ? msg.group(1) : res.body());
        }
    }

    /** A new WebSocket and a CONNECT answered by CONNECTED, or an exception. */
    private Connection open() throws BrokerException, InterruptedException {
        Connection c = new Connection();
        if (!c.connectBlocking(WAIT_MS, TimeUnit.MILLISECONDS)) {
            c.close();
            throw new BrokerException(TIMEOUT_CODE, "WebSocket connect to " + stompUri + " failed");
        }
        List<String[]> h = new ArrayList<>();
        h.add(new String[] {"version", "1.1"});
        h.add(new String[] {"accept-version", "1.1"});
        h.add(new String[] {"heart-beat", "30,0"});
        if (login != null && !login.isBlank()) h.add(new String[] {"login", login});
        if (passcode != null && !passcode.isBlank()) h.add(new String[] {"passcode", passcode});
        c.send(StompFrame.encode("CONNECT", h, null));
        try {
            c.connected.get(WAIT_MS, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            c.close();
            throw new BrokerException(TIMEOUT_CODE, "no CONNECTED within 10 s: " + e);
        }
        return c;
    }

    // ---- operations ------------------------------------------------------------------------

    SendResult publish(String topic, String content, Map<String, String> extensions) throws InterruptedException {
        if (topic == null || topic.isBlank() || content == null || content.isEmpty()) {
            return new SendResult("ERROR", null, topic, "local", "topic or content is blank");
        }
        Connection c = connection;
        String n = c.nextId();
        List<String[]> h = new ArrayList<>();
        h.add(new String[] {"destination", topic});
        h.add(new String[] {"content-type", "text/plain;charset=UTF-8"});
        h.add(new String[] {"receipt", n});
        h.add(new String[] {"groupId", groupId});
        for (Map.Entry<String, String> e : extensions.entrySet()) h.add(new String[] {e.getKey(), e.getValue()});
        StompFrame reply;
        try {
            reply = c.request(n, StompFrame.encode("SEND", h, content));
        } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
            return new SendResult("TIMEOUT", null, topic, null, String.valueOf(e));
        }
        if (reply.command.equals("RECEIPT")) return new SendResult("SUCCESS", reply.header("eventId"), topic, null, null);
        return new SendResult("ERROR", null, topic, reply.header("code"), reply.header("message"));
    }

    /** SUBSCRIBE; the broker's subscription id (also written into {@code ext}), or the broker's error. */
    String subscribe(String destination, String offset, Map<String, String> ext, Listener listener)
            throws BrokerException, InterruptedException {
        if (destination == null || destination.isBlank() || offset == null || offset.isBlank()) {
            throw new BrokerException(-1, "topic or offset is blank");
        }
        Map<String, String> extCopy = new LinkedHashMap<>(ext);
        Sub sub = new Sub(destination, offset, extCopy, listener, null);
        String id = subscribeOn(connection, sub, ext.get(prefix + "subscriptionId"));
        ext.put(prefix + "subscriptionId", id);
        return id;
    }

    String subscribe(String[] topics, String offset, Map<String, String> ext, Listener listener)
            throws BrokerException, InterruptedException {
        return subscribe(String.join(",", topics), offset, ext, listener);
    }

    private String subscribeOn(Connection c, Sub sub, String continueId) throws BrokerException, InterruptedException {
        String n = c.nextId();
        List<String[]> h = new ArrayList<>();
        h.add(new String[] {"destination", sub.destination});
        h.add(new String[] {"eventId", sub.offset});
        h.add(new String[] {"id", n});
        h.add(new String[] {"groupId", groupId});
        if (continueId != null) h.add(new String[] {prefix + "subscriptionId", continueId});
        for (String name : new String[] {"tag", "ephemeral"}) {
            String v = sub.ext.get(prefix + name);
            if (v != null) h.add(new String[] {prefix + name, v});
        }
        StompFrame reply;
        try {
            reply = c.request(n, StompFrame.encode("SUBSCRIBE", h, null));
        } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
            throw new BrokerException(TIMEOUT_CODE, "no reply to SUBSCRIBE within 10 s: " + e);
        }
        if (!reply.command.equals("RECEIPT")) throw errorOf(reply);
        String id = reply.header("subscription-id");
        if (id == null || id.isEmpty()) throw new BrokerException(-1, "RECEIPT without subscription-id");
        sub.stompId = n;
        subscriptions.put(id, sub);
        return id;
    }

    /** false without I/O when the id is not this client's or the session is down; true on RECEIPT. */
    boolean unSubscribe(String subscriptionId) throws BrokerException, InterruptedException {
        Sub sub = subscriptions.get(subscriptionId);
        Connection c = connection;
        if (sub == null || c == null || !c.isOpen() || !c.connected.isDone()) return false;
        String n = sub.stompId;
        List<String[]> h = new ArrayList<>();
        h.add(new String[] {"simpSubscriptionId", n});
        h.add(new String[] {"subscription", subscriptionId});
        h.add(new String[] {"id", n});
        StompFrame reply;
        try {
            reply = c.request(n, StompFrame.encode("UNSUBSCRIBE", h, null));
        } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
            throw new BrokerException(TIMEOUT_CODE, "no reply to UNSUBSCRIBE within 10 s: " + e);
        }
        if (!reply.command.equals("RECEIPT")) throw errorOf(reply);
        return true;
    }

    private static BrokerException errorOf(StompFrame error) {
        String code = error.header("code");
        int c;
        try {
            c = code == null ? -1 : Integer.parseInt(code);
        } catch (NumberFormatException e) {
            c = -1;
        }
        return new BrokerException(c, error.header("message"));
    }

    @Override
    public void close() {
        closed = true;
        Thread r = reconnector;
        if (r != null) r.interrupt();
        Connection c = connection;
        if (c != null) c.close();
    }

    // ---- connection loss ---------------------------------------------------------------------

    private synchronized void connectionLost(Connection lost, int code, String reason) {
        if (closed || lost != connection || reconnector != null) return;
        observer.accept(Json.obj("step", "closed", "code", code, "reason", reason));
        reconnector = new Thread(this::reconnectLoop, "stand-in-reconnect");
        reconnector.setDaemon(true);
        reconnector.start();
    }

    /** Every 3 s: connect and CONNECT again, then resubscribe every subscription ever made. */
    private void reconnectLoop() {
        int attempt = 0;
        while (!closed) {
            try {
                Thread.sleep(RECONNECT_MS);
                attempt++;
                Connection c;
                try {
                    c = open();
                } catch (BrokerException e) {
                    observer.accept(Json.obj("step", "reconnect-failed", "attempt", attempt, "error", e.getMessage()));
                    continue;
                }
                connection = c;
                observer.accept(Json.obj("step", "reconnected", "attempt", attempt));
                List<Map.Entry<String, Sub>> all;
                synchronized (subscriptions) {
                    all = new ArrayList<>(subscriptions.entrySet());
                }
                for (Map.Entry<String, Sub> e : all) {
                    Sub sub = e.getValue();
                    String offset = sub.offset;
                    try {
                        String id = subscribeOn(c, sub, e.getKey());
                        observer.accept(Json.obj("step", "resubscribed", "subscriptionId", e.getKey(), "newId", id,
                                "eventId", offset, "destination", sub.destination));
                    } catch (BrokerException x) {
                        observer.accept(Json.obj("step", "resubscribe-failed", "subscriptionId", e.getKey(),
                                "eventId", offset, "code", x.code, "message", x.getMessage()));
                    }
                }
                synchronized (this) {
                    reconnector = null;
                    if (c.isClosed()) connectionLost(c, -1, "closed while resubscribing");
                }
                return;
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    // ---- one WebSocket -----------------------------------------------------------------------

    private final class Connection extends WebSocketClient {
        final CompletableFuture<StompFrame> connected = new CompletableFuture<>();
        private final Map<String, CompletableFuture<StompFrame>> pending = new ConcurrentHashMap<>();
        private final AtomicLong sequence = new AtomicLong(1);

        Connection() {
            // Draft 6455, no sub-protocol, no extra handshake headers, 10 s connect timeout.
            super(stompUri, new Draft_6455(), null, (int) WAIT_MS);
            setTcpNoDelay(true);
            setConnectionLostTimeout(PING_SECONDS);
            if (stompUri.getScheme().equals("wss")) setSocketFactory(trustAll().getSocketFactory());
        }

        String nextId() {
            return Long.toString(sequence.getAndIncrement());
        }

        StompFrame request(String n, String frame)
                throws InterruptedException, TimeoutException, java.util.concurrent.ExecutionException {
            CompletableFuture<StompFrame> f = new CompletableFuture<>();
            pending.put(n, f);
            try {
                send(frame);
                return f.get(WAIT_MS, TimeUnit.MILLISECONDS);
            } catch (org.java_websocket.exceptions.WebsocketNotConnectedException e) {
                throw new java.util.concurrent.ExecutionException(e);
            } finally {
                pending.remove(n);
            }
        }

        @Override
        public void onOpen(ServerHandshake handshake) {
            String protocol = handshake.getFieldValue("Sec-WebSocket-Protocol");
            if (protocol != null && !protocol.isEmpty()) {
                observer.accept(Json.obj("step", "fault", "error", "server chose a sub-protocol: " + protocol));
            }
        }

        @Override
        public void onMessage(String message) {
            List<StompFrame> frames;
            try {
                frames = StompFrame.decodeAll(message);
            } catch (StompFrame.FormatException e) {
                observer.accept(Json.obj("step", "fault", "error", "undecodable frame: " + e.getMessage(), "text", message));
                return;
            }
            for (StompFrame f : frames) handle(f);
        }

        private void handle(StompFrame f) {
            switch (f.command) {
                case "CONNECTED" -> connected.complete(f);
                case "RECEIPT", "ERROR" -> {
                    String id = f.header("receipt-id");
                    if (id == null) {
                        // The original looked the null id up in a concurrent map: an exception in its reader.
                        if (f.command.equals("RECEIPT")) {
                            observer.accept(Json.obj("step", "fault", "error", "RECEIPT without receipt-id"));
                        }
                        return;
                    }
                    CompletableFuture<StompFrame> waiting = pending.get(id);
                    if (waiting == null) {
                        observer.accept(Json.obj("step", "fault", "error", f.command + " with unknown receipt-id " + id,
                                "message", f.header("message")));
                        return;
                    }
                    waiting.complete(f);
                }
                case "MESSAGE" -> {
                    String id = f.header("subscription-id");
                    Sub sub = id == null ? null : subscriptions.get(id);
                    if (sub == null) {
                        observer.accept(Json.obj("step", "dropped-message", "subscriptionId", id, "eventId", f.header("eventId")));
                        return;
                    }
                    Map<String, String> ext = new LinkedHashMap<>();
                    for (String[] h : f.headers) {
                        if (h[0].startsWith(prefix) && !ext.containsKey(h[0])) ext.put(h[0], h[1]);
                    }
                    String eventId = f.header("eventId");
                    sub.offset = eventId;
                    sub.listener.onEvent(id, new Event(f.header("destination"), eventId, ext, f.bodyText()));
                }
                default -> observer.accept(Json.obj("step", "fault", "error", "unexpected frame " + f.command));
            }
        }

        @Override
        public void onClose(int code, String reason, boolean remote) {
            connected.completeExceptionally(new IllegalStateException("closed " + code));
            for (CompletableFuture<StompFrame> f : pending.values()) f.completeExceptionally(new IllegalStateException("closed " + code));
            connectionLost(this, code, reason);
        }

        @Override
        public void onError(Exception ex) {
            // Connection failures also reach onClose; nothing else to do here.
        }
    }

    private static SSLContext trustAll() {
        try {
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, new TrustManager[] {new X509TrustManager() {
                public void checkClientTrusted(X509Certificate[] chain, String authType) {}

                public void checkServerTrusted(X509Certificate[] chain, String authType) {}

                public X509Certificate[] getAcceptedIssuers() {
                    return new X509Certificate[0];
                }
            }}, null);
            return ctx;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
