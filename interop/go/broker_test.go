package interop

// The real Java broker, started through interop/java/broker.sh (which exec's the JVM
// running dev.waymark.interop.harness.BrokerLauncher). The launcher registers the broker
// with the given NameServer, prints `BROKER READY <addr>` once the NameServer lists it,
// and stops (unregistering) on SIGTERM or at the end of its stdin.

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

const (
	// envBrokerScript overrides the launcher script (default ../java/broker.sh).
	envBrokerScript = "WAYMARK_BROKER_SCRIPT"
	// envJavaProfile is interop/java's Maven profile, i.e. the broker's release.
	envJavaProfile = "WAYMARK_JAVA_PROFILE"
)

// remotingVersion is MQVersion.CURRENT_VERSION per interop/java profile (its README).
// BrokerStartup sets JVM property rocketmq.remoting.version to it before it creates the
// BrokerController; BrokerLauncher does not (yet), so its requests say version 0 and a
// NameServer, Java's as well as Waymark's, reads the REGISTER_BROKER body in the pre-3.0.11
// format (a bare topic-config wrapper, what brokers before 3.0.11 sent) and registers no
// topics. Setting the property here
// makes the broker behave as a broker started by mqbroker does.
var remotingVersion = map[string]string{"rmq5": "515", "rmq53": "479", "rmq4": "409"}

var brokerReady = regexp.MustCompile(`BROKER READY (\S+)`)

// startBroker starts a Java broker (a master on a free port, autoCreateTopicEnable=true)
// registered with namesrv, and returns its address. Its store and home (logs) are in a
// temp dir removed after the test.
func startBroker(t *testing.T, namesrv string) string {
	t.Helper()
	script := os.Getenv(envBrokerScript)
	if script == "" {
		script, _ = filepath.Abs("../java/broker.sh")
	}
	if _, err := os.Stat(script); err != nil {
		skipOrFail(t, "no Java broker launcher: %v (set %s)", err, envBrokerScript)
	}
	profile := os.Getenv(envJavaProfile)
	if profile == "" {
		profile = "rmq5"
	}
	cp := filepath.Join(filepath.Dir(script), "target", profile, "classpath.txt")
	if _, err := os.Stat(cp); err != nil {
		// broker.sh would build it, inside this test's time budget; run-go.sh builds it first.
		skipOrFail(t, "interop/java is not built for profile %s (%v); run interop/run-go.sh, or mvn -P %s test-compile in interop/java", profile, err, profile)
	}
	dir := t.TempDir()
	opts := "-Xmx256m -XX:+UseSerialGC"
	if v, ok := remotingVersion[profile]; ok {
		opts += " -Drocketmq.remoting.version=" + v
	}
	argv := []string{
		script, "--profile", profile,
		"--namesrv", namesrv,
		"--cluster", "WaymarkGoCluster",
		"--name", "waymark-go-broker",
		"--store", filepath.Join(dir, "store"),
	}
	_, m := startProc(t, "java broker", brokerReady, 60*time.Second, argv,
		"WAYMARK_BROKER_HOME="+filepath.Join(dir, "home"),
		"WAYMARK_BROKER_JAVA_OPTS="+opts,
	)
	return m[1]
}
