package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pulselog/pulse/meta"
)

// TestMissingMetaRebuiltLoudly deletes meta.db of a data dir holding two
// topics: the engine records both again from their directories (every
// record still readable), says so in Problems and in meta.db, and a create
// of the same name is refused instead of adopting the directory silently.
func TestMissingMetaRebuiltLoudly(t *testing.T) {
	dir := t.TempDir()
	e := openEngine(t, dir)
	if err := e.CreateTopic("orders", TopicConfig{Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTopic("empty", TopicConfig{Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	acks := map[string]Ack{}
	for i := range 30 {
		r := Record{Key: []byte(fmt.Sprint(i)), Value: []byte(fmt.Sprintf("v%d", i))}
		a, err := e.Produce(context.Background(), "orders", -1, []Record{r})
		if err != nil {
			t.Fatal(err)
		}
		acks[string(r.Value)] = a[0]
	}
	e.Close()
	if err := os.Remove(meta.Path(dir)); err != nil {
		t.Fatal(err)
	}

	e = openEngine(t, dir)
	defer e.Close()
	probs := strings.Join(e.Problems(), "\n")
	if !strings.Contains(probs, "topic orders: meta.db was missing; rebuilt") {
		t.Fatalf("problems do not say meta.db was rebuilt:\n%s", probs)
	}
	info, err := e.Describe("orders")
	if err != nil || len(info.Partitions) != 3 {
		t.Fatalf("describe orders after the rebuild: %+v %v", info, err)
	}
	got := 0
	for p := range 3 {
		res, err := e.Read("orders", p, 0, 1000, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Records {
			a, ok := acks[string(r.Value)]
			if !ok || a.Partition != p || a.Offset != r.Offset {
				t.Fatalf("partition %d offset %d: %q does not match its ack", p, r.Offset, r.Value)
			}
			got++
		}
	}
	if got != len(acks) {
		t.Fatalf("read %d records back, %d were acked", got, len(acks))
	}
	if err := e.CreateTopic("orders", TopicConfig{Partitions: 1}); !errors.Is(err, ErrTopicExists) {
		t.Fatalf("create over the rebuilt topic: %v, want ErrTopicExists", err)
	}
	mt, err := e.Meta().GetTopic("orders")
	if err != nil || mt.Rebuilt == "" {
		t.Fatalf("meta.db does not mark orders as rebuilt: %+v %v", mt, err)
	}
}
