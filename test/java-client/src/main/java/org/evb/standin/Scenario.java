package org.evb.standin;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Drives {@link StandInClient} through a scripted scenario and prints one JSON line per step
 * (and per MESSAGE and connection event). Exit status 0 only when every step got what the
 * original client's own tests expect.
 *
 * <pre>
 * java -cp … org.evb.standin.Scenario mode=cases  brokerUrl=http://127.0.0.1:8080/weevent-broker
 * java -cp … org.evb.standin.Scenario mode=resume brokerUrl=… count=40 timeoutMs=90000
 * </pre>
 *
 * Other arguments: topic (com.weevent.test), topic2 (com.weevent.test2), topic3 (topic/sub,
 * under the pattern topic/#), prefix (weevent-), groupId (1), login, passcode.
 */
public final class Scenario {
    /** An extension value that every STOMP escape applies to. */
    static final String ESCAPED = "a:b\nc\\d";

    private final Map<String, String> args;
    private final String prefix;
    private boolean ok = true;

    private Scenario(Map<String, String> args) {
        this.args = args;
        this.prefix = args.getOrDefault("prefix", "weevent-");
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>();
        for (String a : argv) {
            int eq = a.indexOf('=');
            if (eq > 0) args.put(a.substring(0, eq), a.substring(eq + 1));
        }
        Scenario s = new Scenario(args);
        try {
            switch (args.getOrDefault("mode", "cases")) {
                case "cases" -> s.cases();
                case "resume" -> s.resume();
                default -> s.fail("args", "unknown mode " + args.get("mode"));
            }
        } catch (Exception e) {
            s.fail("exception", String.valueOf(e));
        }
        s.print(Json.obj("step", "done", "ok", s.ok));
        System.out.flush();
        // Java-WebSocket's threads are not daemons: leave without waiting for them.
        Runtime.getRuntime().halt(s.ok ? 0 : 1);
    }

    private synchronized void print(Map<String, Object> line) {
        if (Boolean.FALSE.equals(line.get("ok"))) ok = false;
        if ("fault".equals(line.get("step")) || "resubscribe-failed".equals(line.get("step"))) ok = false;
        System.out.println(Json.write(line));
        System.out.flush();
    }

    private void fail(String step, String error) {
        print(Json.obj("step", step, "ok", false, "error", error));
    }

    private String arg(String name, String dflt) {
        return args.getOrDefault(name, dflt);
    }

    private StandInClient build(String groupId) throws Exception {
        return StandInClient.build(arg("brokerUrl", "http://localhost:8080/weevent-broker"), groupId,
                arg("login", ""), arg("passcode", ""), prefix, this::print);
    }

    /** Collected MESSAGEs of one subscription, printed as they arrive. */
    private final class Inbox implements StandInClient.Listener {
        final String name;
        final List<StandInClient.Event> events = new ArrayList<>();

        Inbox(String name) {
            this.name = name;
        }

        @Override
        public void onEvent(String subscriptionId, StandInClient.Event e) {
            synchronized (Scenario.this) {
                events.add(e);
                print(Json.obj("step", "message", "subscription", name, "subscriptionId", subscriptionId,
                        "topic", e.topic(), "eventId", e.eventId(), "content", e.content(), "extensions", e.extensions()));
                Scenario.this.notifyAll();
            }
        }

        List<String> ids() {
            synchronized (Scenario.this) {
                return events.stream().map(StandInClient.Event::eventId).toList();
            }
        }
    }

    /** Waits up to the client's 10 s until each inbox holds at least its count, then 300 ms more for strays. */
    private void await(Map<Inbox, Integer> want, long waitMs) throws InterruptedException {
        long end = System.currentTimeMillis() + waitMs;
        synchronized (this) {
            while (want.entrySet().stream().anyMatch(e -> e.getKey().events.size() < e.getValue())) {
                long left = end - System.currentTimeMillis();
                if (left <= 0) break;
                wait(left);
            }
        }
        Thread.sleep(300);
    }

    private Map<String, Object> sent(String topic, String content, StandInClient.SendResult r) {
        return Json.obj("topic", topic, "content", content, "status", r.status(), "eventId", r.eventId(), "code", r.code(),
                "message", r.message());
    }

    // ---- the §5.3 cases ------------------------------------------------------------------------

    private void cases() throws Exception {
        String t1 = arg("topic", "com.weevent.test");
        String t2 = arg("topic2", "com.weevent.test2");
        String t3 = arg("topic3", t1 + "/sub");

        StandInClient client = build(arg("groupId", "1"));
        print(Json.obj("step", "build", "ok", true, "url", client.stompUri().toString()));

        // testBuildEventClientGroupIdNotExist
        try (StandInClient other = build("notExist")) {
            print(Json.obj("step", "build-group-not-exist", "ok", false, "error", "built"));
        } catch (StandInClient.BrokerException e) {
            print(Json.obj("step", "build-group-not-exist", "ok", e.code == 200211, "code", e.code, "message", e.getMessage()));
        }

        // testPublishExtensions
        Map<String, String> ext = new LinkedHashMap<>();
        ext.put(prefix + "tag", "test");
        ext.put(prefix + "format", "json");
        StandInClient.SendResult r = client.publish(t1, "hello world", ext);
        print(withOk(Json.obj("step", "publish", "result", sent(t1, "hello world", r)), "SUCCESS".equals(r.status()) && notBlank(r.eventId())));

        // five in a row: five distinct ids
        List<String> five = new ArrayList<>();
        for (int i = 0; i < 5; i++) five.add(client.publish(t1, "hello world " + i, Map.of()).eventId());
        print(withOk(Json.obj("step", "publish-5", "eventIds", five), five.stream().allMatch(Scenario::notBlank) && new HashSet<>(five).size() == 5));

        // subscribe: a topic, a list, a pattern with a tag
        Inbox single = new Inbox("single");
        Inbox list = new Inbox("list");
        Inbox pattern = new Inbox("pattern");
        String singleId = subscribeStep("subscribe-single", client, t1, "OFFSET_LAST", new LinkedHashMap<>(), single);
        String listId = subscribeStep("subscribe-list", client, t1 + "," + t2, "OFFSET_LAST", new LinkedHashMap<>(), list);
        Map<String, String> tagged = new LinkedHashMap<>();
        tagged.put(prefix + "tag", "test");
        String patternId = subscribeStep("subscribe-pattern", client, t1 + "/#", "OFFSET_LAST", tagged, pattern);
        if (singleId == null || listId == null || patternId == null) return;

        // events for them, in this order
        // {topic, content, tag, format}; m2's format needs every header escape, both ways.
        String[][] plan = {
            {t1, "m1", "", ""}, {t2, "m2", "", ESCAPED}, {t3, "p-untagged", "", ""}, {t3, "p-tagged", "test", ""}, {t1, "m3", "", ""},
        };
        List<Object> published = new ArrayList<>();
        Map<String, String> idOf = new HashMap<>();
        for (String[] p : plan) {
            Map<String, String> e = new LinkedHashMap<>();
            if (!p[2].isEmpty()) e.put(prefix + "tag", p[2]);
            if (!p[3].isEmpty()) e.put(prefix + "format", p[3]);
            StandInClient.SendResult s = client.publish(p[0], p[1], e);
            published.add(sent(p[0], p[1], s));
            idOf.put(p[1], s.eventId());
            if (!"SUCCESS".equals(s.status())) ok = false;
        }
        print(Json.obj("step", "publish-for-subscribers", "published", published));
        await(Map.of(single, 2, list, 3, pattern, 1), StandInClient.WAIT_MS);
        List<String> wantSingle = List.of(idOf.get("m1"), idOf.get("m3"));
        List<String> wantList = List.of(idOf.get("m1"), idOf.get("m2"), idOf.get("m3"));
        List<String> wantPattern = List.of(idOf.get("p-tagged"));
        print(withOk(Json.obj("step", "messages", "single", single.ids(), "list", list.ids(), "pattern", pattern.ids()),
                single.ids().equals(wantSingle) && list.ids().equals(wantList) && pattern.ids().equals(wantPattern)));

        // unSubscribe
        boolean done = client.unSubscribe(singleId);
        print(Json.obj("step", "unsubscribe", "ok", done, "subscriptionId", singleId, "result", done));
        boolean unknown = client.unSubscribe("not-a-subscription-of-this-client");
        print(Json.obj("step", "unsubscribe-unknown", "ok", !unknown, "result", unknown));

        // testContinueSubscribe: the old id in <prefix>subscriptionId, from the last event received
        String last = single.ids().isEmpty() ? "OFFSET_LAST" : single.ids().get(single.ids().size() - 1);
        Inbox continued = new Inbox("continued");
        Map<String, String> cont = new LinkedHashMap<>();
        cont.put(prefix + "subscriptionId", singleId);
        String contId = subscribeStep("continue", client, t1, last, cont, continued);
        if (contId == null) return;
        StandInClient.SendResult m4 = client.publish(t1, "m4", Map.of());
        await(Map.of(continued, 1, list, 4), StandInClient.WAIT_MS);
        print(withOk(Json.obj("step", "continued-messages", "sameId", contId.equals(singleId), "published", sent(t1, "m4", m4),
                "continued", continued.ids(), "list", list.ids()),
                contId.equals(singleId) && continued.ids().equals(List.of(m4.eventId())) && list.ids().size() == 4
                        && m4.eventId() != null && m4.eventId().equals(list.ids().get(3))));
        client.close();
    }

    private String subscribeStep(String step, StandInClient client, String destination, String offset, Map<String, String> ext,
            Inbox inbox) throws InterruptedException {
        Map<String, String> sentExt = new LinkedHashMap<>(ext);
        try {
            String id = client.subscribe(destination, offset, ext, inbox);
            print(Json.obj("step", step, "ok", notBlank(id), "destination", destination, "eventId", offset, "ext", sentExt,
                    "subscriptionId", id, "extAfter", ext));
            return id;
        } catch (StandInClient.BrokerException e) {
            print(Json.obj("step", step, "ok", false, "destination", destination, "code", e.code, "message", e.getMessage()));
            return null;
        }
    }

    private static boolean notBlank(String s) {
        return s != null && !s.isBlank();
    }

    private static Map<String, Object> withOk(Map<String, Object> line, boolean ok) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("step", line.remove("step"));
        m.put("ok", ok);
        m.putAll(line);
        return m;
    }

    // ---- subscribed across a server-side close -----------------------------------------------------

    /**
     * Subscribes one topic and prints every MESSAGE; the test closes or restarts the gateway
     * meanwhile. Ends after `count` MESSAGEs (ok when no eventId came twice) or `timeoutMs`.
     */
    private void resume() throws Exception {
        String t1 = arg("topic", "com.weevent.test");
        int count = Integer.parseInt(arg("count", "20"));
        long timeoutMs = Long.parseLong(arg("timeoutMs", "90000"));
        StandInClient client = build(arg("groupId", "1"));
        print(Json.obj("step", "build", "ok", true, "url", client.stompUri().toString()));
        Inbox inbox = new Inbox("resume");
        String id = subscribeStep("subscribed", client, t1, arg("offset", "OFFSET_LAST"), new LinkedHashMap<>(), inbox);
        if (id == null) return;
        await(Map.of(inbox, count), timeoutMs);
        List<String> ids = inbox.ids();
        print(withOk(Json.obj("step", "received", "count", ids.size(), "eventIds", ids),
                ids.size() == count && new HashSet<>(ids).size() == ids.size()));
        client.close();
    }
}
