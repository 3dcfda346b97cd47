package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pulselog/pulse/engine"
)

// TestTransactionalProducerRefusedAtOnce: Pulse has no transactions, and a
// transactional producer is told so with a fatal error the first time it
// asks for its coordinator, TRANSACTIONAL_ID_AUTHORIZATION_FAILED, instead
// of retrying COORDINATOR_NOT_AVAILABLE until it gives up: franz-go and
// librdkafka (confluent-kafka) report that error, and nothing is stored.
func TestTransactionalProducerRefusedAtOnce(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	if err := p.eng.CreateTopic("tx", engine.TopicConfig{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The requests themselves.
	cl := kgoClient(t, p.addr)
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorType, fc.CoordinatorKey, fc.CoordinatorKeys = 1, "tx-raw", []string{"tx-raw"}
	fresp, err := fc.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(fresp.Coordinators) != 1 || fresp.Coordinators[0].ErrorCode != errTransactionalIDAuthorizationFailed || fresp.Coordinators[0].ErrorMessage == nil {
		t.Errorf("FindCoordinator of a transactional id: %+v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED with a message", fresp.Coordinators)
	}
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.TransactionalID = kmsg.StringPtr("tx-raw")
	// Straight to broker 0: kgo would send it to the (missing)
	// transaction coordinator.
	raw, err := cl.Broker(nodeID).Request(ctx, ip)
	if err != nil {
		t.Fatal(err)
	}
	iresp := raw.(*kmsg.InitProducerIDResponse)
	if iresp.ErrorCode != errTransactionalIDAuthorizationFailed || iresp.ProducerID != -1 {
		t.Errorf("InitProducerId with a transactional id: error %d, producer id %d; want %d, -1", iresp.ErrorCode, iresp.ProducerID, errTransactionalIDAuthorizationFailed)
	}

	// franz-go: the transaction's producer id cannot be had.
	tc := kgoClient(t, p.addr, kgo.TransactionalID("tx-franz"), kgo.DefaultProduceTopic("tx"))
	err = tc.BeginTransaction()
	if err == nil {
		pctx, pcancel := context.WithTimeout(ctx, 30*time.Second)
		err = tc.ProduceSync(pctx, &kgo.Record{Value: []byte("v")}).FirstErr()
		pcancel()
	}
	if !errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
		t.Errorf("franz-go transactional producer: %v, want TRANSACTIONAL_ID_AUTHORIZATION_FAILED", err)
	}

	// librdkafka: init_transactions fails, fatally, within its timeout.
	py := need(t, "/usr/bin/python3", "-I", "-c", "import confluent_kafka")
	out, err := exec.CommandContext(ctx, py, "-I", "testdata/clients.py", "transactional", "confluent", p.addr, "30").Output()
	if err != nil {
		t.Fatalf("clients.py transactional: %v", err)
	}
	var got struct {
		Error string
		Fatal bool
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("clients.py transactional printed %q: %v", out, err)
	}
	if got.Error != "TRANSACTIONAL_ID_AUTHORIZATION_FAILED" || !got.Fatal {
		t.Errorf("confluent-kafka init_transactions: %+v, want a fatal TRANSACTIONAL_ID_AUTHORIZATION_FAILED", got)
	}

	info, err := p.eng.Describe("tx")
	if err != nil {
		t.Fatal(err)
	}
	if hwm := info.Partitions[0].HWM; hwm != 0 {
		t.Errorf("topic tx holds %d records after the refusals, want none", hwm)
	}
}
