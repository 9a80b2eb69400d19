package dev.waymark.interop.controller;

import dev.waymark.interop.harness.ControllerCodes;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.vectors.Cmd;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * One recorded conversation with the controller: each request, sent with the real
 * {@code NettyRemotingClient}, and the response it got, in order; plus the frames the
 * controller sent by itself (NOTIFY_BROKER_ROLE_CHANGED). Run-specific strings are replaced
 * by {@link Placeholders} as they are recorded. Each step states the response code it
 * expects, so a scenario that stops doing what its steps say fails instead of recording.
 */
final class Scenario {
    /**
     * Requests that may append to the controller's log. Java answers them once the entry is
     * committed, and applies it to its state a moment later; the next request is only sent
     * after a short pause, so that it never sees the state from before (DLedger applies a
     * committed entry on its own thread, after the answer may have gone).
     */
    private static final Set<Integer> WRITES = Set.of(ControllerCodes.ALTER_SYNC_STATE_SET,
        ControllerCodes.ELECT_MASTER, ControllerCodes.REGISTER_BROKER, ControllerCodes.CLEAN_BROKER_DATA,
        ControllerCodes.APPLY_BROKER_ID);
    private static final long SETTLE_MILLIS = 100;
    /** Any response code is recorded (quirks whose outcome the scenario documents rather than asserts). */
    static final Integer ANY = null;

    final String name;
    private final String description;
    private final RawClient client;
    private final String controller;
    private final Placeholders placeholders;
    private final List<Map<String, Object>> steps = new ArrayList<>();

    Scenario(String name, String description, RawClient client, String controller, Placeholders placeholders) {
        this.name = name;
        this.description = description;
        this.client = client;
        this.controller = controller;
        this.placeholders = placeholders;
    }

    /** Sends {@code request} two-way, records the exchange and checks the response code. */
    RemotingCommand send(String title, Cmd request, Integer expectedCode) {
        RemotingCommand sent = request.command;
        RemotingCommand response = client.invoke(controller, sent, 5000);
        Map<String, Object> step = new LinkedHashMap<>();
        step.put("name", title);
        step.put("request", command(sent, false));
        step.put("response", command(response, true));
        steps.add(step);
        if (expectedCode != null && response.getCode() != expectedCode) {
            throw new AssertionError(name + ", step " + steps.size() + " \"" + title + "\": expected code "
                + expectedCode + ", got " + response.getCode() + " " + response.getRemark() + " ext "
                + response.getExtFields() + " body " + text(response.getBody()));
        }
        if (WRITES.contains(sent.getCode())) {
            Poll.sleep(SETTLE_MILLIS);
        }
        return response;
    }

    /** Records a frame the controller sent to {@code to} (a placeholder such as {@code <broker:1>}). */
    void notified(String title, String to, RemotingCommand frame) {
        Map<String, Object> notify = new LinkedHashMap<>();
        notify.put("to", to);
        notify.put("frame", command(frame, true));
        Map<String, Object> step = new LinkedHashMap<>();
        step.put("name", title);
        step.put("notify", notify);
        steps.add(step);
    }

    /**
     * Code, version, flag, ext fields (null when the frame has none, {@code {}} when it has an
     * empty map), body; and, for what the controller sent, the remark.
     */
    private Map<String, Object> command(RemotingCommand command, boolean withRemark) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("code", command.getCode());
        out.put("version", command.getVersion());
        out.put("flag", command.getFlag());
        if (withRemark) {
            out.put("remark", placeholders.apply(command.getRemark()));
        }
        Map<String, String> ext = command.getExtFields();
        if (ext == null) {
            out.put("extFields", null);
        } else {
            Map<String, Object> fields = new TreeMap<>();
            ext.forEach((k, v) -> fields.put(placeholders.apply(k), placeholders.apply(v)));
            out.put("extFields", fields);
        }
        out.put("body", placeholders.apply(text(command.getBody())));
        return out;
    }

    /** A body as UTF-8 text; every controller body is text, so anything else is an error. */
    static String text(byte[] body) {
        if (body == null) {
            return null;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(body)).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalStateException("a body that is not UTF-8 (" + body.length + " bytes)", e);
        }
    }

    int size() {
        return steps.size();
    }

    /** The vector file: scenario, release, controller settings, placeholders used, steps. */
    String render(String release, Map<String, Object> controllerInfo) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("scenario", name);
        doc.put("description", description);
        doc.put("release", release);
        doc.put("controller", controllerInfo);
        doc.put("steps", steps);
        String withoutLegend = JsonText.write(doc);
        doc.put("placeholders", placeholders.usedIn(withoutLegend));
        return JsonText.write(doc);
    }
}
