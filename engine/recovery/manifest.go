package recovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/pulselog/pulse/internal/fsutil"
	"github.com/pulselog/pulse/internal/layout"
)

// ManifestFile is the per-partition record of the segments the partition
// should hold.
const ManifestFile = layout.ManifestFile

// manifestVersion is the only version written and read.
const manifestVersion = 1

// maxManifestBytes bounds what ReadManifest reads: 1 MiB holds tens of
// thousands of segments and gaps, far more than a partition ever has.
const maxManifestBytes = 1 << 20

// manifestTrailer starts the last line of the file: the crc32c (Castagnoli,
// 8 hex digits) of every byte before that line.
const manifestTrailer = "crc32c "

// Manifest is the durable set of segments of one partition (docs/architecture.md, "What recovery promises"),
// rewritten atomically (temp file, fsync, rename, directory fsync) before a
// roll creates a segment and before retention or compaction deletes one, so
// recovery can tell a missing, renamed or stray segment from the log's own.
//
// On disk it is one JSON object followed by a line "crc32c xxxxxxxx".
type Manifest struct {
	Version int `json:"version"`
	// Segments are the base offsets of the segments, ascending; the last one
	// is the active segment (possibly not created yet: a roll writes the
	// manifest first).
	Segments []int64 `json:"segments"`
	// Retired are segments being deleted (retention, compaction): recovery
	// finishes deleting whatever is left of them.
	Retired []int64 `json:"retired,omitempty"`
	// Gaps are lost offset ranges recovery found; they stay recorded so
	// every later open reports and skips them again.
	Gaps []Gap `json:"gaps,omitempty"`
}

// Validate checks what a decoded manifest must satisfy.
func (m Manifest) Validate() error {
	if m.Version != manifestVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrBadManifest, m.Version, manifestVersion)
	}
	if len(m.Segments) == 0 {
		return fmt.Errorf("%w: no segments", ErrBadManifest)
	}
	for i, b := range m.Segments {
		if b < 0 || (i > 0 && b <= m.Segments[i-1]) {
			return fmt.Errorf("%w: segment bases not ascending and non-negative at %d", ErrBadManifest, i)
		}
	}
	for _, b := range m.Retired {
		if b < 0 || slices.Contains(m.Segments, b) {
			return fmt.Errorf("%w: retired segment %d is negative or still listed", ErrBadManifest, b)
		}
	}
	for i, g := range m.Gaps {
		if g.FirstOffset < 0 || g.EndOffset <= g.FirstOffset {
			return fmt.Errorf("%w: gap %d [%d, %d) is empty or negative", ErrBadManifest, i, g.FirstOffset, g.EndOffset)
		}
	}
	return nil
}

// EncodeManifest returns the file image of m.
func EncodeManifest(m Manifest) ([]byte, error) {
	m.Version = manifestVersion
	if err := m.Validate(); err != nil {
		return nil, err
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	body = append(body, '\n')
	return fmt.Appendf(body, "%s%08x\n", manifestTrailer, crc32c(body)), nil
}

// DecodeManifest parses and checks a manifest file image.
func DecodeManifest(b []byte) (Manifest, error) {
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return Manifest{}, fmt.Errorf("%w: does not end in a newline (torn?)", ErrBadManifest)
	}
	i := bytes.LastIndexByte(b[:len(b)-1], '\n')
	if i < 0 {
		return Manifest{}, fmt.Errorf("%w: no checksum line", ErrBadManifest)
	}
	body, trailer := b[:i+1], b[i+1:len(b)-1]
	hex, ok := bytes.CutPrefix(trailer, []byte(manifestTrailer))
	if !ok || len(hex) != 8 {
		return Manifest{}, fmt.Errorf("%w: last line %q is not %q and 8 hex digits", ErrBadManifest, trailer, manifestTrailer)
	}
	if got := fmt.Sprintf("%08x", crc32c(body)); got != string(hex) {
		return Manifest{}, fmt.Errorf("%w: crc32c %s, stored %q", ErrBadManifest, got, hex)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("%w: %v", ErrBadManifest, err)
	}
	if dec.More() {
		return Manifest{}, fmt.Errorf("%w: data after the object", ErrBadManifest)
	}
	if err := m.Validate(); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

// WriteManifest replaces dir/manifest atomically.
func WriteManifest(dir string, m Manifest) error {
	b, err := EncodeManifest(m)
	if err != nil {
		return fmt.Errorf("write manifest in %s: %w", dir, err)
	}
	if err := fsutil.WriteFileAtomic(dir, ManifestFile, b); err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return nil
}

// ReadManifest reads dir/manifest. A missing file gives an error matching
// fs.ErrNotExist; a damaged one an error matching ErrBadManifest.
func ReadManifest(dir string) (Manifest, error) {
	p := filepath.Join(dir, ManifestFile)
	f, err := os.Open(p)
	if err != nil {
		return Manifest{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return Manifest{}, fmt.Errorf("read %s: %w", p, err)
	}
	if len(b) > maxManifestBytes {
		return Manifest{}, fmt.Errorf("%s: %w: larger than %d bytes", p, ErrBadManifest, maxManifestBytes)
	}
	m, err := DecodeManifest(b)
	if err != nil {
		return Manifest{}, fmt.Errorf("%s: %w", p, err)
	}
	return m, nil
}
