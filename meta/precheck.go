package meta

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// bbolt's on-disk meta page (go.etcd.io/bbolt, format version 2): a 16-byte
// page header, then the meta fields below, the last being an FNV-64a
// checksum of the meta fields before it. Two meta pages sit at page 0 and
// page 1; bbolt uses the valid one with the higher txid.
const (
	boltPageHeader = 16
	boltMagic      = 0xED0CDAED
	boltVersion    = 2

	metaOffMagic    = boltPageHeader + 0  // u32
	metaOffVersion  = boltPageHeader + 4  // u32
	metaOffPageSize = boltPageHeader + 8  // u32
	metaOffFreelist = boltPageHeader + 32 // u64: the free list's page
	metaOffPgid     = boltPageHeader + 40 // u64: pages in use (high water mark)
	metaOffTxid     = boltPageHeader + 48 // u64
	metaOffChecksum = boltPageHeader + 56 // u64: fnv64a of [boltPageHeader, metaOffChecksum)
	metaEnd         = metaOffChecksum + 8

	// Every page starts with this header: id u64, flags u16, count u16,
	// overflow u32 (the pages after it that it spans).
	pageOffFlags     = 8
	pageOffCount     = 10
	pageOffOverflow  = 12
	freelistPageFlag = 0x10
	noFreelist       = ^uint64(0) // the meta page's free list when none is stored
)

// boltMeta is what checkFile reads from one meta page.
type boltMeta struct {
	pageSize uint32
	freelist uint64
	pgid     uint64
	txid     uint64
}

// parseBoltMeta decodes the meta page at the start of b.
func parseBoltMeta(b []byte) (boltMeta, error) {
	if len(b) < metaEnd {
		return boltMeta{}, fmt.Errorf("%d bytes, a meta page needs %d", len(b), metaEnd)
	}
	le := binary.LittleEndian // bbolt writes native order; Pulse's platforms are little-endian
	if m := le.Uint32(b[metaOffMagic:]); m != boltMagic {
		return boltMeta{}, fmt.Errorf("magic 0x%08x, want 0x%08x", m, boltMagic)
	}
	if v := le.Uint32(b[metaOffVersion:]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("format version %d, want %d", v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(b[boltPageHeader:metaOffChecksum])
	if got, want := h.Sum64(), le.Uint64(b[metaOffChecksum:]); got != want {
		return boltMeta{}, fmt.Errorf("checksum 0x%016x, stored 0x%016x", got, want)
	}
	m := boltMeta{pageSize: le.Uint32(b[metaOffPageSize:]), freelist: le.Uint64(b[metaOffFreelist:]), pgid: le.Uint64(b[metaOffPgid:]), txid: le.Uint64(b[metaOffTxid:])}
	if m.pageSize < 512 || m.pageSize > 1<<16 || m.pageSize&(m.pageSize-1) != 0 {
		return boltMeta{}, fmt.Errorf("page size %d", m.pageSize)
	}
	return m, nil
}

// checkFile checks an existing meta.db before bbolt maps it: bbolt maps the
// file and trusts its meta page, so a truncated file would make it touch
// mapped memory past the end of the file, a SIGBUS that kills the process.
// The file must be non-empty, hold a valid meta page (magic, version,
// checksum), and be at least as long as the pages that meta page says are
// in use. The error names the file and wraps ErrDamaged.
func checkFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("meta: %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("meta: %s: %w", path, err)
	}
	size := fi.Size()
	if size == 0 {
		return fmt.Errorf("meta: %s: %w: the file is empty (truncated?)", path, ErrDamaged)
	}
	buf := make([]byte, metaEnd)
	read := func(off int64) ([]byte, error) {
		n, err := f.ReadAt(buf, off)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		return buf[:n], nil
	}
	b, err := read(0)
	if err != nil {
		return fmt.Errorf("meta: %s: %w", path, err)
	}
	m0, err0 := parseBoltMeta(b)
	var best boltMeta
	var problems []string
	if err0 == nil {
		best = m0
	} else {
		problems = append(problems, "meta page 0: "+err0.Error())
	}
	// Page 1 sits one page in; without a valid page 0, try the page sizes
	// bbolt uses.
	sizes := []int64{4096, 8192, 16384, 65536}
	if err0 == nil {
		sizes = []int64{int64(m0.pageSize)}
	}
	found1 := false
	for _, ps := range sizes {
		if ps+metaEnd > size {
			continue
		}
		b, err := read(ps)
		if err != nil {
			return fmt.Errorf("meta: %s: %w", path, err)
		}
		m1, err1 := parseBoltMeta(b)
		if err1 != nil {
			if err0 == nil {
				problems = append(problems, "meta page 1: "+err1.Error())
			}
			continue
		}
		found1 = true
		if err0 != nil || m1.txid > best.txid {
			best = m1
		}
		break
	}
	if err0 != nil && !found1 {
		return fmt.Errorf("meta: %s: %w: no valid meta page (%s; %d bytes)", path, ErrDamaged, problems[0], size)
	}
	if need := int64(best.pgid) * int64(best.pageSize); size < need {
		return fmt.Errorf("meta: %s: %w: %d bytes, its meta page says %d pages of %d bytes (%d bytes) are in use: truncated",
			path, ErrDamaged, size, best.pgid, best.pageSize, need)
	}
	// bbolt reads the free list as it opens the file and panics on a
	// damaged page there, holding the file's lock: check its header first.
	if f := best.freelist; f != noFreelist {
		if f < 2 || f >= best.pgid {
			return fmt.Errorf("meta: %s: %w: the free list is page %d, outside the %d pages in use", path, ErrDamaged, f, best.pgid)
		}
		b, err := read(int64(f) * int64(best.pageSize))
		if err != nil {
			return fmt.Errorf("meta: %s: %w", path, err)
		}
		le := binary.LittleEndian
		if len(b) < boltPageHeader {
			return fmt.Errorf("meta: %s: %w: the free list page %d is cut short", path, ErrDamaged, f)
		}
		if flags := le.Uint16(b[pageOffFlags:]); flags != freelistPageFlag {
			return fmt.Errorf("meta: %s: %w: the free list page %d has flags 0x%02x, want 0x%02x", path, ErrDamaged, f, flags, freelistPageFlag)
		}
		over := uint64(le.Uint32(b[pageOffOverflow:]))
		if f+over >= best.pgid {
			return fmt.Errorf("meta: %s: %w: the free list page %d spans %d more pages, past the %d pages in use", path, ErrDamaged, f, over, best.pgid)
		}
		// A count of 0xffff says the real one is the first element.
		if n := uint64(le.Uint16(b[pageOffCount:])); n < 0xffff && boltPageHeader+8*n > (over+1)*uint64(best.pageSize) {
			return fmt.Errorf("meta: %s: %w: the free list page %d says it holds %d pages, more than its %d bytes do", path, ErrDamaged, f, n, (over+1)*uint64(best.pageSize))
		}
	}
	return nil
}
