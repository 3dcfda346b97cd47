package engine

import "testing"

// The expected values are the ones Kafka's own partitioner computes, so a key
// produced through Pulse lands on the partition a Kafka client would pick.
func TestMurmur2MatchesKafka(t *testing.T) {
	cases := []struct {
		in   string
		want int32
	}{
		{"21", -973932308},
		{"foobar", -790332482},
		{"a-little-bit-long-string", -985981536},
		{"a-little-bit-longer-string", -1486304829},
		{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
		{"abc", 479470107},
	}
	for _, c := range cases {
		if got := murmur2([]byte(c.in)); got != c.want {
			t.Errorf("murmur2(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestPartitionerKeyedIsStableAndKeylessRoundRobins(t *testing.T) {
	var p partitioner
	for _, k := range []string{"", "a", "order-17", "user:42"} {
		first := p.partition([]byte(k), 7)
		if first < 0 || first >= 7 {
			t.Fatalf("partition(%q) = %d, out of [0,7)", k, first)
		}
		for i := 0; i < 10; i++ {
			if got := p.partition([]byte(k), 7); got != first {
				t.Fatalf("partition(%q) moved from %d to %d", k, first, got)
			}
		}
	}
	seen := make([]int, 3)
	for i := 0; i < 30; i++ {
		seen[p.partition(nil, 3)]++
	}
	for i, n := range seen {
		if n != 10 {
			t.Fatalf("keyless records per partition = %v, want 10 each (partition %d)", seen, i)
		}
	}
}
