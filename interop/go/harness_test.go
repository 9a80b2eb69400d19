package interop

// Child processes (the NameServer, the Java broker) for the tests: start, wait for the
// ready line, keep the last output lines for failure reports, and stop them again on
// every path out of a test, including a panic or `go test -timeout` (see TestMain).

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/rlog"
)

const (
	envNamesrvBin = "WAYMARK_NAMESRV_BIN"
	// envRequire turns "cannot run here" skips into failures (set by run-go.sh and CI).
	envRequire = "WAYMARK_INTEROP_REQUIRE"
)

func TestMain(m *testing.M) {
	flag.Parse()
	rlog.SetLogLevel("warn")
	// `go test -timeout` panics without running t.Cleanup; stop the children shortly
	// before that happens so that no NameServer or JVM outlives the test binary.
	if f := flag.Lookup("test.timeout"); f != nil {
		if d, err := time.ParseDuration(f.Value.String()); err == nil && d > 10*time.Second {
			timer := time.AfterFunc(d-5*time.Second, func() {
				fmt.Fprintln(os.Stderr, "interop: test timeout is near, stopping child processes")
				stopAll()
			})
			defer timer.Stop()
		}
	}
	code := m.Run()
	stopAll()
	os.Exit(code)
}

// skipOrFail skips a test that cannot run on this machine, or fails it when the
// environment says the interop suite must run (WAYMARK_INTEROP_REQUIRE=1 or CI=true).
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv(envRequire) == "1" || os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// proc is one started child process. Output (stdout and stderr merged) is kept as the
// last tailLines lines, ANSI colours removed.
type proc struct {
	name string
	cmd  *exec.Cmd

	mu    sync.Mutex
	lines []string

	stdin   *os.File // write end of the child's stdin, held open until stop()
	exited  chan struct{}
	waitErr error
	once    sync.Once
}

const tailLines = 60

var (
	procsMu sync.Mutex
	procs   []*proc
	ansi    = regexp.MustCompile(`\x1b\[[0-9;]*m`)
)

// startProc starts argv in its own process group, waits until a line of its output
// matches ready and returns the submatches of that line. The process is stopped when
// the test ends; when the test failed, its last output lines are logged. Its stdin is a
// pipe that stays open until then (the broker launcher stops at end of stdin, which
// also stops it if the test binary dies).
func startProc(t *testing.T, name string, ready *regexp.Regexp, timeout time.Duration, argv []string, env ...string) (*proc, []string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	// Own group: stop() signals the JVM together with anything it forked. Pdeathsig:
	// the kernel kills the child if the test binary dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatalf("%s: pipe: %v", name, err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatalf("%s: pipe: %v", name, err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, w, w
	err = cmd.Start()
	w.Close()
	inR.Close()
	if err != nil {
		r.Close()
		inW.Close()
		t.Fatalf("%s: start %q: %v", name, showArgv(argv), err)
	}
	p := &proc{name: name, cmd: cmd, stdin: inW, exited: make(chan struct{})}
	procsMu.Lock()
	procs = append(procs, p)
	procsMu.Unlock()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("last output of %s (%s):\n%s", name, showArgv(argv), p.tail())
		}
	})

	matched := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := ansi.ReplaceAllString(sc.Text(), "")
			p.mu.Lock()
			p.lines = append(p.lines, line)
			if len(p.lines) > tailLines {
				p.lines = p.lines[len(p.lines)-tailLines:]
			}
			p.mu.Unlock()
			if m := ready.FindStringSubmatch(line); m != nil {
				select {
				case matched <- m:
				default:
				}
			}
		}
		r.Close()
	}()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()

	select {
	case m := <-matched:
		return p, m
	case <-p.exited:
		// Give the reader a moment to drain the last lines before reporting them.
		time.Sleep(100 * time.Millisecond)
		t.Fatalf("%s exited before it was ready (%v):\n%s", name, p.waitErr, p.tail())
	case <-time.After(timeout):
		t.Fatalf("%s not ready after %v (waiting for %q):\n%s", name, timeout, ready, p.tail())
	}
	return nil, nil
}

// showArgv is argv for a log line, with long arguments (class paths) shortened.
func showArgv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if len(a) > 120 {
			a = fmt.Sprintf("%s...(%d bytes)", a[:40], len(a))
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

func (p *proc) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n")
}

// stop sends SIGTERM to the process group, and SIGKILL if it is still there after 5 s.
func (p *proc) stop() {
	p.once.Do(func() {
		pgid := p.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		p.stdin.Close()
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.exited
		}
		// Children that ignored SIGTERM while their leader exited.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	})
}

func stopAll() {
	procsMu.Lock()
	all := append([]*proc(nil), procs...)
	procsMu.Unlock()
	var wg sync.WaitGroup
	for _, p := range all {
		wg.Add(1)
		go func() { defer wg.Done(); p.stop() }()
	}
	wg.Wait()
}

// namesrvBin is the Waymark NameServer binary: WAYMARK_NAMESRV_BIN, else the workspace's
// target/debug build when there is one.
func namesrvBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(envNamesrvBin); bin != "" {
		return bin
	}
	bin, _ := filepath.Abs("../../target/debug/rmq-namesrv")
	if _, err := os.Stat(bin); err != nil {
		skipOrFail(t, "%s is not set and %s does not exist (cargo build -p rmq-namesrv)", envNamesrvBin, bin)
	}
	return bin
}

// namesrvReady is the NameServer's boot line; it ends with the address it listens on.
var namesrvReady = regexp.MustCompile(`The Name Server boot success.*address (\S+:\d+)\s*$`)

// startNamesrv starts the Waymark NameServer on 127.0.0.1 port 0 (it binds a port the kernel
// picks, so nothing is guessed free) with its KV store and config file in a temp dir, and
// returns the address from its boot line. Each of settings ("key=value") is passed as
// `--set key=value`.
func startNamesrv(t *testing.T, settings ...string) string {
	t.Helper()
	_, m := startNamesrvUntil(t, namesrvReady, settings...)
	return m[1]
}

// startNamesrvUntil is startNamesrv, waiting for a line that matches ready (printed with or
// after the boot line) and returning the process and that line's submatches.
func startNamesrvUntil(t *testing.T, ready *regexp.Regexp, settings ...string) (*proc, []string) {
	t.Helper()
	bin := namesrvBin(t)
	dir := t.TempDir()
	argv := []string{
		bin,
		"--listen", "127.0.0.1:0",
		"--set", "kvConfigPath=" + filepath.Join(dir, "kv.json"),
		"--set", "configStorePath=" + filepath.Join(dir, "ns.properties"),
		// Its own route snapshot: the default is under the shared HOME, where one
		// test's routes would be restored into the next test's server.
		"--set", "routeSnapshotPath=" + filepath.Join(dir, "routes.snapshot"),
	}
	for _, s := range settings {
		argv = append(argv, "--set", s)
	}
	return startProc(t, "waymark namesrv", ready, 20*time.Second, argv, "NO_COLOR=1")
}

// uniq gives names (topics, groups, instance names) that cannot collide between runs or
// between the tests of one run, which share the Go client's process-wide client table.
func uniq(prefix string) string {
	return fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), time.Now().UnixNano()%1_000_000_000)
}
