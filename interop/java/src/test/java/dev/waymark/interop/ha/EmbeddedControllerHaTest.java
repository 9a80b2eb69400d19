package dev.waymark.interop.ha;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * The controller embedded in the NameServer ({@code enableControllerInNamesrv=true}, one
 * process): Waymark's {@code rmq-namesrv}, or for the control the real Java
 * {@code NamesrvStartup}, which starts a {@code ControllerManager} beside the NameServer from
 * the same {@code -c} file. The brokers name the process twice: its NameServer port as
 * {@code namesrvAddr}, its controller port as {@code controllerAddr}. The first two scenarios:
 * three replicas join and exchange messages; the master is killed and replaced.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 240)
class EmbeddedControllerHaTest extends HaBase {
    @BeforeAll
    @Timeout(value = 150)
    void start() throws Exception {
        deploy(HaCluster::embedded);
    }

    @Test
    @Order(1)
    void threeReplicasJoin() throws Exception {
        threeReplicasJoinAndExchangeMessages();
    }

    @Test
    @Order(2)
    void killedMasterIsReplaced() throws Exception {
        killMasterFailsOver();
    }
}
