package dev.waymark.interop.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.waymark.interop.harness.ControllerCodes;
import dev.waymark.interop.harness.ControllerProcess;
import dev.waymark.interop.harness.Poll;
import dev.waymark.interop.harness.RawClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * The harness's controller groups, as the failover tests use them: three real controller
 * processes of the profile's release (DLedger peers on consecutive free ports) elect one
 * leader, every node names it in CONTROLLER_GET_METADATA_INFO, followers refuse leader-only
 * requests; after kill -9 of the leader another node leads, and the killed node, restarted
 * on its address and store, follows it. Skipped on 4.x, which has no controller.
 */
@EnabledIf(value = "dev.waymark.interop.harness.JavaControllers#available",
    disabledReason = "this RocketMQ release has no controller")
@Timeout(value = 180)
class ControllerGroupTest {
    private static final Duration ELECTION = Duration.ofSeconds(60);

    @Test
    void threeProcessesElectALeaderAndAnotherAfterItIsKilled() throws Exception {
        long start = System.nanoTime();
        List<ControllerProcess> nodes = new ArrayList<>(
            ControllerProcess.startGroup(ControllerProcess.classpathFile(), 3, Map.of()));
        System.out.printf("3 controller processes serving %d ms after the start: %s%n", millisSince(start), nodes);
        try (RawClient client = new RawClient()) {
            ControllerProcess leader = Poll.until(ELECTION, 200, "one leader among " + nodes, () -> onlyLeader(nodes));
            System.out.printf("%s leads, %d ms after the start%n", leader, millisSince(start));
            awaitAgreement(nodes, leader);
            for (ControllerProcess node : nodes) {
                Map<String, String> meta = node.metadata();
                assertEquals(leader.addr(), meta.get("controllerLeaderAddress"), node + ": leader address");
                assertEquals(String.valueOf(node == leader), meta.get("isLeader"), node + ": isLeader");
                for (ControllerProcess peer : nodes) {
                    assertTrue(meta.get("peers").contains(peer.selfId() + ":" + peer.addr() + ";"),
                        node + ": peers " + meta.get("peers") + " without " + peer);
                }
            }
            ControllerProcess follower = nodes.stream().filter(n -> n != leader).findFirst().orElseThrow();
            RemotingCommand request = RemotingCommand.createRequestCommand(ControllerCodes.GET_REPLICA_INFO, null);
            request.addExtField("brokerName", "broker-a");
            assertEquals(ControllerCodes.NOT_LEADER, client.invoke(follower.addr(), request, 3000).getCode(),
                "a follower's answer to CONTROLLER_GET_REPLICA_INFO");

            long kill = System.nanoTime();
            leader.kill();
            List<ControllerProcess> rest = nodes.stream().filter(n -> n != leader).toList();
            ControllerProcess next = Poll.until(ELECTION, 200, "a new leader among " + rest, () -> onlyLeader(rest));
            System.out.printf("%s leads, %d ms after kill -9 of %s%n", next, millisSince(kill), leader);
            assertNotEquals(leader.selfId(), next.selfId());

            ControllerProcess again = leader.restart();
            nodes.set(nodes.indexOf(leader), again);
            assertEquals(leader.addr(), again.addr(), "address after the restart");
            awaitAgreement(nodes, next);
            assertNotNull(again.metadata(), again + " answers");
            System.out.printf("%s restarted and follows %s%n", again, next);
        } finally {
            nodes.forEach(ControllerProcess::discard);
        }
    }

    /** Waits until every node names {@code leader} as the group's leader. */
    private static void awaitAgreement(List<ControllerProcess> nodes, ControllerProcess leader) {
        Poll.untilTrue(ELECTION, 200, "every node naming " + leader + " as leader", () -> nodes.stream()
            .allMatch(node -> {
                Map<String, String> meta = node.metadata();
                return meta != null && leader.selfId().equals(meta.get("controllerLeaderId"));
            }));
    }

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }

    /** The one node that says it is leader, or null while there is none (or, briefly, two). */
    private static ControllerProcess onlyLeader(List<ControllerProcess> nodes) {
        List<ControllerProcess> leaders = nodes.stream().filter(ControllerProcess::isLeader).toList();
        return leaders.size() == 1 ? leaders.get(0) : null;
    }
}
