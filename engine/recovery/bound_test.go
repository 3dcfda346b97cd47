package recovery

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestPersistedOffsetsPastTheBound: an hwm file, a snapshot or a manifest
// naming an offset no log can reach (past MaxPersistedOffset, such as the
// all-ones 0x7fff... a damaged or hostile file may hold) is unreadable, not
// a promise: the partition opens at the end of its data, with a note,
// instead of a lost range up to it that leaves no offset to append at.
func TestPersistedOffsetsPastTheBound(t *testing.T) {
	f := defaultFixture(t)
	huge := int64(math.MaxInt64)
	hwm := make([]byte, HWMLen)
	binary.BigEndian.PutUint64(hwm, uint64(huge))
	snap := f.snapshot(t, f.active(), int64(len(f.active().data)), f.leo)
	binary.BigEndian.PutUint64(snap[snapOffLEO:], uint64(huge))
	binary.BigEndian.PutUint64(snap[snapOffActiveNext:], uint64(huge))
	putCRC(snap)
	body := fmt.Appendf(nil, `{"version":1,"segments":[0,100,200,%d]}`+"\n", huge)
	man := fmt.Appendf(body, "%s%08x\n", manifestTrailer, crc32c(body))
	for name, damage := range map[string]func(m map[string][]byte){
		"hwm":      func(m map[string][]byte) { m[HWMFile] = hwm },
		"snapshot": func(m map[string][]byte) { m[SnapshotFile] = snap },
		"manifest": func(m map[string][]byte) { m[ManifestFile] = man },
	} {
		m := f.files(t, true)
		damage(m)
		res, _ := runImage(t, m, Options{IndexIntervalBytes: testInterval})
		lines := strings.Join(res.Report.Lines(), "\n")
		if res.LEO != f.leo || res.HWM != f.leo || len(res.Report.Gaps) != 0 {
			t.Errorf("%s at %d: leo %d hwm %d gaps %v, want the log to end at %d\n%s", name, huge, res.LEO, res.HWM, res.Report.Gaps, f.leo, lines)
		}
		if !strings.Contains(lines, name) || !strings.Contains(lines, fmt.Sprint(huge)) {
			t.Errorf("%s at %d: the report does not say why it was not used\n%s", name, huge, lines)
		}
	}
}
