package kafka

import (
	"os"
	"testing"
	"time"
)

func TestPlay(t *testing.T) {
	if os.Getenv("PLAY") == "" {
		t.Skip()
	}
	p := startPulse(t, "", DefaultOptions())
	os.WriteFile("/tmp/kplay/addr", []byte(p.addr), 0o644)
	time.Sleep(120 * time.Second)
}
