package interop

// The Go client end to end with Waymark as its NameServer and a real Java broker:
// the admin creates a topic on the broker, the Go client's route query (JSON codec,
// default fastjson dialect) finds the broker, a producer sends 200 messages and a push
// consumer receives exactly those 200.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

const (
	messageCount = 200
	queueCount   = 4
)

func TestProduceConsumeWithJavaBroker(t *testing.T) {
	produceConsume(t, startNamesrv(t))
}

// topicRoute is where produceConsume's topic lives: enough to ask for its route again
// and to know the answer.
type topicRoute struct {
	topic, cluster, brokerName, brokerAddr string
}

// produceConsume starts a Java broker registered with the NameServer ns and runs the Go
// client against both: the admin creates a topic on the broker and finds its route
// through ns, a producer sends messageCount messages and a push consumer must receive
// exactly those. The Go clients reach ns through a recording proxy, and
// every successful route answer they got must be what Java sends (checkRouteFrames).
// It returns the topic and where it lives.
func produceConsume(t *testing.T, ns string) topicRoute {
	t.Helper()
	brokerAddr := startBroker(t, ns) // the broker talks to Waymark directly
	proxy := startProxy(t, ns)       // the Go clients go through the recording proxy
	resolver := primitive.NewPassthroughResolver([]string{proxy.addr()})
	topic := uniq("WaymarkGoTopic")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// Topic on the broker; the broker reports it to Waymark, the Go client asks Waymark.
	adm, err := admin.NewAdmin(admin.WithResolver(resolver))
	if err != nil {
		t.Fatalf("admin.NewAdmin: %v", err)
	}
	t.Cleanup(func() { adm.Close() })
	err = adm.CreateTopic(ctx,
		admin.WithTopicCreate(topic),
		admin.WithBrokerAddrCreate(brokerAddr),
		admin.WithReadQueueNums(queueCount),
		admin.WithWriteQueueNums(queueCount),
	)
	if err != nil {
		t.Fatalf("CreateTopic(%s) on %s: %v", topic, brokerAddr, err)
	}
	mqs := waitForRoute(t, ctx, adm, topic)
	brokerName := mqs[0].BrokerName
	for _, mq := range mqs {
		if mq.BrokerName != brokerName {
			t.Fatalf("route of %s has queues on brokers %v, want only one broker", topic, mqs)
		}
	}
	if len(mqs) != queueCount {
		t.Fatalf("route of %s has %d writable queues %v, want %d", topic, len(mqs), mqs, queueCount)
	}
	clusters, err := adm.FetchClusterList(topic)
	if err != nil || len(clusters) != 1 {
		t.Fatalf("FetchClusterList(%s) = %v, %v; want one cluster", topic, clusters, err)
	}

	// Consumer first, so that it is subscribed before the first message; it starts at
	// the first offset anyway, in case its first rebalance comes late.
	var (
		mu       sync.Mutex
		received = map[string][]string{} // msg id → bodies, one per delivery
		all      = make(chan struct{})
		allOnce  sync.Once
	)
	c, err := consumer.NewPushConsumer(
		consumer.WithNsResolver(resolver),
		consumer.WithGroupName(uniq("waymark_go_cg")),
		consumer.WithInstance(uniq("consumer")),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithConsumerModel(consumer.Clustering),
	)
	if err != nil {
		t.Fatalf("consumer.NewPushConsumer: %v", err)
	}
	err = c.Subscribe(topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			received[m.MsgId] = append(received[m.MsgId], string(m.Body))
		}
		if len(received) >= messageCount {
			allOnce.Do(func() { close(all) })
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		t.Fatalf("Subscribe(%s): %v", topic, err)
	}
	if err := c.Start(); err != nil {
		t.Fatalf("consumer.Start: %v", err)
	}
	t.Cleanup(func() { _ = c.Shutdown() })

	p, err := producer.NewDefaultProducer(
		producer.WithNsResolver(resolver),
		producer.WithGroupName(uniq("waymark_go_pg")),
		producer.WithInstanceName(uniq("producer")),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(5*time.Second),
	)
	if err != nil {
		t.Fatalf("producer.NewDefaultProducer: %v", err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("producer.Start: %v", err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })

	sent := map[string]string{} // msg id → body
	perQueue := map[int]int{}
	for i := 0; i < messageCount; i++ {
		body := fmt.Sprintf("waymark-go %03d of %d on %s", i, messageCount, topic)
		res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte(body)))
		if err != nil {
			t.Fatalf("SendSync #%d: %v", i, err)
		}
		if res.Status != primitive.SendOK {
			t.Fatalf("SendSync #%d: status %d (%v)", i, res.Status, res)
		}
		if res.MessageQueue.BrokerName != brokerName {
			t.Fatalf("SendSync #%d went to broker %q, the route said %q", i, res.MessageQueue.BrokerName, brokerName)
		}
		if _, dup := sent[res.MsgID]; dup {
			t.Fatalf("SendSync #%d: message id %s returned twice", i, res.MsgID)
		}
		sent[res.MsgID] = body
		perQueue[res.MessageQueue.QueueId]++
	}
	if len(perQueue) != queueCount {
		t.Errorf("messages per queue %v, want all %d queues used", perQueue, queueCount)
	}

	select {
	case <-all:
		// A message this test did not send, or a second copy, would come through the
		// same long-polling pulls that just delivered the last of the 200, within
		// milliseconds; one more second covers a pull in flight. Redeliveries on the
		// broker's retry schedule (10 s and later) are not waited for: at-least-once
		// delivery allows them, and they say nothing about the NameServer.
		time.Sleep(time.Second)
	case <-ctx.Done():
	case <-time.After(45 * time.Second):
	}

	mu.Lock()
	defer mu.Unlock()
	var missing, unexpected, wrongBody, redelivered []string
	for id, body := range sent {
		bodies, ok := received[id]
		switch {
		case !ok:
			missing = append(missing, id)
		case bodies[0] != body:
			wrongBody = append(wrongBody, fmt.Sprintf("%s: got %q, sent %q", id, bodies[0], body))
		case len(bodies) > 1:
			redelivered = append(redelivered, id)
		}
	}
	for id := range received {
		if _, ok := sent[id]; !ok {
			unexpected = append(unexpected, id)
		}
	}
	report := func(what string, ids []string) {
		if len(ids) > 0 {
			sort.Strings(ids)
			t.Errorf("%d %s: %s", len(ids), what, strings.Join(ids[:min(len(ids), 10)], ", "))
		}
	}
	report("messages sent but not received", missing)
	report("messages received but never sent", unexpected)
	report("messages with another body", wrongBody)
	if len(redelivered) > 0 {
		// At-least-once delivery allows this; it says nothing about the NameServer.
		t.Logf("%d messages were delivered more than once", len(redelivered))
	}
	t.Logf("sent %d, received %d distinct, per queue %v, broker %s at %s", len(sent), len(received), perQueue, brokerName, brokerAddr)

	route := topicRoute{topic: topic, cluster: clusters[0], brokerName: brokerName, brokerAddr: brokerAddr}
	checkRouteFrames(t, proxy, route)
	return route
}

// waitForRoute asks Waymark for the topic's route through the Go client until the broker
// has reported the topic.
func waitForRoute(t *testing.T, ctx context.Context, adm admin.Admin, topic string) []*primitive.MessageQueue {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mqs, err := adm.FetchPublishMessageQueues(ctx, topic)
		if err == nil && len(mqs) > 0 {
			return mqs
		}
		if time.Now().After(deadline) {
			t.Fatalf("no route for %s from the NameServer after 20 s: %v, %v", topic, mqs, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// javaRouteBody is the GET_ROUTEINFO_BY_TOPIC body Java sends a version-317 client for
// the route, i.e. fastjson's default dialect with an unquoted broker id (clients from
// 4.9.4, version 401, get standard JSON instead).
func javaRouteBody(r topicRoute) string {
	return fmt.Sprintf(`{"brokerDatas":[{"brokerAddrs":{0:%s},"brokerName":%s,"cluster":%s,"enableActingMaster":false}],`+
		`"filterServerTable":{},"queueDatas":[{"brokerName":%s,"perm":6,"readQueueNums":%d,"topicSysFlag":0,"writeQueueNums":%d}]}`,
		fastjsonString(r.brokerAddr), fastjsonString(r.brokerName), fastjsonString(r.cluster),
		fastjsonString(r.brokerName), queueCount, queueCount)
}

// checkRouteFrames checks the GET_ROUTEINFO_BY_TOPIC exchanges the Go clients had for
// the route's topic: every successful answer must be javaRouteBody, on the admin's, the
// producer's and the consumer's connections.
func checkRouteFrames(t *testing.T, proxy *frameProxy, r topicRoute) {
	t.Helper()
	// The admin, the producer and the consumer each have their own connection.
	if conns := checkRouteBodies(t, proxy, r); conns < 3 {
		t.Errorf("successful route answers for %s on %d connections, want >= 3 (admin, producer, consumer)", r.topic, conns)
	}
}

// checkRouteBodies checks that every successful GET_ROUTEINFO_BY_TOPIC answer the Go
// clients got for the route's topic is javaRouteBody, and returns on how many connections
// they got one.
func checkRouteBodies(t *testing.T, proxy *frameProxy, r topicRoute) int {
	t.Helper()
	topic, want := r.topic, javaRouteBody(r)
	conns := map[int]bool{}
	for _, ex := range proxy.routeQueries(topic) {
		checkGoRequest(t, ex.req)
		if ex.resp == nil || ex.resp.hdr.Code != codeSuccess {
			continue // asked before the broker reported the topic
		}
		conns[ex.req.conn] = true
		checkJavaResponseHeader(t, ex.resp, codeSuccess, nil)
		if string(ex.resp.body) != want {
			t.Errorf("route body for %s differs from what Java sends to a version-%d client:\n  got:  %s\n  want: %s\n  first difference at byte %d",
				topic, goClientVersion, printable(ex.resp.body, 2000), want, firstDiff(ex.resp.body, []byte(want)))
		}
	}
	return len(conns)
}
