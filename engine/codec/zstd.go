package codec

import (
	"bytes"
	"fmt"
	"io"
	"runtime"

	"github.com/klauspost/compress/zstd"
)

// The zstd encoders and decoders: a fixed number (GOMAXPROCS at start-up) of
// single-threaded instances each, created on first use and reused forever.
// A caller finding all of them busy waits for one; compression is CPU-bound,
// so more instances than CPUs would not go faster.
var (
	encoders = newPool(func() (*zstd.Encoder, error) {
		return zstd.NewWriter(nil,
			zstd.WithEncoderConcurrency(1),
			// Compression runs on a partition's flush path (beside
			// the writer, engine/plog/write.go):
			// on 1 KiB JSON-like records SpeedFastest encodes about
			// 2-3x faster than SpeedDefault for a ratio of 3.6
			// instead of 4.1 (BenchmarkEncode/zstd).
			zstd.WithEncoderLevel(zstd.SpeedFastest),
			// Always single-segment, so every frame header declares
			// its content size (doc.go), however small the section.
			zstd.WithSingleSegment(true),
		)
	})
	decoders = newPool(func() (*zstd.Decoder, error) {
		return zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(MaxBatchBytes),
			zstd.WithDecoderMaxWindow(MaxBatchBytes),
		)
	})
)

// pool is a fixed-size pool: a channel holding one slot per instance, nil
// until the slot's instance is first needed.
type pool[T any] struct {
	slots chan *T
	make  func() (*T, error)
}

func newPool[T any](mk func() (*T, error)) *pool[T] {
	n := max(runtime.GOMAXPROCS(0), 1)
	p := &pool[T]{slots: make(chan *T, n), make: mk}
	for i := 0; i < n; i++ {
		p.slots <- nil
	}
	return p
}

// get takes an instance, waiting while all are in use.
func (p *pool[T]) get() *T {
	v := <-p.slots
	if v == nil {
		var err error
		if v, err = p.make(); err != nil {
			// Only an invalid option can fail, and the options are constant.
			panic(fmt.Sprintf("codec: creating zstd instance: %v", err))
		}
	}
	return v
}

// put returns an instance taken with get.
func (p *pool[T]) put(v *T) { p.slots <- v }

// tooLargef wraps ErrTooLarge with a formatted detail.
func tooLargef(format string, args ...any) error {
	return fmt.Errorf("codec: %w: %s", ErrTooLarge, fmt.Sprintf(format, args...))
}

// DecompressPrefix inflates at most n bytes from the start of a zstd
// records section, for annotated views that show only the start of a batch
// (possibly a damaged one, whose CRC failed): a corrupt frame may claim up
// to MaxBatchBytes, and no more than n is produced. It returns what was
// inflated, or the decoder's error.
func DecompressPrefix(sec []byte, n int64) ([]byte, error) {
	dec := decoders.get()
	defer func() {
		dec.Reset(nil)
		decoders.put(dec)
	}()
	if err := dec.Reset(bytes.NewReader(sec)); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(dec, n))
}

// Compressors is how many zstd batches can be compressed at once: the
// number of encoder instances.
func Compressors() int { return cap(encoders.slots) }
