package interop

// A recording TCP proxy between the Go client and the NameServer. It forwards bytes
// unchanged and, on the side, cuts both directions into RocketMQ remoting frames
// (4-byte length, 1-byte serialize type + 3-byte header length, header, body), so a
// test can assert on exactly what the client sent and received and print it when
// something fails. The same framing serves tests that talk to the NameServer themselves
// (encodeRequest, readFrame, roundTrip).

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// frame is one remoting frame as it crossed the proxy.
type frame struct {
	conn     int  // connection number, in accept order
	toServer bool // client → NameServer
	serType  byte // 0 JSON, 1 ROCKETMQ
	header   []byte
	body     []byte
	hdr      header // parsed header (JSON only); zero value if it did not parse
	hdrErr   error
}

// header is the part of a JSON header the tests look at. Remark and ExtFields stay raw so
// that "absent", "null" and "" can be told apart.
type header struct {
	Code      int                        `json:"code"`
	Flag      int                        `json:"flag"`
	Opaque    int                        `json:"opaque"`
	Version   int                        `json:"version"`
	Language  json.RawMessage            `json:"language"`
	Remark    *string                    `json:"remark"`
	ExtFields map[string]json.RawMessage `json:"extFields"`
}

func (f *frame) isResponse() bool { return f.hdr.Flag&1 == 1 }

func (f *frame) String() string {
	dir := "client -> namesrv"
	if !f.toServer {
		dir = "namesrv -> client"
	}
	return fmt.Sprintf("conn %d %s, serializeType %d, header %d bytes, body %d bytes\n  header: %s\n  body:   %s",
		f.conn, dir, f.serType, len(f.header), len(f.body), printable(f.header, 2000), printable(f.body, 600))
}

// printable shows text as text (control bytes as <XX>) and cuts it at max bytes.
func printable(b []byte, max int) string {
	if len(b) == 0 {
		return "(none)"
	}
	cut := ""
	if len(b) > max {
		b, cut = b[:max], fmt.Sprintf("... (%d more bytes)", len(b)-max)
	}
	var sb strings.Builder
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			fmt.Fprintf(&sb, "<%02X>", c)
		} else {
			sb.WriteByte(c)
		}
	}
	return sb.String() + cut
}

// exchange is a request and the response with the same opaque on the same connection.
type exchange struct {
	req, resp *frame
}

type frameProxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	frames []*frame
	conns  []net.Conn
	nconn  int
	wg     sync.WaitGroup
}

// startProxy listens on a free loopback port and forwards every connection to target.
// It is closed when the test ends; when the test failed, every recorded frame is logged.
func startProxy(t *testing.T, target string) *frameProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &frameProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		p.close()
		if t.Failed() {
			t.Logf("frames between the Go client and the NameServer:\n%s", p.dump())
		}
	})
	return p
}

func (p *frameProxy) addr() string { return p.ln.Addr().String() }

func (p *frameProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.nconn++
		n := p.nconn
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(n, true, c, s)
		go p.pipe(n, false, s, c)
	}
}

// pipe copies src to dst and records the frames in what it copied. A stream that does
// not parse as frames is still forwarded; only the recording stops.
func (p *frameProxy) pipe(conn int, toServer bool, src, dst net.Conn) {
	defer p.wg.Done()
	defer dst.Close()
	var pending []byte
	parsing := true
	buf := make([]byte, 64*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			// Record first: once the peer has the bytes, a test may look for the frame.
			if parsing {
				pending = append(pending, buf[:n]...)
				pending, parsing = p.cut(conn, toServer, pending)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// cut records every complete frame at the start of b and returns the rest.
func (p *frameProxy) cut(conn int, toServer bool, b []byte) ([]byte, bool) {
	for {
		f, n, err := decodeFrame(b)
		if err != nil {
			p.record(&frame{conn: conn, toServer: toServer, hdrErr: err})
			return nil, false
		}
		if f == nil {
			return b, true
		}
		f.conn, f.toServer = conn, toServer
		p.record(f)
		b = b[n:]
	}
}

// decodeFrame decodes the frame at the start of b and returns it with its length in bytes,
// or nil while b holds less than a whole frame. An error means b is not a frame stream.
// The frame's header is parsed when it is JSON; the frame does not share memory with b.
func decodeFrame(b []byte) (*frame, int, error) {
	if len(b) < 8 {
		return nil, 0, nil
	}
	total := int(binary.BigEndian.Uint32(b[0:4]))
	ht := binary.BigEndian.Uint32(b[4:8])
	hlen := int(ht & 0xFFFFFF)
	if total < 4+hlen || total > maxFrame {
		return nil, 0, fmt.Errorf("not a frame: % x", b[:8])
	}
	if len(b) < 4+total {
		return nil, 0, nil
	}
	f := &frame{
		serType: byte(ht >> 24),
		header:  append([]byte(nil), b[8:8+hlen]...),
		body:    append([]byte(nil), b[8+hlen:4+total]...),
	}
	if f.serType == 0 {
		f.hdrErr = json.Unmarshal(f.header, &f.hdr)
	} else {
		f.hdrErr = fmt.Errorf("serialize type %d not decoded here", f.serType)
	}
	return f, 4 + total, nil
}

// maxFrame is the largest frame length (the 4-byte length field) the tests accept.
const maxFrame = 16 << 20

// goRequest is a request header in the Go client's shape: its remote.RemotingCommand
// marshalled as JSON (field order code, language, version, opaque, flag, remark,
// extFields; `"remark":""`, no serializeTypeCurrentRPC).
type goRequest struct {
	Code      int               `json:"code"`
	Language  string            `json:"language"`
	Version   int               `json:"version"`
	Opaque    int               `json:"opaque"`
	Flag      int               `json:"flag"`
	Remark    string            `json:"remark"`
	ExtFields map[string]string `json:"extFields"`
}

// encodeRequest is a request frame as rocketmq-client-go writes it (JSON codec,
// "language":"GO", version 317).
func encodeRequest(code, opaque int, ext map[string]string, body []byte) []byte {
	if ext == nil {
		ext = map[string]string{}
	}
	h, err := json.Marshal(goRequest{Code: code, Language: "GO", Version: goClientVersion, Opaque: opaque, ExtFields: ext})
	if err != nil {
		panic(err) // strings only: cannot happen
	}
	b := make([]byte, 8, 8+len(h)+len(body))
	binary.BigEndian.PutUint32(b[0:4], uint32(4+len(h)+len(body)))
	binary.BigEndian.PutUint32(b[4:8], uint32(len(h))) // serialize type 0 (JSON) in the top byte
	b = append(b, h...)
	return append(b, body...)
}

// readFrame reads one whole frame from r.
func readFrame(r io.Reader) (*frame, error) {
	var prefix [8]byte
	if _, err := io.ReadFull(r, prefix[:]); err != nil {
		return nil, err
	}
	total := int(binary.BigEndian.Uint32(prefix[0:4]))
	if total < 4 || total > maxFrame {
		return nil, fmt.Errorf("not a frame: % x", prefix)
	}
	b := make([]byte, 4+total)
	copy(b, prefix[:])
	if _, err := io.ReadFull(r, b[8:]); err != nil {
		return nil, err
	}
	f, _, err := decodeFrame(b)
	return f, err
}

// roundTrip sends one request frame on conn and returns the response with the same
// opaque, skipping anything else the server sends first. Every read and write must finish
// before deadline.
func roundTrip(conn net.Conn, deadline time.Time, code, opaque int, ext map[string]string, body []byte) (*frame, error) {
	if err := conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if _, err := conn.Write(encodeRequest(code, opaque, ext, body)); err != nil {
		return nil, fmt.Errorf("write request %d: %w", code, err)
	}
	for {
		f, err := readFrame(conn)
		if err != nil {
			return nil, fmt.Errorf("read the response to request %d: %w", code, err)
		}
		if f.hdrErr != nil {
			return nil, fmt.Errorf("response to request %d: %v\n%s", code, f.hdrErr, f)
		}
		if f.isResponse() && f.hdr.Opaque == opaque {
			return f, nil
		}
	}
}

func (p *frameProxy) record(f *frame) {
	p.mu.Lock()
	p.frames = append(p.frames, f)
	p.mu.Unlock()
}

func (p *frameProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *frameProxy) snapshot() []*frame {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*frame(nil), p.frames...)
}

// exchanges returns the client requests with the given code, each with its response
// (nil while none came back), in the order they were sent.
func (p *frameProxy) exchanges(code int) []exchange {
	frames := p.snapshot()
	var out []exchange
	for i, f := range frames {
		if !f.toServer || f.hdrErr != nil || f.isResponse() || f.hdr.Code != code {
			continue
		}
		ex := exchange{req: f}
		for _, g := range frames[i+1:] {
			if !g.toServer && g.conn == f.conn && g.isResponse() && g.hdr.Opaque == f.hdr.Opaque {
				ex.resp = g
				break
			}
		}
		out = append(out, ex)
	}
	return out
}

// routeQueries returns the GET_ROUTEINFO_BY_TOPIC exchanges for topic.
func (p *frameProxy) routeQueries(topic string) []exchange {
	var out []exchange
	for _, ex := range p.exchanges(codeGetRouteInfoByTopic) {
		if extString(ex.req.hdr.ExtFields["topic"]) == topic {
			out = append(out, ex)
		}
	}
	return out
}

func (p *frameProxy) dump() string {
	var sb strings.Builder
	for _, f := range p.snapshot() {
		sb.WriteString(f.String())
		if f.hdrErr != nil {
			fmt.Fprintf(&sb, "\n  (header: %v)", f.hdrErr)
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// extString is an extFields value as a string (JSON strings unquoted, anything else raw).
func extString(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// javaHeader is the JSON header the Java NameServer writes for a response without a
// custom header (fastjson default dialect: keys sorted, null remark omitted, no
// extFields).
func javaHeader(code, opaque, version int, remark *string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, `{"code":%d,"flag":1,"language":"JAVA","opaque":%d,`, code, opaque)
	if remark != nil {
		fmt.Fprintf(&sb, `"remark":%s,`, fastjsonString(*remark))
	}
	fmt.Fprintf(&sb, `"serializeTypeCurrentRPC":"JSON","version":%d}`, version)
	return sb.String()
}

// fastjsonString quotes s as fastjson 1.2.83's default dialect does (the Java
// NameServer's header and default-dialect body writer).
func fastjsonString(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			sb.WriteString(`\"`)
		case r == '\\':
			sb.WriteString(`\\`)
		case r == '\b':
			sb.WriteString(`\b`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\f':
			sb.WriteString(`\f`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r < 0x20, r >= 0x7f && r <= 0x9f, r == 0x2028, r == 0x2029:
			sb.WriteString(`\u` + strings.ToUpper(fmt.Sprintf("%04x", r)))
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

const (
	codePutKvConfig         = 100
	codeGetKvConfig         = 101
	codeGetRouteInfoByTopic = 105
	codeSuccess             = 0
	codeNoPermission        = 16
	codeTopicNotExist       = 17
	codeQueryNotFound       = 22
	// goClientVersion is the `version` rocketmq-client-go puts in every request (its
	// remote._Version); below 401, so the NameServer must answer in the default dialect.
	goClientVersion = 317
)

// topicNotExistRemark is the Java NameServer's remark for an unknown topic, with the
// FAQ address after a line feed.
func topicNotExistRemark(topic string) string {
	return "No topic route info in name server for the topic: " + topic +
		"\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."
}

// checkGoRequest checks that a request is what the Go client is known to send (JSON
// header, "GO", version 317, no serializeTypeCurrentRPC), so that a client upgrade that
// changes this is noticed instead of silently testing something else.
func checkGoRequest(t *testing.T, f *frame) {
	t.Helper()
	if f.serType != 0 || f.hdrErr != nil {
		t.Errorf("Go client request: want a JSON header, got serializeType %d (%v)", f.serType, f.hdrErr)
		return
	}
	if string(f.hdr.Language) != `"GO"` || f.hdr.Version != goClientVersion {
		t.Errorf("Go client request: want language \"GO\", version %d; header %s", goClientVersion, f.header)
	}
	if strings.Contains(string(f.header), "serializeTypeCurrentRPC") {
		t.Errorf("Go client request now sends serializeTypeCurrentRPC; header %s", f.header)
	}
}

// checkJavaResponseHeader compares a response header with the bytes Java would have
// sent, taking opaque and version from the response itself.
func checkJavaResponseHeader(t *testing.T, f *frame, code int, remark *string) {
	t.Helper()
	want := javaHeader(code, f.hdr.Opaque, f.hdr.Version, remark)
	if string(f.header) != want {
		t.Errorf("response header differs from Java's:\n  got:  %s\n  want: %s\n  first difference at byte %d",
			printable(f.header, 2000), printable([]byte(want), 2000), firstDiff(f.header, []byte(want)))
	}
	if f.hdr.Version <= 0 {
		t.Errorf("response version %d; Java answers with its own MQVersion (e.g. 479)", f.hdr.Version)
	}
}

func firstDiff(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) == len(b) {
		return -1
	}
	return min(len(a), len(b))
}
