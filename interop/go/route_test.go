package interop

// The Go client's route query against a Waymark NameServer that has no broker: the
// client must get TOPIC_NOT_EXIST (17) and turn it into its own errors.ErrTopicNotExist,
// and the response must be the one Java sends (code 17, the remark with the FAQ address,
// no extFields).

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	rmqerrors "github.com/apache/rocketmq-client-go/v2/errors"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

func TestRouteOfUnknownTopicWithoutBroker(t *testing.T) {
	proxy := startProxy(t, startNamesrv(t))
	topic := uniq("WaymarkGoNoSuchTopic")

	adm, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{proxy.addr()})))
	if err != nil {
		t.Fatalf("admin.NewAdmin: %v", err)
	}
	t.Cleanup(func() { adm.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	mqs, err := adm.FetchPublishMessageQueues(ctx, topic)
	if !errors.Is(err, rmqerrors.ErrTopicNotExist) {
		t.Fatalf("FetchPublishMessageQueues(%s) = %v, %v; want errors.ErrTopicNotExist", topic, mqs, err)
	}
	clusters, err := adm.FetchClusterList(topic)
	if !errors.Is(err, rmqerrors.ErrTopicNotExist) {
		t.Fatalf("FetchClusterList(%s) = %v, %v; want errors.ErrTopicNotExist", topic, clusters, err)
	}

	// A producer gives up with an error of its own (no route, not even for TBW102)
	// instead of hanging or crashing.
	p, err := producer.NewDefaultProducer(
		producer.WithNsResolver(primitive.NewPassthroughResolver([]string{proxy.addr()})),
		producer.WithGroupName(uniq("waymark_go_nobroker_pg")),
		producer.WithInstanceName(uniq("nobroker")),
		producer.WithRetry(0),
		producer.WithSendMsgTimeout(3*time.Second),
	)
	if err != nil {
		t.Fatalf("producer.NewDefaultProducer: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("producer.Start: %v", err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	start := time.Now()
	res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte("never stored")))
	if err == nil {
		t.Fatalf("SendSync to %s without a broker succeeded: %v", topic, res)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("SendSync without a broker took %v", d)
	}
	t.Logf("SendSync without a broker: %v", err)

	queries := proxy.routeQueries(topic)
	if len(queries) < 2 {
		t.Fatalf("saw %d GET_ROUTEINFO_BY_TOPIC requests for %s through the proxy, want >= 2", len(queries), topic)
	}
	remark := topicNotExistRemark(topic)
	for _, ex := range queries {
		checkGoRequest(t, ex.req)
		if ex.resp == nil {
			t.Fatalf("no response to %s", ex.req)
		}
		if ex.resp.hdr.Code != codeTopicNotExist {
			t.Fatalf("response code %d, want %d (TOPIC_NOT_EXIST):\n%s", ex.resp.hdr.Code, codeTopicNotExist, ex.resp)
		}
		if len(ex.resp.body) != 0 {
			t.Errorf("TOPIC_NOT_EXIST response has a %d-byte body, Java sends none", len(ex.resp.body))
		}
		checkJavaResponseHeader(t, ex.resp, codeTopicNotExist, &remark)
	}
}
