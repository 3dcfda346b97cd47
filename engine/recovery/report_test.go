package recovery

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sampleReport() Report {
	return Report{
		Topic: "orders", Partition: 3, Dir: "/data/topics/orders/p00003",
		Path: PathFullScan, Duration: 1500 * time.Microsecond, BytesScanned: 3 << 20, SegmentsChecked: 2, BatchesChecked: 120,
		IndexesRebuilt:   []string{"/data/topics/orders/p00003/00000000000000000000.index"},
		TempFilesRemoved: []string{".tmp-hwm-1"},
		Truncations:      []Truncation{{Segment: "/data/topics/orders/p00003/00000000000000000100.log", Position: 4000, Bytes: 17, Reason: "torn"}},
		Corrupt: []CorruptRange{{Segment: "/data/topics/orders/p00003/00000000000000000000.log", StartPos: 100, EndPos: 300,
			FirstOffset: 5, EndOffset: 9, Err: "checksum"}},
		PersistedHWM: 150, RecoveredEnd: 170, HiddenTail: 20, HiddenTailPolicy: HiddenTailExpose, HWM: 170,
		Degraded: true, SnapshotNote: "no snapshot", Notes: []string{"a note"},
	}
}

func TestReportJSON(t *testing.T) {
	r := sampleReport()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"path":"full-scan"`, `"bytes_scanned":`, `"indexes_rebuilt":`, `"temp_files_removed":`,
		`"start_pos":100`, `"first_offset":5`, `"end_offset":9`, `"persisted_hwm":150`, `"hidden_tail":20`, `"hidden_tail_policy":"expose"`,
		`"degraded":true`, `"snapshot_note":`, `"duration_ns":1500000`, `"error":"checksum"`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON lacks %s: %s", key, b)
		}
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip:\n%+v\n%+v", back, r)
	}
}

func TestReportText(t *testing.T) {
	r := sampleReport()
	if !r.NeedsWork() {
		t.Fatal("NeedsWork false")
	}
	sum := r.Summary()
	for _, want := range []string{"orders/p3: full-scan", "scanned 3.00 MiB in 120 batches", "end 170, hwm 170", "hidden tail 20 (expose)",
		"truncated 17 bytes", "DEGRADED: 1 corrupt ranges (4 offsets)", "1 indexes rebuilt", "1 temp files removed"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q: %s", want, sum)
		}
	}
	if strings.Contains(sum, "\n") {
		t.Fatalf("summary is not one line: %q", sum)
	}
	var buf bytes.Buffer
	if err := r.Render(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if text != strings.Join(r.Lines(), "\n")+"\n" {
		t.Fatal("Render and Lines differ")
	}
	for _, want := range []string{"partition orders/p3  [DEGRADED]", "full-scan (no snapshot)", "hwm             170 (persisted 150, hidden tail 20, policy expose)",
		"00000000000000000000.index rebuilt", "00000000000000000100.log truncated at 4000: 17 bytes (torn)",
		"CORRUPT         00000000000000000000.log bytes [100, 300) offsets [5, 9): checksum", "note            a note"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	r.ReadOnly = true
	if s := strings.Join(r.Lines(), "\n"); !strings.Contains(s, "would be truncated") || !strings.Contains(s, "would be rebuilt") {
		t.Fatalf("read-only wording:\n%s", s)
	}

	clean := Report{Dir: "/d", Path: PathSnapshot, PersistedHWM: -1, HiddenTailPolicy: HiddenTailExpose}
	if clean.NeedsWork() || clean.Name() != "/d" || !strings.Contains(strings.Join(clean.Lines(), "\n"), "[ok]") ||
		!strings.Contains(strings.Join(clean.Lines(), "\n"), "persisted none") {
		t.Fatalf("clean report: %v %v", clean.NeedsWork(), clean.Lines())
	}
	for _, p := range []string{PathDelta, PathFullScan} {
		if (&Report{Path: p}).NeedsWork() != true {
			t.Errorf("path %s does not need work", p)
		}
	}
}
