package meta

import (
	"reflect"
	"testing"
)

func TestReconcile(t *testing.T) {
	topics := []Topic{
		{Name: "fine", Partitions: 2, State: TopicActive},
		{Name: "gone", Partitions: 2, State: TopicActive},
		{Name: "holes", Partitions: 4, State: TopicActive},
		{Name: "grown", Partitions: 1, State: TopicActive},
		{Name: "empty-dir", Partitions: 1, State: TopicActive},
		{Name: "dying", Partitions: 3, State: TopicDeleting},
		{Name: "dying-gone", Partitions: 1, State: TopicDeleting},
	}
	disk := map[string][]int{
		"fine":      {1, 0},
		"holes":     {3, 1, 1},
		"grown":     {0, 2, 1},
		"empty-dir": {},
		"dying":     {0},
		"stray":     {5, 0},
		"bare":      nil,
	}
	got := Reconcile(topics, disk)
	want := []Mismatch{
		{Kind: OrphanTopicDir, Topic: "bare", Partitions: nil, Want: 0, Have: 0},
		{Kind: MissingTopicDir, Topic: "empty-dir", Partitions: []int{0}, Want: 1, Have: 0},
		{Kind: MissingTopicDir, Topic: "gone", Partitions: []int{0, 1}, Want: 2, Have: 0},
		{Kind: ExtraPartitionDirs, Topic: "grown", Partitions: []int{1, 2}, Want: 1, Have: 3},
		{Kind: MissingPartitionDirs, Topic: "holes", Partitions: []int{0, 2}, Want: 4, Have: 2},
		{Kind: OrphanTopicDir, Topic: "stray", Partitions: []int{0, 5}, Want: 0, Have: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Reconcile\n got %+v\nwant %+v", got, want)
	}
	if m := Reconcile(topics[:1], map[string][]int{"fine": {0, 1}}); len(m) != 0 {
		t.Fatalf("matching disk gave %+v", m)
	}
	if m := Reconcile(nil, nil); len(m) != 0 {
		t.Fatalf("empty gave %+v", m)
	}
	// The input is not modified.
	if !reflect.DeepEqual(disk["grown"], []int{0, 2, 1}) {
		t.Fatalf("input modified: %v", disk["grown"])
	}
}
