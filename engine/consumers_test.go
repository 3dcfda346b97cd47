package engine

import (
	"errors"
	"strings"
	"testing"
)

type fakeGroups map[string][]ConsumerMember

func (g fakeGroups) ConsumerMembers(consumer string) []ConsumerMember { return g[consumer] }

// DeleteConsumer deletes a consumer's cursors (on one topic or all),
// durably; a dry run and every refusal change nothing; a consumer with
// live members is refused.
func TestDeleteConsumer(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	for _, name := range []string{"orders", "users"} {
		if err := e.CreateTopic(name, TopicConfig{Partitions: 2}); err != nil {
			t.Fatal(err)
		}
		produceN(t, e, name, 0, 4, 8)
		produceN(t, e, name, 1, 4, 8)
	}
	for _, c := range []struct {
		consumer, topic string
		p               int
		off             int64
	}{{"billing", "orders", 0, 1}, {"billing", "orders", 1, 2}, {"billing", "users", 0, 3}, {"shipping", "orders", 0, 4}} {
		if err := e.CommitCursor(c.consumer, c.topic, c.p, c.off); err != nil {
			t.Fatal(err)
		}
	}
	would, err := e.DeleteConsumer("billing", "orders", true)
	if err != nil || len(would) != 2 || would[0].Lag != 3 || would[1].Offset != 2 {
		t.Fatalf("dry run: %+v %v", would, err)
	}
	if cs, _ := e.Consumers("orders"); len(cs) != 3 {
		t.Fatalf("the dry run deleted: %+v", cs)
	}

	remove := e.AddMemberSource(fakeGroups{"billing": {{ID: "m-1", ClientID: "app", Host: "/127.0.0.1"}}})
	if ms := e.ConsumerMembers("billing"); len(ms) != 1 || ms[0].ID != "m-1" {
		t.Fatalf("members: %+v", ms)
	}
	if _, err := e.DeleteConsumer("billing", "", false); !errors.Is(err, ErrConsumerActive) {
		t.Fatalf("delete with live members: %v, want ErrConsumerActive", err)
	} else if want := "consumer billing has 1 live member (m-1): stop it before deleting the consumer"; !strings.Contains(err.Error(), want) {
		t.Fatalf("delete with a live member: %q, want it to say %q", err, want)
	}
	remove()
	if ms := e.ConsumerMembers("billing"); len(ms) != 0 {
		t.Fatalf("members after remove: %+v", ms)
	}

	gone, err := e.DeleteConsumer("billing", "orders", false)
	if err != nil || len(gone) != 2 || gone[0].Topic != "orders" || gone[0].Partition != 0 || gone[1].Partition != 1 {
		t.Fatalf("delete billing on orders: %+v %v", gone, err)
	}
	if _, err := e.DeleteConsumer("billing", "orders", false); !errors.Is(err, ErrConsumerNotFound) {
		t.Fatalf("deleting again: %v, want ErrConsumerNotFound", err)
	}
	if _, err := e.DeleteConsumer("billing", "nosuch", false); !errors.Is(err, ErrTopicNotFound) {
		t.Fatalf("on a missing topic: %v, want ErrTopicNotFound", err)
	}
	e.Close()

	e = openEngine(t, dir)
	defer e.Close()
	if cs, _ := e.Consumers("orders"); len(cs) != 1 || cs[0].Consumer != "shipping" {
		t.Fatalf("orders after reopen: %+v", cs)
	}
	if cs, _ := e.Consumers("users"); len(cs) != 1 || cs[0].Consumer != "billing" {
		t.Fatalf("users after reopen (not named by the delete): %+v", cs)
	}
	if gone, err := e.DeleteConsumer("billing", "", false); err != nil || len(gone) != 1 || gone[0].Topic != "users" {
		t.Fatalf("delete billing everywhere: %+v %v", gone, err)
	}
}
