package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pulselog/pulse/internal/loopfs"
)

// TestPartialProduceOnAFullDisk produces requests spread over three
// partitions onto a real ext4 that fills up: every request that fails says
// exactly which of its records were stored (a *PartialError, or
// nothing stored at all), the stored ones read back at their acks, the
// others are never visible, now or after a restart, and no offset is
// handed out twice.
func TestPartialProduceOnAFullDisk(t *testing.T) {
	mnt := loopfs.Mount(t, 16)
	// Ballast, removed to free space when a reopen on the full disk is
	// refused.
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, bytes.Repeat([]byte{1}, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(mnt, "data")
	o := DefaultOptions(dir)
	o.RetentionInterval, o.CompactionInterval = 0, 0
	e, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.CreateTopic("multi", TopicConfig{Partitions: 3, Codec: "none", SegmentMaxBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	type key struct {
		p   int
		off int64
	}
	acked := map[key][]byte{}
	never := map[string]bool{}
	partials, failures := 0, 0
	for i := 0; failures < 20; i++ {
		if i > 5000 {
			t.Fatal("the disk never filled")
		}
		var recs []Record
		for p := range 3 {
			// Partition 2 gets far more bytes, so it fills first.
			size := 200
			if p == 2 {
				size = 48 << 10
			}
			v := append([]byte(fmt.Sprintf("req%05d-p%d:", i, p)), bytes.Repeat([]byte{'v'}, size)...)
			recs = append(recs, Record{Value: v})
		}
		acks, err := e.Produce(context.Background(), "multi", -1, recs)
		var perr *PartialError
		switch {
		case err == nil:
			for j, a := range acks {
				acked[key{a.Partition, a.Offset}] = recs[j].Value
			}
		case errors.As(err, &perr):
			partials++
			failures++
			for j, r := range recs {
				if perr.Stored[j] {
					acked[key{perr.Acks[j].Partition, perr.Acks[j].Offset}] = r.Value
				} else {
					never[string(r.Value[:14])] = true
				}
			}
		default:
			failures++
			for _, r := range recs {
				never[string(r.Value[:14])] = true
			}
		}
	}
	t.Logf("%d acked records, %d failed requests, %d of them partial", len(acked), failures, partials)
	// Partitions 0 and 1 append 200 bytes a request, which mostly fit in a
	// block their segment already has, while partition 2 needs new blocks:
	// on a full disk most failures are partial.
	if partials == 0 {
		t.Fatal("no request failed part-way: the case under test never happened")
	}
	check := func(where string) {
		t.Helper()
		seen := map[key]bool{}
		for p := range 3 {
			from := int64(0)
			for {
				res, err := e.Read("multi", p, from, 1000, 1<<30)
				if err != nil {
					t.Fatalf("%s: read p%d: %v", where, p, err)
				}
				if len(res.Records) == 0 {
					break
				}
				for _, r := range res.Records {
					k := key{p, r.Offset}
					if never[string(r.Value[:14])] {
						t.Fatalf("%s: p%d offset %d holds a record its request was told failed", where, p, r.Offset)
					}
					if want, ok := acked[k]; !ok || !bytes.Equal(want, r.Value) {
						t.Fatalf("%s: p%d offset %d was not acked with this record", where, p, r.Offset)
					}
					seen[k] = true
				}
				from = res.Next
			}
		}
		for k := range acked {
			if !seen[k] {
				t.Fatalf("%s: acked p%d offset %d is gone", where, k.p, k.off)
			}
		}
	}
	check("full disk")
	if err := e.Close(); err != nil {
		t.Logf("close on a full disk: %v", err)
	}
	e, err = Open(o)
	if err != nil {
		// Recovery may need to write (a rebuilt index): on a disk still
		// full that is a clear error naming the file, and nothing changes;
		// with space again, the data dir opens.
		if !strings.Contains(err.Error(), syscall.ENOSPC.Error()) || !strings.Contains(err.Error(), dir) {
			t.Fatalf("reopen on the full disk: %v, want ENOSPC naming a file of %s", err, dir)
		}
		t.Logf("reopen on the full disk refused: %v", err)
		if err := os.Remove(ballast); err != nil {
			t.Fatal(err)
		}
		if e, err = Open(o); err != nil {
			t.Fatalf("reopen once space was freed: %v", err)
		}
	}
	check("after restart")
}
