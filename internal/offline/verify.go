package offline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
	"github.com/pulselog/pulse/internal/layout"
	"github.com/pulselog/pulse/internal/units"
	"github.com/pulselog/pulse/meta"
)

// VerifyProblem is one bad region found by `pulse verify`.
type VerifyProblem struct {
	File        string `json:"file"`
	Position    int64  `json:"position"`
	EndPosition int64  `json:"end_position"`
	FirstOffset int64  `json:"first_offset"`
	EndOffset   int64  `json:"end_offset"` // exclusive
	Kind        string `json:"kind"`       // "corrupt", "torn-tail", "missing", "lost" or "stray"
	Error       string `json:"error"`
}

// VerifySummary is what `pulse verify --json` prints.
type VerifySummary struct {
	Root     string          `json:"root"`
	Segments int             `json:"segments"`
	Batches  int64           `json:"batches"`
	Bytes    int64           `json:"bytes"`
	OK       bool            `json:"ok"`
	Problems []VerifyProblem `json:"problems"`
}

// Verify checks every batch of every segment under root (a data, topic or
// partition directory), drawing a progress bar on progress (nil: none), and
// prints the problems; it returns an error when there is any.
func Verify(w, progress io.Writer, root string, asJSON bool) error {
	parts, err := findPartitions(root)
	if err != nil {
		return err
	}
	recorded := recordedHWMs(root)
	type job struct {
		path     string
		limit    int64
		size     int64
		recorded []recovery.Gap // the partition's gaps the manifest records
		part     int            // index in ends
		last     bool           // the partition's last segment (the active one)
	}
	// ends[i] is where parts[i]'s segments end, once its last one is scanned.
	type end struct {
		files recovery.SegmentFiles
		leo   int64
		torn  bool // its last segment ends in a torn tail (already a problem)
	}
	ends := make([]end, len(parts))
	var jobs []job
	var total int64
	// What the manifest says of the files comes first: a listed segment
	// that is gone, an offset range an earlier open recorded as lost and a
	// .log the manifest does not list (never read by recovery, so not
	// scrubbed as part of the log) are problems too.
	var found []VerifyProblem
	for pi, p := range parts {
		sf, err := recovery.SegmentFilesOf(p.dir)
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		ends[pi].files = sf
		for _, g := range sf.Recorded {
			found = append(found, VerifyProblem{File: filepath.Join(p.dir, layout.ManifestFile), FirstOffset: g.FirstOffset, EndOffset: g.EndOffset,
				Kind: "lost", Error: "offsets recorded as lost: " + g.Reason})
		}
		for _, g := range sf.Missing {
			found = append(found, VerifyProblem{File: filepath.Join(p.dir, segment.LogFile(g.FirstOffset)), FirstOffset: g.FirstOffset, EndOffset: g.EndOffset,
				Kind: "missing", Error: g.Reason})
		}
		for _, b := range sf.Stray {
			path := filepath.Join(p.dir, segment.LogFile(b))
			var size int64
			if fi, err := os.Stat(path); err == nil {
				size = fi.Size()
			}
			found = append(found, VerifyProblem{File: path, EndPosition: size, FirstOffset: b, EndOffset: b,
				Kind: "stray", Error: "not in the manifest: left alone and never read"})
		}
		for i, b := range sf.Segments {
			path := filepath.Join(p.dir, segment.LogFile(b))
			fi, err := os.Stat(path)
			if err != nil {
				return err
			}
			limit, ok := sf.Limits[b]
			if !ok && sf.Limits == nil && i+1 < len(sf.Segments) {
				limit = sf.Segments[i+1] // no manifest: the next file bounds it
			}
			jobs = append(jobs, job{path, limit, fi.Size(), sf.Recorded, pi, i == len(sf.Segments)-1})
			total += fi.Size()
		}
	}
	bar := newProgressBar(progress, total)
	sum := VerifySummary{Root: root, Problems: append([]VerifyProblem{}, found...)}
	var done int64
	for _, j := range jobs {
		opts := recovery.CheckOptions{
			Limit:    j.limit,
			Progress: func(n int64) { bar.set(done + n) },
		}
		if j.last {
			opts.Acknowledged = acknowledgedEnd(parts[j.part], recorded)
		}
		c, err := recovery.CheckSegmentFile(j.path, opts)
		if err != nil {
			bar.finish()
			return fmt.Errorf("verify: %w", err)
		}
		done += j.size
		bar.set(done)
		sum.Segments++
		sum.Batches += c.Batches
		sum.Bytes += c.Size
		for _, r := range c.Corrupt {
			sum.Problems = append(sum.Problems, VerifyProblem{File: j.path, Position: r.StartPos, EndPosition: r.EndPos,
				FirstOffset: r.FirstOffset, EndOffset: r.EndOffset, Kind: "corrupt", Error: r.Err})
		}
		if g := c.Lost; g != nil && !covered(j.recorded, *g) {
			sum.Problems = append(sum.Problems, VerifyProblem{File: j.path, Position: c.Size, EndPosition: c.Size,
				FirstOffset: g.FirstOffset, EndOffset: g.EndOffset, Kind: "lost", Error: g.Reason})
		}
		if t := c.Torn; t != nil {
			sum.Problems = append(sum.Problems, VerifyProblem{File: j.path, Position: t.Position, EndPosition: t.Position + t.Bytes,
				FirstOffset: c.NextOffset, EndOffset: c.NextOffset, Kind: "torn-tail", Error: t.Reason})
		}
		if j.last {
			ends[j.part].leo, ends[j.part].torn = c.NextOffset, c.Torn != nil
		}
	}
	// Offsets Pulse acknowledged (the persisted hwm, a snapshot's end) that
	// no segment holds are lost, as recovery reports them; a missing last
	// segment below them is the active one gone, not an interrupted roll.
	for pi, p := range parts {
		e := ends[pi]
		promised := acknowledgedEnd(p, recorded)
		g := recovery.Gap{FirstOffset: e.leo, EndOffset: promised}
		if e.torn || promised <= e.leo || covered(e.files.Recorded, g) {
			continue
		}
		by := "persisted hwm, snapshot"
		if promised > recovery.AcknowledgedEnd(p.dir) {
			by = "meta.db's recorded hwm"
		}
		pr := VerifyProblem{File: filepath.Join(p.dir, layout.HWMFile), FirstOffset: g.FirstOffset, EndOffset: g.EndOffset, Kind: "lost",
			Error: fmt.Sprintf("the segments end at offset %d but offsets up to %d were acknowledged (%s)", e.leo, promised, by)}
		if b := e.files.MissingActive; b >= 0 {
			pr.File, pr.Kind = filepath.Join(p.dir, segment.LogFile(b)), "missing"
			pr.Error = fmt.Sprintf("the active segment %s, listed in the manifest, is missing; offsets up to %d were acknowledged", segment.LogFile(b), promised)
		}
		sum.Problems = append(sum.Problems, pr)
	}
	bar.finish()
	sum.OK = len(sum.Problems) == 0
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		for _, p := range sum.Problems {
			fmt.Fprintf(w, "BAD %s position %d-%d offsets %d-%d (%s): %s\n", p.File, p.Position, p.EndPosition, p.FirstOffset, p.EndOffset, p.Kind, p.Error)
		}
		state := "all ok"
		if !sum.OK {
			state = fmt.Sprintf("%d problems", len(sum.Problems))
		}
		fmt.Fprintf(w, "verified %d partitions, %d segments, %d batches, %d bytes: %s\n", len(parts), sum.Segments, sum.Batches, sum.Bytes, state)
	}
	if !sum.OK {
		return fmt.Errorf("verify: %d problems found in %s", len(sum.Problems), root)
	}
	return nil
}

// progressBar draws "verifying [#####     ] 52%   10.0 MiB / 19.2 MiB" (the
// bytes in units.FormatBytes's unit) on one line, redrawn at most once per
// percent.
type progressBar struct {
	w     io.Writer // nil: no output
	total int64
	last  int // percent last drawn, -1 before the first draw
	done  int64
}

func newProgressBar(w io.Writer, total int64) *progressBar {
	return &progressBar{w: w, total: total, last: -1}
}

func (b *progressBar) set(done int64) {
	if b.w == nil {
		return
	}
	b.done = min(done, b.total)
	pct := 100
	if b.total > 0 {
		pct = int(b.done * 100 / b.total)
	}
	if pct == b.last {
		return
	}
	b.last = pct
	const width = 30
	fill := pct * width / 100
	// The bytes done are padded to the widest FormatBytes gives ("1023.9
	// KiB"), so that a redraw in a shorter unit covers the one before.
	fmt.Fprintf(b.w, "\rverifying [%s%s] %3d%% %10s / %s", strings.Repeat("#", fill), strings.Repeat(" ", width-fill),
		pct, units.FormatBytes(b.done), units.FormatBytes(b.total))
}

func (b *progressBar) finish() {
	if b.w == nil {
		return
	}
	b.set(b.total)
	fmt.Fprintln(b.w)
}

// partitionDir is one partition directory found under a root.
type partitionDir struct {
	dir       string
	topic     string // "" when unknown
	partition int
}

// findPartitions resolves root to partition directories: root itself when it
// holds segment files or is named pNNNNN, the pNNNNN directories of a topic
// directory, or every <root>/topics/<topic>/pNNNNN of a data directory.
// acknowledgedEnd is the acknowledged end recovery takes for p: its hwm
// file and snapshot (recovery.AcknowledgedEnd), and the high-watermark
// meta.db recorded (recordedHWMs).
func acknowledgedEnd(p partitionDir, recorded map[partitionID]int64) int64 {
	return max(recovery.AcknowledgedEnd(p.dir), recorded[partitionID{p.topic, p.partition}])
}

func findPartitions(root string) ([]partitionDir, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", root)
	}
	abs, _ := filepath.Abs(root)
	if n, ok := layout.ParsePartitionName(filepath.Base(abs)); ok || holdsSegments(root) {
		if !looksLikePartition(root) {
			return nil, fmt.Errorf("%w: %s holds no Pulse partition files (no hwm, snapshot or manifest file, no segment starting with a valid batch header)", errNotPulse, root)
		}
		return []partitionDir{{dir: root, topic: filepath.Base(filepath.Dir(abs)), partition: n}}, nil
	}
	topics := filepath.Join(root, layout.TopicsDir)
	if _, err := os.Stat(topics); err == nil {
		var all []partitionDir
		ents, err := os.ReadDir(topics)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if e.IsDir() {
				ps, err := topicPartitions(filepath.Join(topics, e.Name()), e.Name())
				if err != nil {
					return nil, err
				}
				all = append(all, ps...)
			}
		}
		return all, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	ps, err := topicPartitions(root, filepath.Base(abs))
	if err == nil && len(ps) == 0 {
		if _, merr := os.Stat(filepath.Join(root, meta.FileName)); merr != nil {
			return nil, fmt.Errorf("%w: %s is neither a data directory (no meta.db, no topics/), a topic directory (no pNNNNN partition directories) nor a partition directory (no segment files)", errNotPulse, root)
		}
	}
	return ps, err
}

// errNotPulse: the path given to verify, inspect or dump is not something
// Pulse wrote.
var errNotPulse = errors.New("not a Pulse data directory")

// looksLikePartition reports whether dir holds a file only a Pulse
// partition has: its hwm, snapshot or manifest file, or a segment whose
// first bytes parse as a batch header.
func looksLikePartition(dir string) bool {
	for _, f := range []string{recovery.HWMFile, recovery.SnapshotFile, recovery.ManifestFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	bases, err := segment.List(dir)
	if err != nil {
		return false
	}
	for _, b := range bases {
		if startsWithBatch(filepath.Join(dir, segment.LogFile(b))) {
			return true
		}
	}
	return false
}

// startsWithBatch reports whether the file is empty (a new segment) or its
// first bytes parse as a batch header.
func startsWithBatch(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	hb := make([]byte, codec.HeaderLen)
	n, _ := io.ReadFull(f, hb)
	if n == 0 {
		return true
	}
	_, err = codec.ParseHeader(hb[:n])
	return err == nil
}

func topicPartitions(dir, topic string) ([]partitionDir, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ps []partitionDir
	for _, e := range ents {
		if n, ok := layout.ParsePartitionName(e.Name()); ok && e.IsDir() {
			ps = append(ps, partitionDir{dir: filepath.Join(dir, e.Name()), topic: topic, partition: n})
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].partition < ps[j].partition })
	return ps, nil
}

func holdsSegments(dir string) bool {
	b, err := segment.List(dir)
	return err == nil && len(b) > 0
}

// covered says whether one of gaps holds all of g (already reported).
func covered(gaps []recovery.Gap, g recovery.Gap) bool {
	for _, h := range gaps {
		if h.FirstOffset <= g.FirstOffset && g.EndOffset <= h.EndOffset {
			return true
		}
	}
	return false
}
