package kafka

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkajs runs testdata/node/kafkajs.js, installing kafkajs with npm first
// when testdata/node/node_modules is missing.
func kafkajs(t testing.TB, args ...string) []rec {
	t.Helper()
	node := need(t, "node", "--version")
	dir := filepath.Join("testdata", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "kafkajs")); err != nil {
		npm := need(t, "npm", "--version")
		cmd := exec.Command(npm, "install", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install in %s: %v\n%s", dir, err, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"kafkajs.js"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kafkajs.js %v: %v\n%s", args, err, stderr.String())
	}
	var rs []rec
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var j struct {
			Topic     string     `json:"topic"`
			Partition int32      `json:"partition"`
			Key       string     `json:"key"`
			Value     string     `json:"value"`
			Headers   [][]string `json:"headers"`
		}
		if err := json.Unmarshal(line, &j); err != nil {
			t.Fatalf("kafkajs.js output %q: %v", line, err)
		}
		k, _ := hex.DecodeString(j.Key)
		v, _ := hex.DecodeString(j.Value)
		var hs [][2][]byte
		for _, h := range j.Headers {
			hv, _ := hex.DecodeString(h[1])
			hs = append(hs, [2][]byte{[]byte(h[0]), hv})
		}
		rs = append(rs, rec{Topic: j.Topic, Partition: j.Partition, Key: string(k), Value: string(v), Headers: headerString(hs...)})
	}
	return rs
}

// TestKafkajs: the kafkajs admin creates a topic, its idempotent producer
// writes plain and gzip records, and its group consumer reads them back
// with franz-go's (lz4 and zstd, which kafkajs cannot decode without
// plugins, come back uncompressed from Pulse).
func TestKafkajs(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	js := kafkajs(t, "produce", p.addr, "js", "kafkajs", "30")
	var want []rec
	want = append(want, produceKgo(t, p.addr, "js", "franzlz4", 20, kgo.Lz4Compression())...)
	want = append(want, produceKgo(t, p.addr, "js", "franzzstd", 20, kgo.ZstdCompression())...)
	n := len(js) + len(want)
	franz := consumeKgo(t, p.addr, "g-franz", "js", n)
	parts := map[string]int32{}
	for _, r := range franz {
		parts[r.Key+"\x00"+r.Value] = r.Partition
	}
	for _, r := range js {
		r.Partition = parts[r.Key+"\x00"+r.Value]
		want = append(want, r)
	}
	sameRecs(t, franz, want)
	sameRecs(t, kafkajs(t, "consume", p.addr, "js", "g-kafkajs", fmt.Sprint(n)), want)
	info, err := p.eng.Describe("js")
	if err != nil || len(info.Partitions) != 3 {
		t.Fatalf("the kafkajs admin's topic: %+v, %v", info, err)
	}
}
