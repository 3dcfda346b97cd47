package crashlab

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is what a fault does to the scratch copy of a partition.
type Kind string

// The fault kinds, as written on the command line.
const (
	// Cut truncates a segment at byte N: a write torn by a crash. Default
	// segment: the last one holding data; default N: inside its last batch.
	Cut Kind = "cut"
	// Flip flips one bit of a segment at a byte position: media damage.
	// Default segment: the last one holding data; default position: inside
	// the records of its first batch, bit 0.
	Flip Kind = "flip"
	// IndexDelete removes a segment's .index file.
	IndexDelete Kind = "index:delete"
	// IndexCorrupt appends garbage to a segment's .index file.
	IndexCorrupt Kind = "index:corrupt"
	// SnapshotDelete removes the recovery snapshot.
	SnapshotDelete Kind = "snapshot:delete"
	// SnapshotCorrupt overwrites the recovery snapshot with garbage.
	SnapshotCorrupt Kind = "snapshot:corrupt"
	// HWMDelete removes the persisted high-watermark.
	HWMDelete Kind = "hwm:delete"
	// HWMCorrupt overwrites the hwm file with bytes that are no offset.
	HWMCorrupt Kind = "hwm:corrupt"
	// HWMAhead persists a high-watermark past the end of the log.
	HWMAhead Kind = "hwm:ahead"
	// OrphanTmp leaves a .tmp-compact-* file behind, as a crash during a
	// compaction's rewrite does.
	OrphanTmp Kind = "orphan-tmp"
	// CompactionCrash leaves a sealed segment's data rewritten by a
	// compaction (sparse batches) under its old index, with the index temp
	// file beside it: a crash between the data rename and the index rename.
	// Default segment: the first sealed one.
	CompactionCrash Kind = "compaction-crash"
)

// Kinds lists every fault kind in the order the UI offers them.
func Kinds() []Kind {
	return []Kind{Cut, Flip, IndexDelete, IndexCorrupt, SnapshotDelete, SnapshotCorrupt,
		HWMDelete, HWMCorrupt, HWMAhead, OrphanTmp, CompactionCrash}
}

// Describe is a one-line explanation of a kind, for help texts.
func (k Kind) Describe() string {
	switch k {
	case Cut:
		return "truncate a segment at byte N (a torn write)"
	case Flip:
		return "flip bit BIT of the byte at POS (media damage)"
	case IndexDelete:
		return "delete a segment's .index file"
	case IndexCorrupt:
		return "append garbage to a segment's .index file"
	case SnapshotDelete:
		return "delete the recovery snapshot"
	case SnapshotCorrupt:
		return "overwrite the recovery snapshot with garbage"
	case HWMDelete:
		return "delete the persisted high-watermark"
	case HWMCorrupt:
		return "overwrite the hwm file with garbage"
	case HWMAhead:
		return "persist a high-watermark past the log end"
	case OrphanTmp:
		return "leave a .tmp-compact-* file behind"
	case CompactionCrash:
		return "crash between a compaction's data and index renames"
	}
	return "unknown fault"
}

// takesSegment reports whether a kind acts on one segment (SEGMENT=BASE).
func (k Kind) takesSegment() bool {
	switch k {
	case Cut, Flip, IndexDelete, IndexCorrupt, CompactionCrash:
		return true
	}
	return false
}

// Fault is one parsed fault. Negative fields mean "the default", resolved
// against the partition when the fault is applied (Result.Fault holds the
// resolved values).
type Fault struct {
	Kind    Kind
	Segment int64 // base offset of the segment to damage; -1: the kind's default
	Pos     int64 // Cut: new size N; Flip: byte position; -1: default
	Bit     int   // Flip: bit 0..7 (0 is the least significant)
}

// String is the fault in the form ParseFault reads; resolved defaults are
// written out.
func (f Fault) String() string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	if f.Segment >= 0 && f.Kind.takesSegment() {
		fmt.Fprintf(&b, ":SEGMENT=%d", f.Segment)
	}
	switch f.Kind {
	case Cut:
		if f.Pos >= 0 {
			fmt.Fprintf(&b, ":%d", f.Pos)
		}
	case Flip:
		if f.Pos >= 0 {
			fmt.Fprintf(&b, ":%d:%d", f.Pos, f.Bit)
		}
	}
	return b.String()
}

// ParseFault reads a fault: a kind, an optional SEGMENT=BASE element for
// the kinds that damage one segment, and the kind's numbers:
//
//	cut[:N]                    truncate at byte N (default: inside the last batch)
//	flip[:POS:BIT]             flip bit BIT (0..7) of byte POS
//	index:delete  index:corrupt
//	snapshot:delete  snapshot:corrupt
//	hwm:delete  hwm:corrupt  hwm:ahead
//	orphan-tmp  compaction-crash
//
// e.g. "cut:1234", "flip:SEGMENT=0:4096:3", "index:delete:SEGMENT=512".
// Errors match ErrBadFault and name what was wrong.
func ParseFault(s string) (Fault, error) {
	f := Fault{Segment: -1, Pos: -1}
	parts := strings.Split(strings.TrimSpace(s), ":")
	head := strings.ToLower(parts[0])
	rest := parts[1:]
	switch head {
	case "index", "snapshot", "hwm":
		if len(rest) == 0 {
			return f, fmt.Errorf("%w %q: %s needs an action (%s)", ErrBadFault, s, head, strings.Join(actions(head), ", "))
		}
		head += ":" + strings.ToLower(rest[0])
		rest = rest[1:]
	}
	f.Kind = Kind(head)
	known := false
	for _, k := range Kinds() {
		known = known || k == f.Kind
	}
	if !known {
		if head == "" {
			return f, fmt.Errorf("%w: empty fault (want one of %s)", ErrBadFault, kindList())
		}
		return f, fmt.Errorf("%w %q: unknown kind %q (want one of %s)", ErrBadFault, s, head, kindList())
	}
	var nums []int64
	for _, a := range rest {
		if k, v, ok := strings.Cut(a, "="); ok {
			if !strings.EqualFold(k, "segment") {
				return f, fmt.Errorf("%w %q: unknown element %q (only SEGMENT=BASE)", ErrBadFault, s, a)
			}
			if !f.Kind.takesSegment() {
				return f, fmt.Errorf("%w %q: %s does not act on one segment, SEGMENT= makes no sense", ErrBadFault, s, f.Kind)
			}
			if f.Segment >= 0 {
				return f, fmt.Errorf("%w %q: SEGMENT given twice", ErrBadFault, s)
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return f, fmt.Errorf("%w %q: segment %q is not a base offset (a non-negative integer)", ErrBadFault, s, v)
			}
			f.Segment = n
			continue
		}
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || n < 0 {
			return f, fmt.Errorf("%w %q: %q is not a non-negative integer", ErrBadFault, s, a)
		}
		nums = append(nums, n)
	}
	switch f.Kind {
	case Cut:
		switch len(nums) {
		case 0:
		case 1:
			f.Pos = nums[0]
		default:
			return f, fmt.Errorf("%w %q: cut takes one number, the byte N to truncate at (cut:N)", ErrBadFault, s)
		}
	case Flip:
		switch len(nums) {
		case 0:
		case 2:
			if nums[1] > 7 {
				return f, fmt.Errorf("%w %q: bit %d out of range 0..7", ErrBadFault, s, nums[1])
			}
			f.Pos, f.Bit = nums[0], int(nums[1])
		default:
			return f, fmt.Errorf("%w %q: flip takes a byte position and a bit (flip:POS:BIT)", ErrBadFault, s)
		}
	default:
		if len(nums) > 0 {
			return f, fmt.Errorf("%w %q: %s takes no numbers", ErrBadFault, s, f.Kind)
		}
	}
	return f, nil
}

func actions(head string) []string {
	var out []string
	for _, k := range Kinds() {
		if h, a, ok := strings.Cut(string(k), ":"); ok && h == head {
			out = append(out, a)
		}
	}
	return out
}

func kindList() string {
	ks := Kinds()
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
