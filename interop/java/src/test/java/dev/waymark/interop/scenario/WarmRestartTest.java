package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.NameServers;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.RouteView;
import dev.waymark.interop.harness.WaymarkNameServer;
import dev.waymark.interop.vectors.Release;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.remoting.RPCHook;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;
import org.junit.jupiter.api.Test;

/**
 * What clients see while a NameServer restarts under ten registered brokers. Waymark writes
 * its route tables to its snapshot on SIGTERM and serves them again as soon as it accepts
 * connections, byte for byte as before, until the brokers register again; the Java NameServer
 * (the control) forgets every route and answers TOPIC_NOT_EXIST for a broker's topics until
 * that broker's next periodic registration, up to {@code registerNameServerPeriod} later.
 *
 * <p>Each broker has a topic of its own and one topic all of them serve. After the restart
 * one connection asks for the routes of every topic, request after request, for one
 * registration period and some slack, so that every broker has registered again before it
 * ends. Each broker's own remoting client reports when it sends REGISTER_BROKER
 * ({@link RegistrationWatch}): an answer received before any broker of its topic has sent one
 * since the stop can only come from what the restarted server restored, and that answer is
 * compared byte for byte with the one recorded before the restart.
 */
class WarmRestartTest extends ScenarioBase {
    private static final int BROKERS = 10;
    private static final String CLUSTER = "WarmRestartCluster";
    /**
     * The brokers' registration period: the least a broker accepts (it raises anything lower to
     * 10 s), short for the test's sake and still a window in which Java's answers are visible.
     */
    private static final long REGISTER_PERIOD_MILLIS = 10_000;
    /** Beyond one period, for the last broker's registration to reach the server and be answered. */
    private static final long SLACK_MILLIS = 3_000;
    /** REGISTER_BROKER; RequestCode's package differs between 4.x and 5.x. */
    private static final int REGISTER_BROKER = 103;
    private static final int SUCCESS = 0;
    private static final int TOPIC_NOT_EXIST = 17;

    @Test
    void clientsKeepTheirRoutesWhileTheNameServerRestarts() throws Exception {
        // Not ScenarioBase.namesrv(): its exit check would take the restart's stop for a crash.
        // The restarted server's liveness is checked below instead.
        NameServer first = perTest.add(NameServers.start(Map.of()));
        String addr = first.addr();
        List<Member> members = startBrokers(addr);
        DefaultMQAdminExt admin = Clients.admin(perTest, addr);
        RawClient raw = raw(perTest);

        String shared = Clients.unique("WarmRestartShared");
        List<Topic> topics = new ArrayList<>();
        for (Member member : members) {
            String own = Clients.unique("WarmRestart-" + member.broker.spec().brokerName());
            admin.createAndUpdateTopicConfig(member.broker.addr(), new TopicConfig(own, 2, 2, 6));
            admin.createAndUpdateTopicConfig(member.broker.addr(), new TopicConfig(shared, 2, 2, 6));
            topics.add(new Topic(own, List.of(member)));
        }
        topics.add(new Topic(shared, members));
        for (Topic topic : topics) {
            Poll.untilTrue(seconds(20), "route of " + topic.name + " with its " + topic.members.size()
                + " broker(s)", () -> topic.servedByAll(raw.route(addr, topic.name)));
            topic.before = routeBody(raw, addr, topic.name);
            assertEquals(SUCCESS, topic.before.getCode(), topic.name + ": " + topic.before.getRemark());
        }

        // One connection for every query after the restart, opened by the first of them.
        RawClient queries = raw(perTest);
        if (first instanceof WaymarkNameServer waymark) {
            assertTrue(waymark.alive(), () -> first + " exited before the restart; its log:\n" + waymark.logTail());
        }
        long stopping = System.nanoTime();
        members.forEach(member -> member.watch.stopBegins());
        NameServer restarted = perTest.add(first.restart());
        long serving = System.nanoTime();
        members.forEach(member -> member.watch.restartedServes());
        assertEquals(addr, restarted.addr(), "the restarted NameServer must listen where the first one did");

        Tally tally = new Tally(topics.size());
        long end = serving + Duration.ofMillis(REGISTER_PERIOD_MILLIS + SLACK_MILLIS).toNanos();
        while (System.nanoTime() - end < 0) {
            for (int t = 0; t < topics.size(); t++) {
                Topic topic = topics.get(t);
                RemotingCommand answer = routeBody(queries, addr, topic.name);
                // Checked once the answer is in: if no broker of the topic has sent a registration
                // since the stop even now, the answer came from the restored routes alone.
                boolean restoredOnly = topic.members.stream().noneMatch(m -> m.watch.sentSinceStop());
                tally.add(t, topic, answer, restoredOnly, System.nanoTime() - serving);
            }
        }

        long[] registeredAfter = members.stream().mapToLong(m -> m.watch.registeredAfterMillis(serving)).sorted()
            .toArray();
        String summary = String.format("warm restart: kind=%s rocketmq=%s brokers=%d topics=%d queries=%d"
                + " topicNotExist=%d otherErrors=%d comparedBeforeReRegistration=%d identicalBodies=%d"
                + " differentBodies=%d differentBodiesAfterReRegistration=%d restartMs=%d firstRoutableAfterMs=%d"
                + " allRoutableAfterMs=%d sameRoutesAgainAfterMs=%d brokersReRegisteredAfterMs=%d..%d",
            restarted.kind(), Release.version(), BROKERS, topics.size(), tally.queries, tally.topicNotExist,
            tally.otherErrors, tally.compared, tally.identical, tally.different, tally.differentLater,
            (serving - stopping) / 1_000_000, tally.firstRoutableMillis, tally.allRoutableMillis,
            tally.sameAgainMillis, registeredAfter[0], registeredAfter[registeredAfter.length - 1]);
        System.out.println(summary);

        for (Member member : members) {
            assertTrue(member.watch.registeredWithRestarted(), member.broker.spec().brokerName()
                + " did not register with the restarted NameServer within "
                + (REGISTER_PERIOD_MILLIS + SLACK_MILLIS) + " ms: " + summary);
        }
        for (Topic topic : topics) {
            RouteView route = raw.route(addr, topic.name);
            assertTrue(topic.servedByAll(route), topic.name + " after every broker registered again: " + route);
        }
        if (restarted instanceof WaymarkNameServer waymark) {
            assertTrue(waymark.alive(), () -> restarted + " exited; its log:\n" + waymark.logTail());
        }
        assertEquals(0, tally.otherErrors, "answers other than SUCCESS and TOPIC_NOT_EXIST: " + summary);
        if (waymark()) {
            assertEquals(0, tally.topicNotExist, "Waymark restored its routes from the snapshot: " + summary);
            assertTrue(tally.compared > 0, "no answer came before the first re-registration: " + summary);
            assertEquals(0, tally.different, "restored routes must be byte-identical to those before the restart: "
                + summary);
        } else {
            // The control: the Java NameServer starts with no routes and has none for a
            // broker's topics until that broker registers again.
            assertTrue(tally.topicNotExist > 0, "the Java NameServer answered every route at once: " + summary);
        }
    }

    /**
     * Starts the brokers one after another (each start chooses its free ports and binds them
     * before the next one looks), then waits for their registrations together, since each
     * wait may take a few seconds ({@link EmbeddedBroker#awaitRegistered}).
     */
    private List<Member> startBrokers(String namesrv) throws Exception {
        BrokerFleet fleet = perTest.add(new BrokerFleet());
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < BROKERS; i++) {
            BrokerSpec spec = new BrokerSpec().cluster(CLUSTER).name(String.format("warm-%02d", i)).namesrv(namesrv)
                .set("registerNameServerPeriod", String.valueOf(REGISTER_PERIOD_MILLIS));
            EmbeddedBroker broker = fleet.add(EmbeddedBroker.startUnchecked(spec));
            RegistrationWatch watch = new RegistrationWatch();
            broker.controller().getBrokerOuterAPI().registerRPCHook(watch);
            members.add(new Member(broker, watch));
        }
        BrokerFleet.inParallel(members, member -> member.broker.awaitRegistered(List.of(namesrv), seconds(30)));
        return members;
    }

    private static RemotingCommand routeBody(RawClient client, String namesrv, String topic) {
        RemotingCommand request = RemotingCommand.createRequestCommand(RawClient.GET_ROUTEINFO_BY_TOPIC, null);
        request.addExtField("topic", topic);
        return client.invoke(namesrv, request, 3000);
    }

    /** A broker and the watch on its registrations. */
    private record Member(EmbeddedBroker broker, RegistrationWatch watch) {
    }

    /** A topic, the brokers that serve it, and its route answer from before the restart. */
    private static final class Topic {
        final String name;
        final List<Member> members;
        RemotingCommand before;

        Topic(String name, List<Member> members) {
            this.name = name;
            this.members = members;
        }

        /** Whether {@code route} lists every broker of the topic with its queues. */
        boolean servedByAll(RouteView route) {
            return route != null && members.stream().allMatch(m -> route.queue(m.broker.spec().brokerName()).isPresent()
                && Map.of(0L, m.broker.addr()).equals(route.addrsOf(m.broker.spec().brokerName())));
        }

        boolean sameAsBefore(RemotingCommand answer) {
            return answer.getCode() == SUCCESS && Arrays.equals(before.getBody(), answer.getBody());
        }
    }

    /**
     * Times a broker's REGISTER_BROKER requests as its own remoting client sends them (an
     * {@link RPCHook} on the broker's {@code BrokerOuterAPI}). {@link #stopBegins} is called as
     * the NameServer's stop begins: a registration sent from then on may reach the restarted
     * server, so answers are compared only while none has been sent. {@link #restartedServes}
     * is called once the restarted server accepts connections: the old one has exited by then,
     * so a successful registration answered from then on was the restarted server's.
     */
    private static final class RegistrationWatch implements RPCHook {
        private static final long NEVER = Long.MIN_VALUE;

        private volatile boolean stopBegun;
        private volatile boolean restartedServing;
        private final AtomicLong firstSentSinceStop = new AtomicLong(NEVER);
        private final AtomicLong firstRegisteredWithRestarted = new AtomicLong(NEVER);

        void stopBegins() {
            stopBegun = true;
        }

        void restartedServes() {
            restartedServing = true;
        }

        boolean sentSinceStop() {
            return firstSentSinceStop.get() != NEVER;
        }

        boolean registeredWithRestarted() {
            return firstRegisteredWithRestarted.get() != NEVER;
        }

        /** When its first registration with the restarted server was answered, after {@code since}; -1 if never. */
        long registeredAfterMillis(long since) {
            long at = firstRegisteredWithRestarted.get();
            return at == NEVER ? -1 : (at - since) / 1_000_000;
        }

        @Override
        public void doBeforeRequest(String remoteAddr, RemotingCommand request) {
            if (request.getCode() == REGISTER_BROKER && stopBegun) {
                firstSentSinceStop.compareAndSet(NEVER, System.nanoTime());
            }
        }

        @Override
        public void doAfterResponse(String remoteAddr, RemotingCommand request, RemotingCommand response) {
            if (request.getCode() == REGISTER_BROKER && restartedServing && response != null
                && response.getCode() == SUCCESS) {
                firstRegisteredWithRestarted.compareAndSet(NEVER, System.nanoTime());
            }
        }
    }

    /** The counts and times of the answers after the restart. */
    private static final class Tally {
        private static final long NOT_YET = -1;

        int queries;
        int topicNotExist;
        int otherErrors;
        /** Answers served before any broker of their topic had sent a registration since the stop. */
        int compared;
        int identical;
        int different;
        /** Routes that differ from before, once a broker of the topic may have registered again. */
        int differentLater;
        long firstRoutableMillis = NOT_YET;
        long allRoutableMillis = NOT_YET;
        long sameAgainMillis = NOT_YET;
        /** Per topic, the code of its latest answer and whether it equalled the one before the restart. */
        private final int[] latestCode;
        private final boolean[] latestSame;

        Tally(int topics) {
            latestCode = new int[topics];
            latestSame = new boolean[topics];
            Arrays.fill(latestCode, -1);
        }

        void add(int index, Topic topic, RemotingCommand answer, boolean restoredOnly, long sinceServingNanos) {
            long millis = sinceServingNanos / 1_000_000;
            queries++;
            int code = answer.getCode();
            boolean same = topic.sameAsBefore(answer);
            if (code == TOPIC_NOT_EXIST) {
                topicNotExist++;
            } else if (code != SUCCESS) {
                otherErrors++;
            } else if (firstRoutableMillis == NOT_YET) {
                firstRoutableMillis = millis;
            }
            if (code == SUCCESS && restoredOnly) {
                compared++;
                if (same) {
                    identical++;
                } else {
                    different++;
                }
            } else if (code == SUCCESS && !same) {
                differentLater++;
            }
            latestCode[index] = code;
            latestSame[index] = same;
            if (allRoutableMillis == NOT_YET && Arrays.stream(latestCode).allMatch(c -> c == SUCCESS)) {
                allRoutableMillis = millis;
            }
            if (sameAgainMillis == NOT_YET && allTrue(latestSame)) {
                sameAgainMillis = millis;
            }
        }

        private static boolean allTrue(boolean[] values) {
            for (boolean value : values) {
                if (!value) {
                    return false;
                }
            }
            return true;
        }
    }
}
