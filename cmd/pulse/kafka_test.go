package main

import (
	"bytes"
	"net"
	"strings"
	"testing"

	"github.com/pulselog/pulse/engine"
)

// TestKafkaListenTaken: a taken default Kafka address is a warning and no
// listener; a taken explicit one is an error; "" is no listener.
func TestKafkaListenTaken(t *testing.T) {
	e, err := engine.Open(engine.DefaultOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().String()

	var warn bytes.Buffer
	addr, stop, err := startKafka(e, nil, taken, false, false, nil, &warn)
	if err != nil || addr != "" || !strings.Contains(warn.String(), "Kafka listener not started") || !strings.Contains(warn.String(), "--kafka-listen off") {
		t.Fatalf("taken default: addr %q, err %v, warning %q", addr, err, warn.String())
	}
	stop()
	if _, _, err := startKafka(e, nil, taken, true, false, nil, &warn); err == nil || !strings.Contains(err.Error(), taken) {
		t.Fatalf("taken explicit address: %v", err)
	}
	if addr, stop, err := startKafka(e, nil, "", true, false, nil, &warn); err != nil || addr != "" {
		t.Fatalf(`--kafka-listen "": %q %v`, addr, err)
	} else {
		stop()
	}
	addr, stop, err = startKafka(e, nil, "127.0.0.1:0", true, false, nil, &warn)
	if err != nil || addr == "" {
		t.Fatalf("free port: %q %v", addr, err)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial the listener: %v", err)
	}
	c.Close()
	stop()
}
