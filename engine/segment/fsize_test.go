//go:build unix

package segment

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/pulselog/pulse/engine/codec"
)

// fsizeHelperEnv makes the test binary run fsizeHelper: appends in a process
// whose file size limit (RLIMIT_FSIZE) makes a write fail half-way.
const fsizeHelperEnv = "PULSE_SEGMENT_FSIZE_HELPER"

const fsizeLimit = 64 << 10

func fsizeHelper() int {
	dir := os.Getenv(fsizeHelperEnv)
	if err := run(dir); err != nil {
		fmt.Println("FAIL:", err)
		return 1
	}
	fmt.Println("undone")
	return 0
}

func run(dir string) error {
	signal.Ignore(syscall.SIGXFSZ) // get EFBIG instead of dying
	s, err := Create(dir, 0, Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: fsizeLimit, Max: fsizeLimit}); err != nil {
		return err
	}
	next := int64(0)
	for i := 0; ; i++ {
		b, h, err := encodeBatch(next, 3, 1000, codec.CodecNone)
		if err != nil {
			return err
		}
		before := s.Size()
		if _, err = s.Append(b, h); err == nil {
			next += 3
			continue
		}
		if !errors.Is(err, syscall.EFBIG) {
			return fmt.Errorf("append %d: %v, want EFBIG", i, err)
		}
		if before+int64(len(b)) <= fsizeLimit {
			return fmt.Errorf("append %d failed below the limit: %v", i, err)
		}
		fi, serr := os.Stat(s.Path())
		if serr != nil {
			return serr
		}
		if s.Size() != before || fi.Size() != before {
			return fmt.Errorf("after the failed append: Size %d, file %d bytes, want both %d", s.Size(), fi.Size(), before)
		}
		return scanSeg(s, 0, func(int64, codec.BatchHeader, []byte) error { return nil })
	}
}

func TestFailedAppendIsUndone(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fsizeHelperEnv+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "undone") {
		t.Fatalf("helper: %v\n%s", err, out)
	}
}
