package wire

import (
	"encoding/binary"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzValueLens reads arbitrary bytes as the end of a JSON push: nothing
// may panic, a value_lens FindValueLens finds lies within the message and
// its lengths are exactly what encoding/json reads of the field; and the
// lengths AppendJSONPushTail writes (from the input, two bytes each) are
// found and read back in order.
func FuzzValueLens(f *testing.F) {
	f.Add([]byte(`{"sub":1,"partition":0,"next":3,"records":[{},{},{}],"value_lens":[14,12,0]}`))
	f.Add([]byte(`],"value_lens":[]}`))
	f.Add([]byte(`],"value_lens":[01,,2,]}`))
	f.Add([]byte(`],"value_lens":[99999999999]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if at, lens, ok := FindValueLens(b); ok {
			if at < 0 || at+len(valueLensField)+2 > len(b) || string(b[at:at+len(valueLensField)]) != valueLensField {
				t.Fatalf("FindValueLens(%q) = %d, not the field's start", b, at)
			}
			var got []int
			for range lens.Count() {
				n, ok := lens.Next()
				if !ok {
					got = nil
					break
				}
				got = append(got, n)
			}
			if got != nil && lens.Done() {
				var want struct {
					Lens []int `json:"value_lens"`
				}
				if err := json.Unmarshal(append([]byte(`{"x":[]`), b[at:]...), &want); err != nil || !reflect.DeepEqual(got, want.Lens) && len(got)+len(want.Lens) > 0 {
					t.Fatalf("value_lens of %q read as %v, encoding/json reads %v (%v)", b, got, want.Lens, err)
				}
			}
		}
		lens := make([]int32, len(b)/2)
		for i := range lens {
			lens[i] = int32(binary.LittleEndian.Uint16(b[2*i:]))
		}
		msg := AppendJSONPushTail(AppendJSONPushHead(nil, 1, 2, 3, 0), lens)
		at, found, ok := FindValueLens(msg)
		if !ok || at != len(AppendJSONPushHead(nil, 1, 2, 3, 0))+1 || found.Count() != len(lens) {
			t.Fatalf("FindValueLens(%q) = %d, %d lengths, %v; want %d lengths", msg, at, found.Count(), ok, len(lens))
		}
		for i, want := range lens {
			if n, ok := found.Next(); !ok || n != int(want) {
				t.Fatalf("length %d of %q read as %d, %v; want %d", i, msg, n, ok, want)
			}
		}
		if !found.Done() {
			t.Fatalf("lengths left over in %q", msg)
		}
	})
}
