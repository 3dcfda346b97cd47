package meta

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkCommitCursor is one synced commit per call: its ns/op is the
// latency of a durable cursor commit on this disk.
func BenchmarkCommitCursor(b *testing.B) {
	s, err := Open(b.TempDir(), DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.PutTopic(Topic{Name: "t", Partitions: 4}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.CommitCursor("c", "t", i%4, int64(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitCursorParallel: concurrent consumers; bbolt runs one writer
// at a time, so each commit still pays its own fsync.
func BenchmarkCommitCursorParallel(b *testing.B) {
	s, err := Open(b.TempDir(), DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.PutTopic(Topic{Name: "t", Partitions: 4}); err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		c := fmt.Sprintf("c%d", n.Add(1))
		for i := int64(0); pb.Next(); i++ {
			if err := s.CommitCursor(c, "t", int(i%4), i); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCursorRead is one read transaction per call.
func BenchmarkCursorRead(b *testing.B) {
	s, err := Open(b.TempDir(), DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.PutTopic(Topic{Name: "t", Partitions: 1}); err != nil {
		b.Fatal(err)
	}
	if err := s.CommitCursor("c", "t", 0, 7); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok, err := s.Cursor("c", "t", 0); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkTopicLifecycle: create with 4 partitions, mark, delete: three
// synced commits.
func BenchmarkTopicLifecycle(b *testing.B) {
	s, err := Open(b.TempDir(), DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("t%d", i)
		if err := s.PutTopic(Topic{Name: name, Partitions: 4}); err != nil {
			b.Fatal(err)
		}
		if err := s.MarkTopicDeleting(name); err != nil {
			b.Fatal(err)
		}
		if err := s.DeleteTopic(name); err != nil {
			b.Fatal(err)
		}
	}
}
