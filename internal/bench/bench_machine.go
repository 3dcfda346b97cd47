package bench

import (
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/pulselog/pulse/engine/codec"
)

// The machine step measures what the processor allows, as the disk step
// measures what the disk allows; with the websocket round trip of the e2e
// step, the ratios that depend on them are printed beside the best value
// this machine permits (printBounds).
const (
	// machineZstdMB is the most MiB of records the zstd figure encodes.
	machineZstdMB = 32
	// machineZstdPerBatch is the records of one encoded batch: what one
	// produce call of the append runs carries.
	machineZstdPerBatch = 256
)

// benchMachine records cpus (the Go scheduler's processors) and
// zstd_1core_mbps: the append runs' records encoded as zstd batches by
// Pulse's encoder on one goroutine, in MB/s of records sections before
// compression, as append_interval_zstd_mbps counts them.
func benchMachine(total int64, res benchResult) error {
	res["cpus"] = float64(runtime.GOMAXPROCS(0))
	recs := benchRecords(min(total/2, machineZstdMB<<20))
	var raw int64
	for i := range recs {
		raw += int64(codec.EncodedSize(&recs[i]))
	}
	var buf []byte
	start := time.Now()
	for i := 0; i < len(recs); i += machineZstdPerBatch {
		var err error
		if buf, err = codec.AppendBatch(buf[:0], 0, recs[i:min(i+machineZstdPerBatch, len(recs))], codec.EncodeOptions{Codec: codec.CodecZstd}); err != nil {
			return fmt.Errorf("zstd encode: %w", err)
		}
	}
	res["zstd_1core_mbps"] = mbps(raw, time.Since(start))
	return nil
}

// printBounds prints, below the ratios, the best value two of them can
// reach on this machine, from the machine step's figures of the same run:
//   - append_interval_zstd / append_interval is at most every processor
//     compressing all the time, cpus × zstd_1core_mbps / append_interval_mbps
//     (the writer, the producers and the CRCs need processor time too);
//   - ws e2e every-write p50 / fdatasync p50 is at least one fdatasync and
//     one websocket round trip through the server (ws_rtt_p50_us: the
//     record's way to the server and the push's way back to a subscriber
//     cross the same two processes), over one fdatasync.
func printBounds(w io.Writer, res benchResult) {
	if res["cpus"] > 0 && res["zstd_1core_mbps"] > 0 && res["append_interval_mbps"] > 0 {
		fmt.Fprintf(w, "%-48s %14.2f   (the most append_interval_zstd / append_interval reaches here)\n",
			"cpus x zstd_1core / append_interval", res["cpus"]*res["zstd_1core_mbps"]/res["append_interval_mbps"])
	}
	if res["fdatasync_p50_us"] > 0 && res["ws_rtt_p50_us"] > 0 {
		fmt.Fprintf(w, "%-48s %14.2f   (the least ws e2e every-write p50 / fdatasync p50 reaches here)\n",
			"(fdatasync + ws rtt) / fdatasync, p50", (res["fdatasync_p50_us"]+res["ws_rtt_p50_us"])/res["fdatasync_p50_us"])
	}
}
