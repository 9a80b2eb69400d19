package dev.waymark.interop.vectors;

import static dev.waymark.interop.vectors.Samples.HA_ADDR;
import static dev.waymark.interop.vectors.Samples.MASTER_ADDR;
import static dev.waymark.interop.vectors.Samples.ORDER_CONF;
import static dev.waymark.interop.vectors.Samples.ORDER_NAMESPACE;
import static dev.waymark.interop.vectors.Samples.ORDER_TOPIC;
import static dev.waymark.interop.vectors.Samples.STRANGE;
import static dev.waymark.interop.vectors.Samples.TOPIC;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.rocketmq.common.help.FAQUrl;
import org.apache.rocketmq.remoting.CommandCustomHeader;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Every frame vector of one release, built with that release's classes. Shared by all
 * profiles: the release-specific parts come from {@link Headers} and {@link Bodies},
 * whose source directory the profile selects.
 *
 * <p>Names are {@code <code>_<name>_<form>_<tag>_<nnn>}: code is the request code of the
 * exchange (also for its responses), form is {@code json} or {@code rocketmq} (the header
 * serialization), tag the release. Opaque values are fixed; {@code version} is
 * {@link Release#referenceVersion()} for the reference frames (the frames rmq-wire's
 * {@code tests/wire/common/mod.rs} also holds as byte dumps) and {@link Release#current()} for
 * everything else.
 */
public final class FrameCatalog {
    private static final SerializeType[] FORMS = {SerializeType.JSON, SerializeType.ROCKETMQ};

    private final String release = Release.version();
    private final int referenceVersion = Release.referenceVersion();
    private final int current = Release.current();
    private final Names names = new Names(Release.tag());
    private final List<Frame> frames = new ArrayList<>();

    public static List<Frame> build() {
        FrameCatalog catalog = new FrameCatalog();
        catalog.referenceFrames();
        catalog.everyRequestCode();
        catalog.responses();
        catalog.edgeCases();
        return catalog.frames;
    }

    // ---- the reference frames ------------------------------------------------------------------

    private void referenceFrames() {
        int v = referenceVersion;
        for (SerializeType form : FORMS) {
            add("105_get_routeinfo_by_topic", form, "GET_ROUTEINFO_BY_TOPIC request, topic=TopicTest",
                request(105, Headers.routeRequest(TOPIC), v, 1));
        }
        for (SerializeType form : FORMS) {
            add("105_get_routeinfo_by_topic_response_standard", form,
                "route found, standard-JSON TopicRouteData body, no header class",
                response(0, null, null, v, 1).body(Bodies.routeSimple(true)));
        }
        add("105_get_routeinfo_by_topic_response_default", SerializeType.JSON,
            "route found for a client below 4.9.4, default-dialect TopicRouteData body",
            response(0, null, null, v, 1).body(Bodies.routeSimple(false)));
        String notFound = "No topic route info in name server for the topic: " + TOPIC
            + FAQUrl.suggestTodo(FAQUrl.APPLY_TOPIC_URL);
        for (SerializeType form : FORMS) {
            add("105_get_routeinfo_by_topic_response_not_exist", form,
                "TOPIC_NOT_EXIST, remark with a line feed (this release's FAQ URL)",
                response(17, notFound, null, v, 1));
        }
        add("99999_unknown_code", SerializeType.JSON, "request with unknown code 99999, no header",
            request(99999, null, v, 7));
        for (SerializeType form : FORMS) {
            add("99999_unknown_code_response", form, "REQUEST_CODE_NOT_SUPPORTED",
                response(3, " request type 99999 not supported", null, v, 7));
        }
        byte[] registerBody = Bodies.registerBrokerReference(false);
        for (SerializeType form : FORMS) {
            add("103_register_broker", form,
                "REGISTER_BROKER master, JSON RegisterBrokerBody, bodyCrc32 over the body",
                request(103, Headers.registerBroker(registerBody, false, false, 0L, null), v, 2).body(registerBody));
        }
        for (SerializeType form : FORMS) {
            add("103_register_broker_response_master", form,
                "master registered: header class with all fields null, no body",
                response(0, null, Headers.registerBrokerResponse(null, null), v, 2));
        }
        for (SerializeType form : FORMS) {
            add("103_register_broker_response_slave", form,
                "slave registered: masterAddr+haServerAddr, KVTable body with the order-topic namespace",
                response(0, null, Headers.registerBrokerResponse(HA_ADDR, MASTER_ADDR), v, 3)
                    .body(Bodies.kvTable(ORDER_TOPIC, ORDER_CONF)));
        }
        byte[] compressed = Bodies.registerBrokerReference(true);
        for (SerializeType form : FORMS) {
            add("103_register_broker_compressed", form,
                "REGISTER_BROKER compressed=true, zlib RegisterBrokerBody",
                request(103, Headers.registerBroker(compressed, true, false, 0L, null), v, 2).body(compressed));
        }
        for (SerializeType form : FORMS) {
            add("322_query_data_version_response", form,
                "changed=false, stored DataVersion body",
                response(0, null, Headers.queryDataVersionResponse(false), v, 9).body(Bodies.dataVersionReference()));
        }
        // 12.9
        if (Release.isV5()) {
            for (SerializeType form : FORMS) {
                add("904_broker_heartbeat_oneway", form, "BROKER_HEARTBEAT one-way, flag 2",
                    request(904, Headers.heartbeat(), v, 43).oneway());
            }
        }
        for (SerializeType form : FORMS) {
            add("104_unregister_broker", form, "UNREGISTER_BROKER",
                request(104, Headers.unregisterBroker(), v, 44));
            add("216_delete_topic_in_namesrv", form, "DELETE_TOPIC_IN_NAMESRV with clusterName",
                request(216, Headers.deleteTopic(TOPIC, Samples.CLUSTER), v, 45));
            add("205_wipe_write_perm_of_broker_response", form, "wipeTopicCount=3",
                response(0, null, Headers.wipeWritePermResponse(3), v, 10));
            add("101_get_kv_config_response_not_found", form,
                "QUERY_NOT_FOUND, header class with null value",
                response(22, "No config item, Namespace: ns Key: k", Headers.getKvConfigResponse(null), v, 11));
            if (Release.isV5()) {
                add("905_notify_min_broker_id_change_oneway", form,
                    "NOTIFY_MIN_BROKER_ID_CHANGE sent by the NameServer, one-way",
                    request(905, Headers.notifyMinBrokerIdChange(), v, 42).oneway());
            }
            add("1_system_error_response_non_ascii", form, "remark with non-ASCII and a slash",
                response(1, "\u9519\u8bef/x", null, v, 3));
        }
    }

    // ---- a realistic request of every code ---------------------------------------------------

    private void everyRequestCode() {
        int opaque = 100;
        for (RequestSample sample : Headers.requests()) {
            opaque++;
            for (SerializeType form : FORMS) {
                Cmd cmd = request(sample.code(), sample.header(), current, opaque).body(sample.body());
                if (sample.oneway()) {
                    cmd.oneway();
                }
                String what = sample.name().toUpperCase(Locale.ROOT) + " request"
                    + (sample.header() == null ? ", no header class" : ", " + sample.header().getClass().getSimpleName())
                    + (sample.body() == null ? "" : ", with body") + (sample.oneway() ? ", one-way" : "")
                    + (sample.note().isEmpty() ? "" : " (" + sample.note() + ")");
                add(sample.code() + "_" + sample.name(), form, what, cmd);
            }
        }
    }

    // ---- responses -----------------------------------------------------------------------------

    private void responses() {
        int v = current;
        for (SerializeType form : FORMS) {
            add("106_get_broker_cluster_info_response", form, "ClusterInfo body",
                response(0, null, null, v, 301).body(Bodies.clusterInfoReference()));
            add("206_get_all_topic_list_from_nameserver_response", form, "TopicList body",
                response(0, null, null, v, 302).body(Bodies.topicList(null, TOPIC)));
            add("304_get_system_topic_list_from_ns_response", form, "TopicList body with brokerAddr",
                response(0, null, null, v, 303).body(Bodies.topicList(MASTER_ADDR, Samples.BROKER_A)));
            add("219_get_kvlist_by_namespace_response", form, "KVTable body",
                response(0, null, null, v, 304).body(Bodies.kvTable(ORDER_TOPIC, ORDER_CONF)));
            add("101_get_kv_config_response", form, "found: value in the header",
                response(0, null, Headers.getKvConfigResponse(ORDER_CONF), v, 305));
            add("327_add_write_perm_of_broker_response", form, "addTopicCount=2",
                response(0, null, Headers.addWritePermResponse(2), v, 306));
            add("322_query_data_version_response_changed", form, "changed=true, broker unknown, no body",
                response(0, null, Headers.queryDataVersionResponse(true), v, 307));
            add("319_get_namesrv_config_response", form, "properties text body",
                response(0, null, null, v, 308).body(
                    "enableTopicList=true\nlistenPort=9876\n".getBytes(StandardCharsets.UTF_8)));
            byte[] memberGroup = Bodies.memberGroupReference();
            if (memberGroup != null) {
                add("901_get_broker_member_group_response", form, "GetBrokerMemberGroupResponseBody body",
                    response(0, null, null, v, 309).body(memberGroup));
            }
            add("100_put_kv_config_response", form, "success, no header class, null remark",
                response(0, null, null, v, 310));
            add("2_system_busy_response", form, "SYSTEM_BUSY flow-control remark",
                response(2, "[OVERLOAD]system busy, start flow control for a while", null, v, 311));
            add("318_update_namesrv_config_response_no_permission", form, "NO_PERMISSION (black-listed key)",
                response(16, "Can not update config in black list.", null, v, 312));
            add("103_register_broker_response_crc_mismatch", form, "SYSTEM_ERROR crc32 not match, header class",
                response(1, "crc32 not match", Headers.registerBrokerResponse(null, null), v, 313));
        }
    }

    // ---- edge cases ---------------------------------------------------------------------------

    private void edgeCases() {
        int v = current;
        for (SerializeType form : FORMS) {
            add("1_system_error_response_strange_remark", form,
                "remark with quotes, backslash, slash, every control escape, NUL, DEL, C1, U+2028/9, astral",
                response(1, STRANGE, null, v, 401));
            add("1_system_error_response_escaping_example", form, "remark = the escaping example",
                response(1, Samples.ESCAPING_EXAMPLE, null, v, 402));
            add("0_success_response_empty_remark", form,
                "remark is the empty string (JSON keeps \"\", ROCKETMQ writes length 0 = null)",
                response(0, "", null, v, 403));
            add("100_put_kv_config_strange", form, "PUT_KV_CONFIG with a value full of special characters",
                request(100, Headers.putKvConfig(ORDER_NAMESPACE, Samples.STRANGE_NAME, STRANGE), v, 404));
            add("100_put_kv_config_empty_value", form,
                "PUT_KV_CONFIG with value \"\" (ROCKETMQ: decodes as a null value)",
                request(100, Headers.putKvConfig(ORDER_NAMESPACE, ORDER_TOPIC, ""), v, 405));
            add("105_get_routeinfo_by_topic_max_opaque", form, "opaque = Integer.MAX_VALUE",
                request(105, Headers.routeRequest(TOPIC), v, Integer.MAX_VALUE));
            add("105_get_routeinfo_by_topic_negative_opaque", form, "opaque = -2 (request counter wrapped)",
                request(105, Headers.routeRequest(TOPIC), v, -2));
            add("105_get_routeinfo_by_topic_language_cpp", form, "language CPP, version 0 (a non-Java client)",
                request(105, Headers.routeRequest(TOPIC), 0, 406).language(LanguageCode.CPP));
            add("105_get_routeinfo_by_topic_accept_standard_json", form, "acceptStandardJsonOnly=true",
                request(105, Headers.routeRequestStandardOnly(TOPIC), v, 407));
            CommandCustomHeader inherited = Headers.routeRequestInheritedFields(TOPIC);
            if (inherited != null) {
                add("105_get_routeinfo_by_topic_inherited_fields", form,
                    "TopicRequestHeader/RpcRequestHeader fields lo, ns, nsd, bname, oway set",
                    request(105, inherited, v, 408));
            }
            add("105_get_routeinfo_by_topic_extra_ext_field", form,
                "addExtField next to the header (zone routing keys)",
                request(105, Headers.routeRequest(TOPIC), v, 409).ext("__ZONE_MODE", "true")
                    .ext("__ZONE_NAME", "zone-1"));
            add("322_query_data_version_oneway", form, "QUERY_DATA_VERSION one-way (5.x heartbeat mode)",
                request(322, Headers.queryDataVersion(), v, 410).body(Bodies.dataVersionReference()).oneway());
            if (Release.isV5()) {
                add("103_register_broker_acting_master", form,
                    "slave in acting-master mode: enableActingMaster=true, heartbeatTimeoutMillis, zone",
                    request(103, Headers.registerBroker(Bodies.registerBrokerReference(false), false, true, 1L, 10000L),
                        v, 411).body(Bodies.registerBrokerReference(false)).ext("__ZONE_NAME", "zone-1"));
            }
            add("0_response_large_body", form, "64 KiB body", response(0, null, null, v, 412).body(largeBody()));
        }
    }

    private static byte[] largeBody() {
        byte[] body = new byte[65536];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) (i * 31 + 7);
        }
        return body;
    }

    // ---- construction --------------------------------------------------------------------------

    private void add(String base, SerializeType form, String what, Cmd cmd) {
        RemotingCommand command = cmd.command;
        command.setSerializeTypeCurrentRPC(form);
        String formName = form == SerializeType.JSON ? "json" : "rocketmq";
        String description = String.format("%s; %s header; code=%d flag=%d opaque=%d version=%d language=%s%s",
            what, form.name(), command.getCode(), command.getFlag(), command.getOpaque(), command.getVersion(),
            command.getLanguage(), command.getBody() == null ? "" : " body=" + command.getBody().length + "B");
        frames.add(new Frame(names.next(base + "_" + formName), "java " + release + " " + description, command));
    }

    /** {@code createRequestCommand(code, header)}, as every Java sender builds a request. */
    private static Cmd request(int code, CommandCustomHeader header, int version, int opaque) {
        RemotingCommand command = RemotingCommand.createRequestCommand(code, header);
        command.setVersion(version);
        command.setOpaque(opaque);
        return new Cmd(command);
    }

    /**
     * A response as the NameServer builds it: {@code createResponseCommand(headerClass)} (code
     * SYSTEM_ERROR, remark "not set any response code"), then the handler sets code, remark
     * and the header's fields.
     */
    private static Cmd response(int code, String remark, CommandCustomHeader header, int version, int opaque) {
        RemotingCommand command = RemotingCommand.createResponseCommand(
            header == null ? null : header.getClass());
        if (header != null) {
            command.writeCustomHeader(header);
        }
        command.setCode(code);
        command.setRemark(remark);
        command.setVersion(version);
        command.setOpaque(opaque);
        return new Cmd(command);
    }
}
