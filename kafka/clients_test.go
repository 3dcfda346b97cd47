package kafka

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/pulselog/pulse/engine"
)

// need returns the path of a tool the test drives, failing in CI (CI=true)
// and skipping elsewhere when it is missing.
func need(t testing.TB, tool string, check ...string) string {
	t.Helper()
	path, err := exec.LookPath(tool)
	if err == nil && len(check) > 0 {
		err = exec.Command(path, check...).Run()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is needed by this test (.ci/run installs it): %v", tool, err)
		}
		t.Skipf("%s not usable here (%v); CI runs this test", tool, err)
	}
	return path
}

// python runs testdata/clients.py and parses its JSON lines.
func python(t testing.TB, args ...string) []rec {
	t.Helper()
	py := need(t, "/usr/bin/python3", "-I", "-c", "import confluent_kafka, kafka")
	return clientRecords(t, "", py, "testdata/clients.py", args...)
}

// clientRecords runs a client script (in dir, "" for the package's) with
// args and parses what it prints: one JSON record a line, key, value and
// header values in hex.
func clientRecords(t testing.TB, dir, interp, script string, args ...string) []rec {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, interp, append([]string{script}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", script, args, err, stderr.String())
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
			t.Fatalf("%s output %q: %v", script, line, err)
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

// produceKcat produces n records with kcat -P (keys, two headers, codec).
func produceKcat(t testing.TB, addr, topic, codec string, n int) []rec {
	t.Helper()
	kcat := need(t, "kcat", "-V")
	tag := "kcat" + codec
	var in bytes.Buffer
	var want []rec
	h1 := "v-" + tag
	for i := range n {
		k, v := fmt.Sprintf("%s-key-%d", tag, i%7), fmt.Sprintf("%s value %d \x00\xff", tag, i)
		fmt.Fprintf(&in, "%s\t%s\n", k, v)
		want = append(want, rec{Topic: topic, Key: k, Value: v, Headers: headerString([2][]byte{[]byte("h1"), []byte(h1)}, [2][]byte{[]byte("empty"), {}})})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, "-b", addr, "-P", "-t", topic, "-K", "\t", "-z", codec,
		"-X", "partitioner=murmur2_random", "-X", "enable.idempotence=true", "-H", "h1="+h1, "-H", "empty=")
	cmd.Stdin = &in
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v\n%s", err, out)
	}
	return want
}

// consumeKcat reads n records with kcat -G (a group consumer) and returns
// them; kcat prints partitions, so they are compared too.
func consumeKcat(t testing.TB, addr, group, topic string, n int) []rec {
	t.Helper()
	kcat := need(t, "kcat", "-V")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, "-b", addr, "-G", group, topic, "-o", "beginning", "-e", "-q",
		"-f", "%t\t%p\t%k\t%s\t%h\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat -G: %v\n%s", err, stderr.String())
	}
	var got []rec
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 5 {
			t.Fatalf("kcat line %q", sc.Text())
		}
		var p int32
		fmt.Sscan(f[1], &p)
		var hs [][2][]byte
		for _, kv := range strings.Split(f[4], ",") {
			if f[4] == "" {
				break
			}
			k, v, _ := strings.Cut(kv, "=")
			hs = append(hs, [2][]byte{[]byte(k), []byte(v)})
		}
		got = append(got, rec{Topic: f[0], Partition: p, Key: f[2], Value: f[3], Headers: headerString(hs...)})
	}
	if len(got) != n {
		t.Fatalf("kcat -G read %d records, want %d", len(got), n)
	}
	return got
}

func produceSarama(t testing.TB, addr, topic string, codec sarama.CompressionCodec, n int) []rec {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Compression = codec
	cfg.Producer.Idempotent = true
	cfg.Net.MaxOpenRequests = 1
	p, err := sarama.NewSyncProducer([]string{addr}, cfg)
	if err != nil {
		t.Fatalf("sarama producer: %v", err)
	}
	defer p.Close()
	tag := "sarama" + codec.String()
	var msgs []*sarama.ProducerMessage
	for i := range n {
		msgs = append(msgs, &sarama.ProducerMessage{
			Topic: topic,
			Key:   sarama.StringEncoder(fmt.Sprintf("%s-key-%d", tag, i%7)),
			Value: sarama.ByteEncoder(fmt.Appendf(nil, "%s value %d \x00\xff", tag, i)),
			Headers: []sarama.RecordHeader{
				{Key: []byte("h1"), Value: fmt.Appendf(nil, "v%d", i)},
				{Key: []byte("empty"), Value: []byte{}},
			},
		})
	}
	if err := p.SendMessages(msgs); err != nil {
		t.Fatalf("sarama produce: %v", err)
	}
	var want []rec
	for _, m := range msgs {
		k, _ := m.Key.Encode()
		v, _ := m.Value.Encode()
		want = append(want, rec{Topic: topic, Partition: m.Partition, Key: string(k), Value: string(v),
			Headers: headerString([2][]byte{[]byte("h1"), m.Headers[0].Value}, [2][]byte{[]byte("empty"), {}})})
	}
	return want
}

// saramaHandler collects records until it has n.
type saramaHandler struct {
	n    int
	got  chan rec
	done chan struct{}
}

func (h *saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *saramaHandler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		var hs [][2][]byte
		for _, hd := range m.Headers {
			hs = append(hs, [2][]byte{hd.Key, hd.Value})
		}
		select {
		case h.got <- rec{Topic: m.Topic, Partition: m.Partition, Key: string(m.Key), Value: string(m.Value), Headers: headerString(hs...)}:
		case <-h.done:
			return nil
		}
		s.MarkMessage(m, "")
	}
	return nil
}

func consumeSarama(t testing.TB, addr, group, topic string, n int) []rec {
	t.Helper()
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	g, err := sarama.NewConsumerGroup([]string{addr}, group, cfg)
	if err != nil {
		t.Fatalf("sarama group: %v", err)
	}
	h := &saramaHandler{n: n, got: make(chan rec, n), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{topic}, h); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	var got []rec
	timeout := time.After(90 * time.Second)
	for len(got) < n {
		select {
		case r := <-h.got:
			got = append(got, r)
		case <-timeout:
			t.Fatalf("sarama consumed %d of %d", len(got), n)
		}
	}
	close(h.done)
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("sarama consume: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("sarama close: %v", err)
	}
	return got
}

// TestClientsInterop has every client produce keyed records with headers,
// with each compression codec it offers, to one topic of four partitions;
// then every client reads the whole topic back byte for byte, through its
// consumer group.
func TestClientsInterop(t *testing.T) {
	p := startPulse(t, "", DefaultOptions())
	adm := kadm.NewClient(kgoClient(t, p.addr))
	if _, err := adm.CreateTopic(context.Background(), 4, 1, nil, "mix"); err != nil {
		t.Fatal(err)
	}
	var want []rec
	for _, c := range []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(), kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()} {
		want = append(want, produceKgo(t, p.addr, "mix", "franz", 20, c)...)
	}
	for _, c := range []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionGZIP, sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD} {
		want = append(want, produceSarama(t, p.addr, "mix", c, 20)...)
	}
	for _, c := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		want = append(want, python(t, "produce", "confluent", p.addr, "mix", "confluent"+c, c, "20")...)
	}
	for _, c := range []string{"none", "gzip"} { // kafka-python has no snappy/lz4/zstd modules here
		want = append(want, python(t, "produce", "kafkapython", p.addr, "mix", "kafkapython"+c, c, "20")...)
	}
	for _, c := range []string{"none", "gzip"} { // Produce v2, message sets v1
		want = append(want, python(t, "produce", "kafkapython-0.10", p.addr, "mix", "kafkapython010"+c, c, "20")...)
	}
	var kc []rec
	for _, c := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		kc = append(kc, produceKcat(t, p.addr, "mix", c, 20)...)
	}
	kc = append(kc, kafkajs(t, "produce", p.addr, "mix", "kafkajs", "20")...) // partitions unreported too
	n := len(want) + len(kc)

	check := func(name string, got []rec) {
		t.Helper()
		// kcat -P and the kafkajs script do not report partitions: take
		// them from what this consumer read.
		byKV := map[string]int32{}
		for _, r := range got {
			byKV[r.Key+"\x00"+r.Value] = r.Partition
		}
		all := append([]rec(nil), want...)
		for _, r := range kc {
			r.Partition = byKV[r.Key+"\x00"+r.Value]
			all = append(all, r)
		}
		t.Logf("%s read %d records", name, len(got))
		sameRecs(t, got, all)
	}
	// kcat -L lists the broker and the topic's four partitions led by it.
	out, err := exec.Command(need(t, "kcat", "-V"), "-b", p.addr, "-L", "-t", "mix").CombinedOutput()
	if err != nil {
		t.Fatalf("kcat -L: %v\n%s", err, out)
	}
	for _, want := range []string{"1 brokers:", "broker 0 at " + p.addr, `topic "mix" with 4 partitions:`, "partition 3, leader 0, replicas: 0, isrs: 0"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("kcat -L does not say %q:\n%s", want, out)
		}
	}
	franz := consumeKgo(t, p.addr, "g-franz", "mix", n)
	check("franz-go", franz)
	check("sarama", consumeSarama(t, p.addr, "g-sarama", "mix", n))
	check("confluent", python(t, "consume", "confluent", p.addr, "mix", "g-confluent", fmt.Sprint(n)))
	check("kafka-python", python(t, "consume", "kafkapython", p.addr, "mix", "g-kafkapython", fmt.Sprint(n)))
	check("kcat", consumeKcat(t, p.addr, "g-kcat", "mix", n))
	check("kafkajs", kafkajs(t, "consume", p.addr, "mix", "g-kafkajs", fmt.Sprint(n)))

	// The keys of every producer using Kafka's default (murmur2)
	// partitioner are where the engine's partitioner puts them. Sarama's
	// default hashes with FNV-1a, a client-side choice.
	if err := p.eng.CreateTopic("mix-check", engine.TopicConfig{Partitions: 4}); err != nil {
		t.Fatal(err)
	}
	for _, r := range franz {
		if strings.HasPrefix(r.Key, "sarama") {
			continue
		}
		acks, err := p.eng.Produce(context.Background(), "mix-check", -1, []engine.Record{{Key: []byte(r.Key)}})
		if err != nil {
			t.Fatal(err)
		}
		if int32(acks[0].Partition) != r.Partition {
			t.Fatalf("%v: the engine puts key %q on partition %d", r, r.Key, acks[0].Partition)
		}
	}
}
