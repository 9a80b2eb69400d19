// Package interop runs the real Apache RocketMQ Go client
// (github.com/apache/rocketmq-client-go/v2) against the Waymark NameServer.
//
// Everything lives in the tests (`go test ./...`); this file only carries the package
// documentation. The tests start the Waymark binary (WAYMARK_NAMESRV_BIN) and, for the
// publish/subscribe tests, a real Java broker through interop/java's BrokerLauncher, and
// put a small frame-recording TCP proxy between the Go client and the NameServer so that
// the bytes the client saw can be asserted on and printed when something fails.
//
// The Go client is the interesting peer because it differs from Java on the wire: it
// sends JSON headers with `"language":"GO"`, version 317 and no
// `serializeTypeCurrentRPC`, and it expects route bodies in fastjson's default dialect
// (`"brokerAddrs":{0:"host:port"}`, not JSON: integer map keys unquoted), which it
// repairs with string surgery. The NameServer must accept its headers as fastjson does
// and answer it in that dialect, as Java answers any client below version 401.
//
// Normally run through interop/run-go.sh, which builds the NameServer and the Java
// launcher first.
package interop
