package interop

// The Go client against a NameServer that serves plain and TLS on one port
// (tls.server.mode=permissive, with a certificate) and requires authentication
// (docs/security.md). The Java broker cannot sign: an address allow-list admits it. The Go
// producer, consumer and admin do not sign either and need not: route reads stay open. A
// TLS client gets the same route on the same port, and an unsigned write is refused.
//
// The TLS client is a crypto/tls connection of the test's own, not the Go client's
// WithTls option: that option sets UseTls on the library's process-wide default
// RemotingClientConfig (every client made afterwards in this test binary would dial TLS),
// and it skips certificate verification.

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPermissiveTLSWithAuthentication(t *testing.T) {
	dir := t.TempDir()
	pki := newTestPKI(t, dir)
	// The allow-list is the only way in for writers without a signature: broker rights
	// for 127.0.0.1 (the Java broker), admin writes for no one.
	accounts := filepath.Join(dir, "plain_acl.yml")
	writeFile(t, accounts, "globalWhiteRemoteAddresses:\n  - 127.0.0.1\n")
	ns := startNamesrv(t,
		"tls.server.mode=permissive",
		"tls.server.certPath="+pki.certPath,
		"tls.server.keyPath="+pki.keyPath,
		"authenticationEnabled=true",
		"authenticationAccountsFile="+accounts,
	)

	// Plain: the broker registers (startBroker waits until the NameServer lists it), the Go
	// admin finds the route, the producer's messages reach the consumer.
	route := produceConsume(t, ns)

	// TLS on the same port, the server's certificate verified against the test CA: the
	// same route as the plain clients got.
	t.Run("TLS route query", func(t *testing.T) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ns, &tls.Config{
			RootCAs:    pki.roots,
			MinVersion: tls.VersionTLS12,
		})
		if err != nil {
			t.Fatalf("TLS handshake with %s: %v", ns, err)
		}
		defer conn.Close()
		if peer := conn.ConnectionState().PeerCertificates; len(peer) == 0 || !bytes.Equal(peer[0].Raw, pki.leaf.Raw) {
			t.Fatalf("server certificate is not the one configured (got %d certificates)", len(peer))
		}
		resp, err := roundTrip(conn, time.Now().Add(5*time.Second), codeGetRouteInfoByTopic, 1,
			map[string]string{"topic": route.topic}, nil)
		if err != nil {
			t.Fatalf("GET_ROUTEINFO_BY_TOPIC over TLS: %v", err)
		}
		if resp.hdr.Code != codeSuccess {
			t.Fatalf("GET_ROUTEINFO_BY_TOPIC %s over TLS: code %d, want %d:\n%s", route.topic, resp.hdr.Code, codeSuccess, resp)
		}
		checkJavaResponseHeader(t, resp, codeSuccess, nil)
		if want := javaRouteBody(route); string(resp.body) != want {
			t.Errorf("route body over TLS differs from the plain answer:\n  got:  %s\n  want: %s",
				printable(resp.body, 2000), want)
		}
	})

	// Plain, unsigned admin write from 127.0.0.1: the allow-list gives broker rights only,
	// so PUT_KV_CONFIG is refused with NO_PERMISSION and nothing is stored.
	t.Run("unsigned write refused", func(t *testing.T) {
		conn, err := net.DialTimeout("tcp", ns, 5*time.Second)
		if err != nil {
			t.Fatalf("dial %s: %v", ns, err)
		}
		defer conn.Close()
		deadline := time.Now().Add(5 * time.Second)
		kv := map[string]string{"namespace": uniq("WaymarkGoNs"), "key": "k"}
		put := map[string]string{"namespace": kv["namespace"], "key": kv["key"], "value": "unsigned"}
		resp, err := roundTrip(conn, deadline, codePutKvConfig, 1, put, nil)
		if err != nil {
			t.Fatalf("PUT_KV_CONFIG: %v", err)
		}
		if resp.hdr.Code != codeNoPermission {
			t.Fatalf("unsigned PUT_KV_CONFIG: code %d, want %d (NO_PERMISSION):\n%s", resp.hdr.Code, codeNoPermission, resp)
		}
		if remark := resp.hdr.Remark; remark == nil || !strings.Contains(*remark, "admin permission needed") ||
			!strings.Contains(*remark, "request code 100") {
			t.Errorf("NO_PERMISSION remark does not say that request code 100 needs an admin:\n%s", resp)
		}
		resp, err = roundTrip(conn, deadline, codeGetKvConfig, 2, kv, nil)
		if err != nil {
			t.Fatalf("GET_KV_CONFIG: %v", err)
		}
		if resp.hdr.Code != codeQueryNotFound {
			t.Errorf("GET_KV_CONFIG after the refused write: code %d, want %d (QUERY_NOT_FOUND):\n%s", resp.hdr.Code, codeQueryNotFound, resp)
		}
	})
}

// testPKI is a throw-away CA (ECDSA P-256) and a server certificate it issued for
// 127.0.0.1 and localhost, the latter written as PEM files: the certificate, and its key
// as unencrypted PKCS#8, the form Java RocketMQ reads.
type testPKI struct {
	roots             *x509.CertPool
	leaf              *x509.Certificate
	certPath, keyPath string
}

func newTestPKI(t *testing.T, dir string) *testPKI {
	t.Helper()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("CA key: %v", err)
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: "Waymark Go interop test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("CA certificate: %v", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatalf("CA certificate: %v", err)
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("server key: %v", err)
	}
	leafTemplate := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: "waymark-namesrv"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTemplate, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatalf("server certificate: %v", err)
	}
	leaf, err := x509.ParseCertificate(leafDER)
	if err != nil {
		t.Fatalf("server certificate: %v", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatalf("server key: %v", err)
	}

	p := &testPKI{
		roots:    x509.NewCertPool(),
		leaf:     leaf,
		certPath: filepath.Join(dir, "namesrv.pem"),
		keyPath:  filepath.Join(dir, "namesrv.key"),
	}
	p.roots.AddCert(ca)
	writeFile(t, p.certPath, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER})))
	writeFile(t, p.keyPath, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})))
	return p
}

func serial(t *testing.T) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		t.Fatalf("serial number: %v", err)
	}
	return n.Add(n, big.NewInt(1))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatalf("write %s: %v", path, err)
	}
}
