package dev.waymark.interop.scenario;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import dev.waymark.interop.harness.BrokerSpec;
import dev.waymark.interop.harness.Closer;
import dev.waymark.interop.harness.EmbeddedBroker;
import dev.waymark.interop.harness.NameServer;
import dev.waymark.interop.harness.NameServers;
import dev.waymark.interop.harness.RawClient;
import dev.waymark.interop.harness.WaymarkNameServer;
import dev.waymark.interop.vectors.Release;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Common ground of the scenario tests: they run only when {@code -Dwaymark.namesrv=waymark|java}
 * is given (interop/run-java.sh does, once per NameServer), against NameServers started by the
 * test, with real brokers and clients of the profile's release. Everything a test starts is
 * closed after it ({@link #perTest}) or after its class ({@link #perClass}), last first.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 150)
abstract class ScenarioBase {
    /** Closed after each test. */
    protected final Closer perTest = new Closer();
    /** Closed after the class. */
    protected final Closer perClass = new Closer();

    private final List<NameServer> namesrvs = new ArrayList<>();
    /** Stopped after each test, so no longer checked by the next test of the class. */
    private final List<NameServer> perTestNamesrvs = new ArrayList<>();

    /**
     * Skips the class unless a NameServer kind was chosen. An assumption, not a class-level
     * condition annotation: JUnit does not inherit those from a superclass.
     */
    @BeforeAll
    void requireChosenNameServer() {
        assumeTrue(System.getProperty("waymark.namesrv", "").matches("waymark|java"),
            "scenario tests run only with -Dwaymark.namesrv=waymark|java");
    }

    /** Starts a NameServer of the selected kind, closed with {@code closer}. */
    protected NameServer namesrv(Closer closer, Map<String, String> settings) throws Exception {
        NameServer namesrv = NameServers.start(settings);
        namesrvs.add(namesrv);
        closer.add(namesrv);
        if (closer == perTest) {
            perTestNamesrvs.add(namesrv);
        }
        return namesrv;
    }

    /** Starts a broker and waits until it is registered with every NameServer of its spec. */
    protected EmbeddedBroker broker(Closer closer, BrokerSpec spec) throws Exception {
        return closer.add(EmbeddedBroker.start(spec));
    }

    protected RawClient raw(Closer closer) {
        return closer.add(new RawClient());
    }

    protected static boolean waymark() {
        return NameServers.isWaymark();
    }

    protected static boolean v5() {
        return Release.isV5();
    }

    protected static Duration seconds(long s) {
        return Duration.ofSeconds(s);
    }

    /** A Waymark NameServer that died during a test is a finding of its own. */
    private void checkAlive() {
        for (NameServer namesrv : namesrvs) {
            if (namesrv instanceof WaymarkNameServer w && !stoppedOnPurpose.contains(w)) {
                assertTrue(w.alive(), () -> "the Waymark NameServer " + w + " exited; its log:\n" + w.logTail());
            }
        }
    }

    private final List<NameServer> stoppedOnPurpose = new ArrayList<>();

    /** Stops a NameServer as part of the scenario (not a crash). */
    protected void stopNamesrv(NameServer namesrv) {
        stoppedOnPurpose.add(namesrv);
        namesrv.stop();
    }

    @AfterEach
    void closePerTest() {
        try {
            checkAlive();
        } finally {
            perTest.close();
            namesrvs.removeAll(perTestNamesrvs);
            perTestNamesrvs.clear();
        }
    }

    @AfterAll
    void closePerClass() {
        perClass.close();
    }
}
