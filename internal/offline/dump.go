package offline

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pulselog/pulse/engine/codec"
	"github.com/pulselog/pulse/engine/recovery"
	"github.com/pulselog/pulse/engine/segment"
)

// DumpOptions say what Dump prints.
type DumpOptions struct {
	Records bool // the records of every batch, too
	JSON    bool // one JSON document
}

// Dump prints one file of a partition: the batches of a .log segment, the
// entries of an .index, or the fields of a snapshot or hwm file, chosen by
// its name. The file is only read.
func Dump(w io.Writer, path string, o DumpOptions) error {
	switch name := filepath.Base(path); {
	case strings.HasSuffix(name, segment.IndexExt):
		return dumpIndex(w, path, o.JSON)
	case name == recovery.SnapshotFile || name == recovery.HWMFile:
		return dumpState(w, path, o.JSON)
	}
	return runDump(w, path, o.Records, o.JSON)
}

// dumpBatch is one batch or damaged region in `pulse dump --json`.
type dumpBatch struct {
	Position       int64        `json:"position"`
	Size           int64        `json:"size"`
	BaseOffset     *int64       `json:"base_offset,omitempty"`
	NextOffset     int64        `json:"next_offset"`
	RecordCount    uint32       `json:"record_count,omitempty"`
	Codec          string       `json:"codec,omitempty"`
	Sparse         bool         `json:"sparse,omitempty"`
	BatchLen       uint32       `json:"batch_len,omitempty"`
	RawLen         int64        `json:"raw_len,omitempty"`
	FirstTimestamp int64        `json:"first_timestamp,omitempty"`
	LastTimestamp  int64        `json:"last_timestamp,omitempty"`
	CRC            string       `json:"crc"` // "ok" or "bad"
	Error          string       `json:"error,omitempty"`
	Records        []dumpRecord `json:"records,omitempty"`
}

// dumpRecord is one record; bytes that are not UTF-8 go in the _b64 fields.
type dumpRecord struct {
	Offset    int64        `json:"offset"`
	Timestamp int64        `json:"timestamp"`
	Key       *string      `json:"key"`
	KeyB64    string       `json:"key_b64,omitempty"`
	Value     *string      `json:"value"`
	ValueB64  string       `json:"value_b64,omitempty"`
	Headers   []dumpHeader `json:"headers,omitempty"`
}

type dumpHeader struct {
	Key      string  `json:"key"`
	Value    *string `json:"value"`
	ValueB64 string  `json:"value_b64,omitempty"`
}

type dumpDoc struct {
	File    string                 `json:"file"`
	Check   *recovery.SegmentCheck `json:"check"`
	OK      bool                   `json:"ok"`
	Batches []dumpBatch            `json:"batches"`
}

func runDump(w io.Writer, path string, records, asJSON bool) error {
	if fi, err := os.Stat(path); err != nil {
		return fmt.Errorf("dump: %w", err)
	} else if fi.IsDir() {
		return fmt.Errorf("dump: %s is a directory: pulse dump takes one segment file (a <20-digit base offset>.log in a partition directory)", path)
	}
	doc := dumpDoc{File: path, Batches: []dumpBatch{}}
	var recs []codec.Record
	visit := func(f recovery.Frame) error {
		b := dumpBatch{Position: f.Position, Size: f.Size, NextOffset: f.NextOffset, CRC: "ok", Error: f.Err}
		if f.HeaderOK {
			h := f.Header
			base := h.BaseOffset
			b.BaseOffset = &base
			b.RecordCount, b.Codec, b.Sparse, b.BatchLen = h.RecordCount, h.Codec().String(), h.Sparse(), h.BatchLen
			b.FirstTimestamp, b.LastTimestamp = h.FirstTimestamp, h.LastTimestamp
		}
		if f.Err != "" {
			b.CRC = "bad"
		} else {
			if raw, err := codec.RawLen(f.Bytes); err == nil {
				b.RawLen = raw
			}
			if records {
				batch, err := codec.DecodeBatchInto(f.Bytes, recs[:0])
				if err != nil {
					b.Error = err.Error()
				}
				recs = batch.Records
				for _, r := range batch.Records {
					b.Records = append(b.Records, toDumpRecord(r))
				}
			}
		}
		if asJSON {
			doc.Batches = append(doc.Batches, b)
			return nil
		}
		return printDumpBatch(w, &b)
	}
	check, err := recovery.CheckSegmentFile(path, recovery.CheckOptions{Visit: visit})
	if err != nil {
		return fmt.Errorf("dump %s: %w", path, err)
	}
	doc.Check, doc.OK = check, check.OK()
	var notPulse error
	if check.Batches == 0 && check.Size > 0 {
		why := ""
		if check.Torn != nil {
			why = ": " + check.Torn.Reason
		} else if len(check.Corrupt) > 0 {
			why = ": " + check.Corrupt[0].Err
		}
		notPulse = fmt.Errorf("dump: %s is not a Pulse segment: not one valid batch in its %d bytes%s (pulse dump reads a partition's .log, .index, snapshot and hwm files; its manifest is text; pulse meta dump reads meta.db)", path, check.Size, why)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return err
		}
		return notPulse
	}
	if notPulse != nil {
		return notPulse // not damage: nothing Pulse wrote
	}
	state := "ok"
	if !check.OK() {
		state = fmt.Sprintf("DAMAGED: %d corrupt ranges", len(check.Corrupt))
		if check.Torn != nil {
			state += fmt.Sprintf(", torn tail of %d bytes at %d", check.Torn.Bytes, check.Torn.Position)
		}
	}
	if _, err := fmt.Fprintf(w, "%s: base %d, %d bytes, %d valid batches, next offset %d: %s\n",
		path, check.Base, check.Size, check.Batches, check.NextOffset, state); err != nil {
		return err
	}
	return notPulse
}

func printDumpBatch(w io.Writer, b *dumpBatch) error {
	var s strings.Builder
	if b.Error != "" && b.CRC == "bad" {
		fmt.Fprintf(&s, "position %d size %d BAD: %s\n", b.Position, b.Size, b.Error)
		if b.BaseOffset != nil {
			fmt.Fprintf(&s, "  header claims base offset %d, %d records, codec %s, batch length %d\n", *b.BaseOffset, b.RecordCount, b.Codec, b.BatchLen)
		}
	} else {
		sparse := ""
		if b.Sparse {
			sparse = " sparse"
		}
		fmt.Fprintf(&s, "position %d base_offset %d next_offset %d count %d codec %s%s size %d batch_len %d raw_len %d first_ts %s last_ts %s crc %s\n",
			b.Position, *b.BaseOffset, b.NextOffset, b.RecordCount, b.Codec, sparse, b.Size, b.BatchLen, b.RawLen,
			fmtMillis(b.FirstTimestamp), fmtMillis(b.LastTimestamp), b.CRC)
		if b.Error != "" {
			fmt.Fprintf(&s, "  records do not decode: %s\n", b.Error)
		}
	}
	for _, r := range b.Records {
		fmt.Fprintf(&s, "  offset %d ts %s key %s value %s", r.Offset, fmtMillis(r.Timestamp), textOf(r.Key, r.KeyB64), textOf(r.Value, r.ValueB64))
		for _, h := range r.Headers {
			fmt.Fprintf(&s, " header %q=%s", h.Key, textOf(h.Value, h.ValueB64))
		}
		s.WriteByte('\n')
	}
	_, err := io.WriteString(w, s.String())
	return err
}

func toDumpRecord(r codec.Record) dumpRecord {
	d := dumpRecord{Offset: r.Offset, Timestamp: r.Timestamp}
	d.Key, d.KeyB64 = bytesField(r.Key)
	d.Value, d.ValueB64 = bytesField(r.Value)
	for _, h := range r.Headers {
		dh := dumpHeader{Key: h.Key}
		dh.Value, dh.ValueB64 = bytesField(h.Value)
		d.Headers = append(d.Headers, dh)
	}
	return d
}

// bytesField renders b as a string when it is UTF-8, else as base64; nil
// stays null.
func bytesField(b []byte) (*string, string) {
	if b == nil {
		return nil, ""
	}
	if utf8.Valid(b) {
		s := string(b)
		return &s, ""
	}
	return nil, base64.StdEncoding.EncodeToString(b)
}

func textOf(s *string, b64 string) string {
	switch {
	case b64 != "":
		return "base64:" + b64
	case s == nil:
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}

func fmtMillis(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

// dumpIndex prints the entries of an .index file.
func dumpIndex(w io.Writer, path string, asJSON bool) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("dump %s: %w", path, err)
	}
	base, _, nameErr := segment.ParseName(filepath.Base(path))
	entries, derr := segment.DecodeIndex(b)
	if asJSON {
		type entry struct {
			Offset   int64 `json:"offset"`
			Position int64 `json:"position"`
		}
		doc := struct {
			File    string  `json:"file"`
			Base    int64   `json:"base"`
			Entries []entry `json:"entries"`
			Error   string  `json:"error,omitempty"`
		}{File: path, Base: base, Entries: []entry{}}
		for _, e := range entries {
			doc.Entries = append(doc.Entries, entry{base + int64(e.RelOffset), int64(e.RelPosition)})
		}
		if derr != nil {
			doc.Error = derr.Error()
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	}
	if nameErr != nil {
		fmt.Fprintf(w, "%s: not a segment name, offsets shown relative\n", path)
	}
	for i, e := range entries {
		fmt.Fprintf(w, "entry %d offset %d position %d\n", i, base+int64(e.RelOffset), e.RelPosition)
	}
	state := "ok"
	if derr != nil {
		state = "BAD: " + derr.Error()
	}
	_, err = fmt.Fprintf(w, "%s: %d entries, %d bytes: %s\n", path, len(entries), len(b), state)
	return err
}

// dumpState prints a partition's snapshot or hwm file.
func dumpState(w io.Writer, path string, asJSON bool) error {
	dir, name := filepath.Dir(path), filepath.Base(path)
	var v any
	var err error
	if name == recovery.SnapshotFile {
		v, err = recovery.ReadSnapshot(dir)
	} else {
		var h int64
		h, err = recovery.ReadHWM(dir)
		v = struct {
			HWM int64 `json:"hwm"`
		}{h}
	}
	if err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	_, err = fmt.Fprintf(w, "%s: %s\n", path, jsonFieldsText(v))
	return err
}

// jsonFieldsText writes the fields of struct v as "name value" pairs, in
// order, named by their JSON tags: the text form of what --json prints.
func jsonFieldsText(v any) string {
	rv := reflect.ValueOf(v)
	parts := make([]string, 0, rv.NumField())
	for i := range rv.NumField() {
		name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
		parts = append(parts, fmt.Sprintf("%s %v", name, rv.Field(i).Interface()))
	}
	return strings.Join(parts, " ")
}
