// Package wire is the wire form of Pulse's websocket API
// (docs/websocket.md), shared by the server (package wsapi) and the Go
// client (package wsapi/wsclient), so that each piece of it is defined once:
//
//   - messages.go: the messages both sides read or write (RecordIn,
//     TopicConfig, TopicInfo, TopicAlter, the consumer replies, StartPos);
//   - errors.go: the error codes and Error, the error reply;
//   - from.go: the grammar of a subscribe or tail position (From);
//   - binary.go: the layout of a binary produce frame's records, its
//     encoder and its decoder;
//   - push.go: the layout of a binary push (a subscription's
//     "format":"binary"), which reuses binary.go's per-record layout, its
//     encoder and its decoder; and the envelope of a JSON push
//     (AppendJSONPushHead, AppendJSONPushTail) with its value_lens
//     (FindValueLens, ValueLens);
//   - json.go: the strict JSON reader both sides' fast paths use (Parser),
//     ValidJSON and AppendJSONString; json_push.go: Parser.ValueOfLen, a
//     value read by the length value_lens gives;
//   - reply.go: the writers of the server messages the client parses by the
//     thousand (AppendReply, AppendAcks, AppendRecordJSON,
//     AppendRecordJSONLen);
//   - conn.go: ReadMessage, a websocket read into a buffer sized from a hint.
//
// Conversions to and from the engine's types that only the server makes
// (validating a RecordIn, filling a TopicConfig's defaults, applying a
// TopicAlter) are package wsapi's functions, not methods here.
package wire
