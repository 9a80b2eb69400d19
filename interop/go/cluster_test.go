package interop

// The Go client against a cluster of Waymark NameServers (clusterGossipAddr): a broker
// registered with one node only is routable through another, which holds it as relayed,
// and what that node answers the Go client is what Java sends for a broker registered with
// it directly.

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// clusterGossipLine is what a cluster node prints after its boot line: the gossip address
// peers use as a seed.
var clusterGossipLine = regexp.MustCompile(`Waymark cluster gossip on (\S+) \(bound `)

// startClusterNode starts a Waymark NameServer gossiping on a loopback port of its own, in
// cluster clusterID, with seeds (comma-separated gossip addresses; empty for the first node),
// and returns its remoting address and its gossip address.
func startClusterNode(t *testing.T, clusterID, seeds string) (addr, gossip string) {
	t.Helper()
	settings := []string{"clusterGossipAddr=127.0.0.1:0", "clusterId=" + clusterID, "httpListenAddr=127.0.0.1:0"}
	if seeds != "" {
		settings = append(settings, "clusterSeeds="+seeds)
	}
	p, m := startNamesrvUntil(t, clusterGossipLine, settings...)
	// The boot line came before the gossip line.
	for _, line := range strings.Split(p.tail(), "\n") {
		if boot := namesrvReady.FindStringSubmatch(line); boot != nil {
			return boot[1], m[1]
		}
	}
	t.Fatalf("no boot line before the cluster gossip line:\n%s", p.tail())
	return "", ""
}

func TestRouteOfBrokerRegisteredWithAnotherClusterNode(t *testing.T) {
	clusterID := uniq("go-cluster")
	first, seed := startClusterNode(t, clusterID, "")
	second, _ := startClusterNode(t, clusterID, seed)
	brokerAddr := startBroker(t, second) // registered with the second node only
	proxy := startProxy(t, first)        // the Go clients ask the first
	resolver := primitive.NewPassthroughResolver([]string{proxy.addr()})
	topic := uniq("WaymarkGoClusterTopic")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
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
	start := time.Now()
	mqs := waitForRoute(t, ctx, adm, topic)
	t.Logf("route of %s through the first node after %v: %v", topic, time.Since(start), mqs)
	if len(mqs) != queueCount {
		t.Fatalf("route of %s through the first node has %d writable queues %v, want %d", topic, len(mqs), mqs, queueCount)
	}
	brokerName := mqs[0].BrokerName

	p, err := producer.NewDefaultProducer(
		producer.WithNsResolver(resolver),
		producer.WithGroupName(uniq("waymark_go_cluster_pg")),
		producer.WithInstanceName(uniq("cluster_producer")),
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
	perQueue := map[int]int{}
	for i := 0; i < 2*queueCount; i++ {
		res, err := p.SendSync(ctx, primitive.NewMessage(topic, []byte("through a cluster peer")))
		if err != nil {
			t.Fatalf("SendSync #%d: %v", i, err)
		}
		if res.Status != primitive.SendOK || res.MessageQueue.BrokerName != brokerName {
			t.Fatalf("SendSync #%d: status %d on broker %q, want SEND_OK on %q", i, res.Status, res.MessageQueue.BrokerName, brokerName)
		}
		perQueue[res.MessageQueue.QueueId]++
	}
	if len(perQueue) != queueCount {
		t.Errorf("messages per queue %v, want all %d queues used", perQueue, queueCount)
	}

	route := topicRoute{topic: topic, cluster: "WaymarkGoCluster", brokerName: brokerName, brokerAddr: brokerAddr}
	if conns := checkRouteBodies(t, proxy, route); conns < 2 {
		t.Errorf("successful route answers for %s on %d connections, want >= 2 (admin, producer)", topic, conns)
	}
}
