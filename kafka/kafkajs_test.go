package kafka

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// kafkajs runs testdata/node/kafkajs.js.
func kafkajs(t testing.TB, args ...string) []rec {
	t.Helper()
	node, dir := nodeWithKafkajs(t)
	return clientRecords(t, dir, node, "kafkajs.js", args...)
}

// nodeWithKafkajs returns node and the folder of the kafkajs scripts,
// testdata/node, installing kafkajs there with npm first when its
// node_modules is missing.
func nodeWithKafkajs(t testing.TB) (node, dir string) {
	t.Helper()
	node = need(t, "node", "--version")
	dir = filepath.Join("testdata", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "kafkajs")); err != nil {
		npm := need(t, "npm", "--version")
		cmd := exec.Command(npm, "install", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install in %s: %v\n%s", dir, err, out)
		}
	}
	return node, dir
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
