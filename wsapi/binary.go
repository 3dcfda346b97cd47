package wsapi

import (
	"bytes"

	"github.com/pulselog/pulse/engine"
	"github.com/pulselog/pulse/wsapi/wire"
)

// A binary produce frame on /v1/ws is a produce request whose records are
// bytes: its layout is package wire's (wire/binary.go).

// decodeBinaryProduce splits a binary produce frame into its request header
// and its records. Keys, values and header values are sub-slices of msg.
// Errors are protocol errors naming what was wrong.
func decodeBinaryProduce(msg []byte, maxRecordBytes int) (*request, []engine.Record, int, *wire.Error) {
	nl := bytes.IndexByte(msg, '\n')
	if nl < 0 {
		return nil, nil, 0, wire.Errorf(wire.CodeInvalidRequest, "binary frame: want a JSON produce header, a newline, then the records")
	}
	head := msg[:nl]
	req, e := decodeRequest(head, "binary frame header")
	if e != nil {
		return req, nil, 0, e
	}
	switch {
	case req.Op != "produce":
		return req, nil, 0, wire.Errorf(wire.CodeInvalidRequest, `binary frame header has op %q: binary frames carry only "produce"`, req.Op)
	case req.RecordIn.HasRecordFields() || req.Records != nil:
		return req, nil, 0, wire.Errorf(wire.CodeInvalidRequest, "binary frame header has record fields: the records follow the header in binary")
	}
	recs, size, e := wire.DecodeBinaryRecords(msg[nl+1:], maxRequestRecords, maxRecordBytes)
	return req, recs, size, e
}
