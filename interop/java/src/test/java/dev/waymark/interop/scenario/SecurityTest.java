package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import dev.waymark.interop.harness.BrokerProcess;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.ClusterView;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.JavaNamesrvProcess;
import dev.waymark.interop.harness.LoopbackClients;
import dev.waymark.interop.harness.Mqadmin;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.Pki;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.RouteView;
import dev.waymark.interop.vectors.Bodies;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.UtilAll;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.remoting.netty.TlsSystemConfig;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;

/**
 * Authentication and TLS (docs/security.md) with unchanged Java programs: what a real broker,
 * mqadmin, producer and consumer of the profile's release send is accepted by a NameServer that
 * requires proof of identity, and what an impostor sends is refused.
 *
 * <ul>
 *   <li>rmq5: a 5.5.1 broker signing with {@code innerClientAuthenticationCredentials}
 *       registers with {@code authenticationEnabled=true}; unsigned or wrongly signed
 *       REGISTER/UNREGISTER_BROKER for its name are refused with NO_PERMISSION (16) and change
 *       nothing. mqadmin signs its NameServer writes with {@code conf/tools.yml} and is refused
 *       without it. A TLS producer and consumer go through an enforcing NameServer.</li>
 *   <li>rmq4: a 4.9.7 broker, which cannot sign, registers through the address allow-list;
 *       and through mutual TLS, its client certificate naming an account ({@code tlsSubject}),
 *       and a 4.9.8 producer with a client certificate sends through that NameServer.</li>
 * </ul>
 *
 * The Java NameServer has no authentication, so the authentication tests skip against it; the
 * TLS tests run against it too, as the control: a stock Java NameServer in its own JVM with
 * {@code -Dtls.server.mode=enforcing} (and {@code -Dtls.config.file} for mTLS).
 */
class SecurityTest extends ScenarioBase {
    private static final String NO_JAVA_AUTH =
        "the Java NameServer has no authentication (its only server hook, ZoneRouteRPCHook, checks "
            + "no signature): no control for this test";
    /** Waymark's reason for a request without AccessKey from an address no allow-list names. */
    private static final String UNSIGNED = "username cannot be null";
    private static final String LOCAL_METADATA_PROVIDER =
        "org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider";

    // rmq5: the signing broker's account (bound to its broker name) and an admin for mqadmin.
    private static final String CLUSTER5 = "SecCluster5";
    private static final String BROKER5 = "sec5-a";
    private static final String BROKER5_AK = "sec5-broker-key";
    private static final String BROKER5_SK = "sec5-broker-secret";
    private static final String ADMIN5_AK = "sec5-admin";
    private static final String ADMIN5_SK = "sec5-admin-secret";

    // rmq4: an admin, and the mTLS broker's account, named by its certificate's CN.
    private static final String ADMIN4_AK = "sec4-admin-key";
    private static final String ADMIN4_SK = "sec4-admin-secret";
    private static final String BROKER4_CN = "sec4-broker.waymark.test";
    private static final String CLIENT4_CN = "sec4-client.waymark.test";

    private Path files;
    private Pki pki;

    // The rmq5 authentication fixture, shared by its two tests.
    private NameServer authNs;
    private EmbeddedBroker signingBroker;
    private DefaultMQAdminExt authAdmin;
    private RawClient authRaw;
    private String authTopic;

    /** This class's temporary files (accounts, certificates, tools.yml), deleted after the class. */
    private Path files() throws IOException {
        if (files == null) {
            files = Files.createTempDirectory("waymark-security-");
            Path dir = files;
            perClass.add(() -> deleteTree(dir));
        }
        return files;
    }

    private Path write(String name, String content) throws IOException {
        Path file = files().resolve(name);
        Files.createDirectories(file.getParent());
        Files.writeString(file, content, StandardCharsets.UTF_8);
        return file;
    }

    private Pki pki() throws IOException {
        if (pki == null) {
            pki = Pki.create(files().resolve("pki"), "Waymark interop test CA");
        }
        return pki;
    }

    private static Path harnessClasspath() {
        return Path.of(System.getProperty("waymark.harness.classpath", "target/rmq5/classpath.txt"));
    }

    // ---- rmq5: a signing 5.5.1 broker, impostors, mqadmin with tools.yml ----

    /**
     * A Waymark NameServer with authentication on (accounts as a 5.x JSON user list: the broker's
     * key bound to its broker name, and a Super user for mqadmin), and a 5.5.1 broker whose
     * broker.conf has the two lines that make a 5.3+ broker sign (innerClientAuthenticationCredentials,
     * and the authenticationMetadataProvider without which it does not start). It registers
     * (signed), else start fails.
     */
    private void startSigned() throws Exception {
        if (authNs != null) {
            return;
        }
        Path accounts = write("accounts5.json", "[\n"
            + "  {\"username\": \"" + ADMIN5_AK + "\", \"password\": \"" + ADMIN5_SK + "\", \"userType\": \"Super\"},\n"
            + "  {\"accessKey\": \"" + BROKER5_AK + "\", \"secretKey\": \"" + BROKER5_SK + "\",\n"
            + "   \"brokers\": [{\"clusterName\": \"" + CLUSTER5 + "\", \"brokerName\": \"" + BROKER5 + "\"}]}\n"
            + "]\n");
        authNs = namesrv(perClass, Map.of("authenticationEnabled", "true",
            "authenticationAccountsFile", accounts.toString()));
        signingBroker = broker(perClass, new BrokerSpec().cluster(CLUSTER5).name(BROKER5).namesrv(authNs.addr())
            .set("innerClientAuthenticationCredentials",
                "{\"accessKey\":\"" + BROKER5_AK + "\",\"secretKey\":\"" + BROKER5_SK + "\"}")
            .set("authenticationMetadataProvider", LOCAL_METADATA_PROVIDER));
        authAdmin = Clients.admin(perClass, authNs.addr());
        authRaw = raw(perClass);
        // A topic created on the broker reaches the route by the broker's (signed) incremental registration.
        authTopic = Clients.unique("SecTopic");
        authAdmin.createAndUpdateTopicConfig(signingBroker.addr(), new TopicConfig(authTopic, 4, 4, 6));
        awaitRoute(authRaw, authNs.addr(), authTopic);
    }

    private static RouteView awaitRoute(RawClient client, String namesrv, String topic) {
        return Poll.until(seconds(15), "route of " + topic + " from " + namesrv, () -> client.route(namesrv, topic));
    }

    @Test
    void signingBrokerRegistersAndImpostorsAreRefused() throws Exception {
        assumeTrue(v5(), "5.3+ brokers sign their requests (innerClientAuthenticationCredentials): profile rmq5");
        assumeTrue(waymark(), NO_JAVA_AUTH);
        startSigned();
        String ns = authNs.addr();
        String genuine = signingBroker.addr();

        ClusterView cluster = authRaw.clusterInfo(ns);
        assertEquals(Map.of(0L, genuine), cluster.addrsOf(BROKER5), cluster.toString());
        assertEquals(Set.of(BROKER5), cluster.clusters().get(CLUSTER5), cluster.toString());
        RouteView route = authRaw.route(ns, authTopic);
        assertEquals(Map.of(0L, genuine), route.addrsOf(BROKER5), route.toString());
        DefaultMQProducer producer = Clients.producer(perTest, ns);
        assertEquals(10, Clients.send(producer, authTopic, 10).size());

        // Impostors, from a plain Java remoting client: the broker's name at another address.
        String impostor = "127.0.0.1:" + (signingBroker.spec().listenPort() + 7);
        refused(authRaw.invoke(ns, register(CLUSTER5, BROKER5, impostor), 3000), "unsigned REGISTER_BROKER",
            UNSIGNED);
        refused(authRaw.invoke(ns, unregister(CLUSTER5, BROKER5, genuine), 3000), "unsigned UNREGISTER_BROKER",
            UNSIGNED);
        try (RawClient wrongSecret = new RawClient(null, sign(BROKER5_AK, BROKER5_SK + "-not"))) {
            refused(wrongSecret.invoke(ns, register(CLUSTER5, BROKER5, impostor), 3000),
                "REGISTER_BROKER signed with a wrong secret", "check signature failed");
        }
        try (RawClient brokerKey = new RawClient(null, sign(BROKER5_AK, BROKER5_SK))) {
            // The broker's own key, for a broker its account does not list (docs/security.md, brokers:).
            refused(brokerKey.invoke(ns, register(CLUSTER5, "sec5-other", impostor), 3000),
                "REGISTER_BROKER of another broker with sec5-a's key", "broker identity not allowed");
        }

        ClusterView after = authRaw.clusterInfo(ns);
        assertEquals(Map.of(0L, genuine), after.addrsOf(BROKER5), after.toString());
        assertEquals(Set.of(BROKER5), after.clusters().get(CLUSTER5), after.toString());
        assertTrue(after.addrsOf("sec5-other").isEmpty(), after.toString());
        RouteView routeAfter = authRaw.route(ns, authTopic);
        assertEquals(Map.of(0L, genuine), routeAfter.addrsOf(BROKER5), routeAfter.toString());
        assertEquals(6, routeAfter.queue(BROKER5).orElseThrow().perm(), routeAfter.toString());
        assertEquals(1, Clients.send(producer, authTopic, 1).size());
    }

    @Test
    void mqadminWritesNeedToolsYml() throws Exception {
        assumeTrue(v5(), "mqadmin against a signing 5.5.1 broker's NameServer: profile rmq5");
        assumeTrue(waymark(), NO_JAVA_AUTH);
        startSigned();
        String ns = authNs.addr();
        Path withoutTools = Files.createDirectories(files().resolve("home-without-tools"));
        Path withTools = files().resolve("home-with-tools");
        write("home-with-tools/conf/tools.yml", "accessKey: " + ADMIN5_AK + "\nsecretKey: " + ADMIN5_SK + "\n");
        String namespace = Clients.unique("secNs");
        String before = authAdmin.getNameServerConfig(null).get(ns).getProperty("orderMessageEnable");
        assertEquals("false", before);

        // Without tools.yml: unsigned, refused, nothing changes.
        Mqadmin.Result kv = Mqadmin.runWithHome(withoutTools, "updateKvConfig", "-n", ns, "-s", namespace,
            "-k", "answer", "-v", "42");
        assertFalse(kv.ok(), kv::toString);
        assertRefusedOutput(kv.errorText() + kv.out(), kv, UNSIGNED, 100);
        Mqadmin.Result conf = Mqadmin.runWithHome(withoutTools, "updateNamesrvConfig", "-n", ns,
            "-k", "orderMessageEnable", "-v", "true");
        assertFalse(conf.ok(), conf::toString);
        assertRefusedOutput(conf.errorText() + conf.out(), conf, UNSIGNED, 318);
        Mqadmin.Result wipe = Mqadmin.runWithHome(withoutTools, "wipeWritePerm", "-n", ns, "-b", BROKER5);
        // wipeWritePerm reports each NameServer's failure itself (stdout) and prints the exception (stderr).
        assertTrue(wipe.out().contains("wipe write perm of broker[" + BROKER5 + "] in name server[" + ns + "] Failed"),
            wipe::toString);
        assertRefusedOutput(wipe.out(), wipe, UNSIGNED, 205);
        assertKvMissing(namespace, "answer");
        assertEquals("false", authAdmin.getNameServerConfig(null).get(ns).getProperty("orderMessageEnable"));
        assertEquals(6, authRaw.route(ns, authTopic).queue(BROKER5).orElseThrow().perm());

        // With tools.yml (an admin account): signed, accepted, in effect.
        Mqadmin.Result kvSigned = ok(Mqadmin.runWithHome(withTools, "updateKvConfig", "-n", ns, "-s", namespace,
            "-k", "answer", "-v", "42"));
        assertTrue(kvSigned.out().contains("create or update kv config to namespace success"), kvSigned::toString);
        assertEquals("42", authAdmin.getKVConfig(namespace, "answer"));
        Mqadmin.Result confSigned = ok(Mqadmin.runWithHome(withTools, "updateNamesrvConfig", "-n", ns,
            "-k", "orderMessageEnable", "-v", "true"));
        assertTrue(confSigned.out().contains("update name server config success"), confSigned::toString);
        assertEquals("true", authAdmin.getNameServerConfig(null).get(ns).getProperty("orderMessageEnable"));
        Mqadmin.Result wipeSigned = ok(Mqadmin.runWithHome(withTools, "wipeWritePerm", "-n", ns, "-b", BROKER5));
        // At once: the broker's next periodic registration (30 s) restores its own perm.
        int wipedPerm = authRaw.route(ns, authTopic).queue(BROKER5).orElseThrow().perm();
        Matcher count = Pattern.compile("wipe write perm of broker\\[" + BROKER5 + "\\] in name server\\["
            + Pattern.quote(ns) + "\\] OK, (\\d+)").matcher(wipeSigned.out());
        assertTrue(count.find() && Integer.parseInt(count.group(1)) >= 1, wipeSigned::toString);
        assertEquals(4, wipedPerm);
        ok(Mqadmin.runWithHome(withTools, "addWritePerm", "-n", ns, "-b", BROKER5));
        assertEquals(6, authRaw.route(ns, authTopic).queue(BROKER5).orElseThrow().perm());
        ok(Mqadmin.runWithHome(withTools, "updateNamesrvConfig", "-n", ns, "-k", "orderMessageEnable", "-v", "false"));
    }

    // ---- rmq5: TLS clients through an enforcing NameServer (Java control) ----

    @Test
    void tlsProducerAndConsumerThroughEnforcingNameServer() throws Exception {
        assumeTrue(v5(), "5.5.0 clients and a 5.5.1 broker over TLS: profile rmq5");
        NameServer ns = enforcingNamesrv5();
        assertPlainRefused(ns);

        // broker.conf useTLS=true: the broker's connections (its registrations) use TLS; its own
        // listener is Java's default, permissive with a self-signed certificate.
        EmbeddedBroker broker = broker(perTest, new BrokerSpec().cluster("TlsCluster5").name("tls5-a")
            .namesrv(ns.addr()).set("useTLS", "true"));
        RawClient tls = perTest.add(new RawClient(true, null));
        assertEquals(Map.of(0L, broker.addr()), tls.clusterInfo(ns.addr()).addrsOf("tls5-a"));

        // Clients with useTLS (what -Dtls.enable=true sets when the client is made): trust-all.
        DefaultMQAdminExt admin = LoopbackClients.configure(new DefaultMQAdminExt(), ns.addr());
        admin.setUseTLS(true);
        admin.setAdminExtGroup(Clients.unique("admin"));
        admin.start();
        perTest.add(admin::shutdown);
        String topic = Clients.unique("TlsTopic");
        admin.createAndUpdateTopicConfig(broker.addr(), new TopicConfig(topic, 4, 4, 6));
        RouteView route = awaitRoute(tls, ns.addr(), topic);
        assertEquals(Map.of(0L, broker.addr()), route.addrsOf("tls5-a"), route.toString());

        DefaultMQProducer producer = LoopbackClients.configure(new DefaultMQProducer(Clients.unique("pg")), ns.addr());
        producer.setUseTLS(true);
        producer.setSendMsgTimeout(5000);
        producer.start();
        perTest.add(producer::shutdown);
        Set<String> sent = Clients.send(producer, topic, 50);
        assertEquals(50, sent.size());
        Clients.Received received = tlsPushConsumer(ns.addr(), topic);
        received.awaitExactly(sent, seconds(60));
    }

    /**
     * Waymark with {@code tls.server.mode=enforcing} and a certificate of the test CA; the control:
     * a stock Java NameServer with {@code -Dtls.server.mode=enforcing} (Java's test mode: a
     * self-signed certificate made at start-up).
     */
    private NameServer enforcingNamesrv5() throws Exception {
        if (!waymark()) {
            return perTest.add(JavaNamesrvProcess.start(harnessClasspath(), List.of("-Dtls.server.mode=enforcing"),
                Map.of()));
        }
        Pki.Leaf cert = pki().issue("ns5", "waymark-ns.test");
        return namesrv(perTest, Map.of("tls.server.mode", "enforcing",
            "tls.server.certPath", cert.certPem().toString(), "tls.server.keyPath", cert.keyPem().toString()));
    }

    private Clients.Received tlsPushConsumer(String namesrv, String topic) throws Exception {
        Clients.Received received = new Clients.Received();
        DefaultMQPushConsumer consumer = LoopbackClients.configure(new DefaultMQPushConsumer(Clients.unique("cg")),
            namesrv);
        consumer.setUseTLS(true);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.setConsumeThreadMin(2);
        consumer.setConsumeThreadMax(2);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (messages, context) -> {
            messages.forEach(received::add);
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        perTest.add(consumer::shutdown);
        return received;
    }

    // ---- rmq4: 4.9.7 brokers, which cannot sign ----

    @Test
    void allowListedBrokerRegisters() throws Exception {
        assumeFalse(v5(), "4.9.x brokers cannot sign (their BrokerOuterAPI has no RPC hook): profile rmq4");
        assumeTrue(waymark(), NO_JAVA_AUTH);
        Path accounts = write("accounts4-allow.yml", "globalWhiteRemoteAddresses:\n"
            + "  - 127.0.0.*\n"
            + "accounts:\n"
            + "  - accessKey: " + ADMIN4_AK + "\n"
            + "    secretKey: " + ADMIN4_SK + "\n"
            + "    admin: true\n");
        NameServer ns = namesrv(perTest, Map.of("authenticationEnabled", "true",
            "authenticationAccountsFile", accounts.toString()));
        // Registered (unsigned, from 127.0.0.1), or start fails.
        EmbeddedBroker broker = broker(perTest, new BrokerSpec().cluster("SecCluster4").name("sec4-a")
            .namesrv(ns.addr()));
        RawClient raw = raw(perTest);
        assertEquals(Map.of(0L, broker.addr()), raw.clusterInfo(ns.addr()).addrsOf("sec4-a"));
        DefaultMQAdminExt admin = Clients.admin(perTest, ns.addr());
        String topic = Clients.unique("AllowTopic");
        admin.createAndUpdateTopicConfig(broker.addr(), new TopicConfig(topic, 4, 4, 6));
        awaitRoute(raw, ns.addr(), topic);
        DefaultMQProducer producer = Clients.producer(perTest, ns.addr());
        assertEquals(10, Clients.send(producer, topic, 10).size());

        // The allow-list grants broker rights only: an unsigned admin write from the same address is refused.
        String namespace = Clients.unique("secNs");
        Mqadmin.Result unsigned = Mqadmin.run("updateKvConfig", "-n", ns.addr(), "-s", namespace, "-k", "k", "-v", "v");
        assertFalse(unsigned.ok(), unsigned::toString);
        assertRefusedOutput(unsigned.errorText(), unsigned, "admin permission needed", 100);
        // A 4.9.8 admin signing with the admin account (AclClientRPCHook) may.
        DefaultMQAdminExt signed = LoopbackClients.configure(
            new DefaultMQAdminExt(sign(ADMIN4_AK, ADMIN4_SK)), ns.addr());
        signed.setAdminExtGroup(Clients.unique("admin"));
        signed.start();
        perTest.add(signed::shutdown);
        signed.createAndUpdateKvConfig(namespace, "k", "v");
        assertEquals("v", admin.getKVConfig(namespace, "k"));
    }

    @Test
    void mutualTlsBrokerRegistersAndTlsProducerSends() throws Exception {
        assumeFalse(v5(), "4.9.7 broker with a client certificate, 4.9.8 producer: profile rmq4");
        Pki ca = pki();
        Pki.Leaf nsCert = ca.issue("ns4", "waymark-ns.test");
        Pki.Leaf brokerCert = ca.issue("broker4", BROKER4_CN);
        Pki.Leaf clientCert = ca.issue("client4", CLIENT4_CN);
        // One tls.config.file per JVM, as Java reads it: the broker's certificate serves both its
        // connections (client) and its own listener (server, reached by TLS producers).
        Path brokerTls = write("broker4-tls.properties", "tls.test.mode.enable=false\n"
            + "tls.client.certPath=" + brokerCert.certPem() + "\n"
            + "tls.client.keyPath=" + brokerCert.keyPem() + "\n"
            + "tls.client.trustCertPath=" + ca.caPem() + "\n"
            + "tls.client.authServer=true\n"
            + "tls.server.certPath=" + brokerCert.certPem() + "\n"
            + "tls.server.keyPath=" + brokerCert.keyPem() + "\n"
            + "tls.server.need.client.auth=none\n");
        Path clientTls = write("client4-tls.properties", "tls.test.mode.enable=false\n"
            + "tls.client.certPath=" + clientCert.certPem() + "\n"
            + "tls.client.keyPath=" + clientCert.keyPem() + "\n"
            + "tls.client.trustCertPath=" + ca.caPem() + "\n"
            + "tls.client.authServer=true\n");
        NameServer ns = mutualTlsNamesrv4(ca, nsCert);
        assertPlainRefused(ns);
        // TLS without a client certificate (Java's test mode): the handshake fails.
        try (RawClient anonymous = new RawClient(true, null)) {
            assertThrows(RuntimeException.class, () -> anonymous.clusterInfo(ns.addr()),
                "a TLS client without a certificate reached " + ns);
        }

        // The 4.9.7 broker in its own JVM with the flags that give a 4.x broker a client
        // certificate (-Dtls.enable, -Dtls.config.file; server mode permissive
        // instead of disabled: the TLS producer below must reach its listener too). Returns once
        // the NameServer lists it (the launcher checks over the broker's own mTLS connection).
        BrokerProcess broker = perTest.add(BrokerProcess.start(harnessClasspath(),
            new BrokerSpec().cluster("TlsCluster4").name("tls4-a").namesrv(ns.addr()),
            List.of("-Dtls.enable=true", "-Dtls.server.mode=permissive", "-Dtls.config.file=" + brokerTls)));

        // This JVM as a 4.9.8 client with -Dtls.enable=true -Dtls.config.file=client4-tls.properties.
        RawClient mtls = perTest.add(withTlsConfigFile(clientTls, () -> new RawClient(true, null)));
        ClusterView cluster = mtls.clusterInfo(ns.addr());
        assertEquals(Map.of(0L, broker.addr()), cluster.addrsOf("tls4-a"), cluster.toString());
        DefaultMQProducer producer = withTlsConfigFile(clientTls, () -> {
            DefaultMQProducer p = LoopbackClients.configure(new DefaultMQProducer(Clients.unique("pg")), ns.addr());
            p.setUseTLS(true);
            p.setSendMsgTimeout(5000);
            p.start();
            return p;
        });
        perTest.add(producer::shutdown);
        String topic = Clients.unique("MtlsTopic");
        assertEquals(10, Clients.send(producer, topic, 10).size());
        RouteView route = awaitRoute(mtls, ns.addr(), topic);
        assertEquals(Map.of(0L, broker.addr()), route.addrsOf("tls4-a"), route.toString());

        if (waymark()) {
            // A verified certificate that names no account is no broker: its REGISTER_BROKER for tls4-a is refused.
            String impostor = "127.0.0.1:" + (broker.spec().listenPort() + 7);
            refused(mtls.invoke(ns.addr(), register("TlsCluster4", "tls4-a", impostor), 3000),
                "REGISTER_BROKER over mTLS as " + CLIENT4_CN,
                UNSIGNED + ". (no AccessKey; the client certificate " + CLIENT4_CN + " is no account's tlsSubject");
            assertEquals(Map.of(0L, broker.addr()), mtls.clusterInfo(ns.addr()).addrsOf("tls4-a"));
        }
    }

    /**
     * mTLS only: {@code tls.server.mode=enforcing}, {@code tls.server.need.client.auth=require},
     * client certificates checked against the test CA. Waymark also with authentication on and
     * one account, named by the broker certificate's CN ({@code tlsSubject}); the control: a
     * stock Java NameServer with {@code -Dtls.server.mode=enforcing -Dtls.config.file=...}
     * holding the same keys.
     */
    private NameServer mutualTlsNamesrv4(Pki ca, Pki.Leaf nsCert) throws Exception {
        Map<String, String> serverTls = new LinkedHashMap<>();
        serverTls.put("tls.server.certPath", nsCert.certPem().toString());
        serverTls.put("tls.server.keyPath", nsCert.keyPem().toString());
        serverTls.put("tls.server.trustCertPath", ca.caPem().toString());
        serverTls.put("tls.server.need.client.auth", "require");
        serverTls.put("tls.server.authClient", "true");
        if (!waymark()) {
            StringBuilder properties = new StringBuilder("tls.test.mode.enable=false\n");
            serverTls.forEach((k, v) -> properties.append(k).append('=').append(v).append('\n'));
            Path nsTls = write("ns4-tls.properties", properties.toString());
            return perTest.add(JavaNamesrvProcess.start(harnessClasspath(),
                List.of("-Dtls.server.mode=enforcing", "-Dtls.config.file=" + nsTls), Map.of()));
        }
        Path accounts = write("accounts4-mtls.yml", "accounts:\n"
            + "  - accessKey: sec4-broker-tls\n"
            + "    secretKey: sec4-broker-tls-secret\n"
            + "    tlsSubject: " + BROKER4_CN + "\n");
        Map<String, String> settings = new LinkedHashMap<>(serverTls);
        settings.put("tls.server.mode", "enforcing");
        settings.put("authenticationEnabled", "true");
        settings.put("authenticationAccountsFile", accounts.toString());
        return namesrv(perTest, settings);
    }

    // ---- helpers ----

    /** A plain (non-TLS) client gets no answer from an enforcing NameServer. */
    private static void assertPlainRefused(NameServer ns) {
        try (RawClient plain = new RawClient(false, null)) {
            assertThrows(RuntimeException.class, () -> plain.clusterInfo(ns.addr()),
                "a plain client reached " + ns);
        }
    }

    /**
     * Runs {@code body} as a JVM started with {@code -Dtls.config.file=<file>} would: Java reads
     * the file each time it builds an SslContext (a client's, when the client is made), into
     * {@code TlsSystemConfig}'s static fields; those are restored afterwards, so this JVM's other
     * servers and clients keep the defaults.
     */
    private static <T> T withTlsConfigFile(Path file, Callable<T> body) throws Exception {
        Map<Field, Object> saved = new LinkedHashMap<>();
        for (Field field : TlsSystemConfig.class.getFields()) {
            if (Modifier.isStatic(field.getModifiers()) && !Modifier.isFinal(field.getModifiers())) {
                saved.put(field, field.get(null));
            }
        }
        try {
            TlsSystemConfig.tlsConfigFile = file.toString();
            return body.call();
        } finally {
            for (Map.Entry<Field, Object> entry : saved.entrySet()) {
                entry.getKey().set(null, entry.getValue());
            }
        }
    }

    private static AclClientRPCHook sign(String accessKey, String secretKey) {
        return new AclClientRPCHook(new SessionCredentials(accessKey, secretKey));
    }

    /** REGISTER_BROKER as a master broker at {@code addr} sends it, with a real RegisterBrokerBody (TopicTest). */
    private static RemotingCommand register(String cluster, String broker, String addr) {
        byte[] body = Bodies.registerBrokerReference(false);
        RemotingCommand request = RemotingCommand.createRequestCommand(103, null);
        request.addExtField("brokerName", broker);
        request.addExtField("brokerAddr", addr);
        request.addExtField("clusterName", cluster);
        request.addExtField("haServerAddr", addr.substring(0, addr.lastIndexOf(':') + 1) + "10912");
        request.addExtField("brokerId", "0");
        request.addExtField("compressed", "false");
        request.addExtField("enableActingMaster", "false");
        request.addExtField("bodyCrc32", String.valueOf(UtilAll.crc32(body)));
        request.setBody(body);
        return request;
    }

    private static RemotingCommand unregister(String cluster, String broker, String addr) {
        RemotingCommand request = RemotingCommand.createRequestCommand(104, null);
        request.addExtField("brokerName", broker);
        request.addExtField("brokerAddr", addr);
        request.addExtField("clusterName", cluster);
        request.addExtField("brokerId", "0");
        return request;
    }

    /** NO_PERMISSION (16), with {@code reason} in the remark when given. */
    private static void refused(RemotingCommand response, String what, String reason) {
        String text = what + ": code " + response.getCode() + " remark " + response.getRemark();
        System.out.println("refused as expected? " + text);
        assertEquals(16, response.getCode(), text);
        if (reason != null) {
            assertTrue(String.valueOf(response.getRemark()).contains(reason), text);
        }
    }

    /**
     * What a Java client shows for a NO_PERMISSION answer: {@code CODE: 16  DESC:
     * <remark>}, the remark naming {@code reason} and the request code.
     */
    private static void assertRefusedOutput(String text, Mqadmin.Result result, String reason, int code) {
        System.out.println("mqadmin refused as expected? " + result);
        assertTrue(text.contains("CODE: 16"), result::toString);
        assertTrue(text.contains(reason), result::toString);
        assertTrue(text.contains("request code " + code + ")"), result::toString);
    }

    private static Mqadmin.Result ok(Mqadmin.Result result) {
        assertTrue(result.ok(), result::toString);
        return result;
    }

    private void assertKvMissing(String namespace, String key) {
        Exception gone = null;
        try {
            authAdmin.getKVConfig(namespace, key);
        } catch (Exception e) {
            gone = e;
        }
        // GET_KV_CONFIG of a missing key answers QUERY_NOT_FOUND (22).
        assertTrue(gone != null && String.valueOf(gone.getMessage()).contains("22"), String.valueOf(gone));
    }

    private static void deleteTree(Path root) {
        if (root == null || !Files.exists(root)) {
            return;
        }
        try (var paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // Best effort.
        }
    }
}
