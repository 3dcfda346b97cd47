package fsutil

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// helperEnv makes the test binary act as a second process taking a lock:
// "try:<dir>" tries once and reports; "hold:<dir>" locks, says "held", and
// keeps the lock until killed or its stdin closes.
const helperEnv = "PULSE_FSUTIL_LOCK_HELPER"

func TestMain(m *testing.M) {
	if v := os.Getenv(helperEnv); v != "" {
		os.Exit(lockHelper(v))
	}
	goleak.VerifyTestMain(m)
}

func lockHelper(v string) int {
	mode, dir, _ := strings.Cut(v, ":")
	l, err := Lock(dir)
	switch {
	case errors.Is(err, ErrLocked):
		fmt.Printf("locked-out: %v\n", err)
		return 3
	case err != nil:
		fmt.Printf("error: %v\n", err)
		return 1
	}
	fmt.Println("held")
	if mode == "hold" {
		bufio.NewReader(os.Stdin).ReadString('\n') // until EOF or kill
	}
	if err := l.Unlock(); err != nil {
		fmt.Printf("unlock: %v\n", err)
		return 1
	}
	return 0
}

func helper(t *testing.T, mode, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode+":"+dir)
	return cmd
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	for _, content := range []string{"first", "second, longer than the first", ""} {
		if err := WriteFileAtomic(dir, "hwm", []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, "hwm"))
		if err != nil || string(got) != content {
			t.Fatalf("hwm holds %q, %v; want %q", got, err, content)
		}
		st, err := os.Stat(filepath.Join(dir, "hwm"))
		if err != nil || st.Mode().Perm() != FileMode {
			t.Fatalf("mode %v, %v; want %v", st.Mode().Perm(), err, os.FileMode(FileMode))
		}
	}
	assertOnly(t, dir, "hwm")
}

func TestWriteFileAtomicFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFileAtomic(dir, "snapshot", []byte("old")); err != nil {
		t.Fatal(err)
	}
	// A non-empty directory in the way makes the rename fail after the
	// temp file was written and fsynced.
	blocker := filepath.Join(dir, "busy")
	if err := os.MkdirAll(filepath.Join(blocker, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(dir, "busy", []byte("new")); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Fatalf("WriteFileAtomic over a directory: %v, want an error naming it", err)
	}
	assertOnly(t, dir, "busy", "snapshot")
	if got, _ := os.ReadFile(filepath.Join(dir, "snapshot")); string(got) != "old" {
		t.Fatalf("snapshot changed to %q", got)
	}

	for _, name := range []string{"", ".", "..", "a/b", "../x"} {
		if err := WriteFileAtomic(dir, name, nil); err == nil {
			t.Errorf("WriteFileAtomic accepted the name %q", name)
		}
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing"), "f", nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("WriteFileAtomic in a missing directory: %v, want ErrNotExist", err)
	}
	assertOnly(t, dir, "busy", "snapshot")
}

func TestIsTemp(t *testing.T) {
	dir := t.TempDir()
	f, err := os.CreateTemp(dir, TempPrefix+"index-*")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if !IsTemp(filepath.Base(f.Name())) || IsTemp("00000000000000000000.log") || IsTemp("hwm") {
		t.Fatal("IsTemp misclassifies")
	}
}

func TestSyncDir(t *testing.T) {
	if err := SyncDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nope")
	if err := SyncDir(missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("SyncDir(missing) = %v", err)
	}
}

func TestLockInProcess(t *testing.T) {
	dir := t.TempDir()
	l, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l.Dir() != dir {
		t.Fatalf("Dir() = %q", l.Dir())
	}
	_, err = Lock(dir)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock: %v, want ErrLocked", err)
	}
	for _, want := range []string{dir, "pid " + strconv.Itoa(os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not mention %q", err, want)
		}
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatalf("second Unlock: %v", err)
	}
	l2, err := Lock(dir)
	if err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	l2.Unlock()
	if _, err := Lock(filepath.Join(dir, "missing")); err == nil || errors.Is(err, ErrLocked) {
		t.Fatalf("Lock of a missing directory: %v", err)
	}
}

func TestLockAcrossProcesses(t *testing.T) {
	dir := t.TempDir()

	// This process holds the lock: another one is refused and told our pid.
	l, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := helper(t, "try", dir).Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("second process: %v, output %q; want it locked out", err, out)
	}
	if !strings.Contains(string(out), "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(string(out), dir) {
		t.Fatalf("second process's error %q does not name the dir and our pid", out)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}

	// Another process holds it: we are refused, told its pid, and get the
	// lock once it is killed.
	cmd := helper(t, "hold", dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "held\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("holder said %q, %v", line, err)
	}
	_, err = Lock(dir)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(cmd.Process.Pid)) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("Lock while another process holds it: %v, want ErrLocked naming pid %d", err, cmd.Process.Pid)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	l, err = Lock(dir)
	if err != nil {
		t.Fatalf("Lock after the holder was killed: %v", err)
	}
	l.Unlock()
}

// assertOnly fails unless dir holds exactly the named entries.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("%s holds %v, want %v", dir, got, names)
	}
}

// TestSyncDataAndFile: both syncs succeed on a written file, and fail on a
// closed one with an error naming the file.
func TestSyncDataAndFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "00000000000000000000.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("batch")); err != nil {
		t.Fatal(err)
	}
	for name, sync := range map[string]func(*os.File) error{"SyncData": SyncData, "SyncFile": SyncFile} {
		if err := sync(f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	f.Close()
	for name, sync := range map[string]func(*os.File) error{"SyncData": SyncData, "SyncFile": SyncFile} {
		if err := sync(f); err == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("%s of a closed file: %v, want an error naming %s", name, err, path)
		}
	}
}

// TestHeld: Held sees a lock taken by another DirLock, and none once it is
// released or where no LOCK file exists, and never writes the file.
func TestHeld(t *testing.T) {
	dir := t.TempDir()
	if Held(dir) {
		t.Fatal("Held on a dir without a LOCK file")
	}
	l, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, LockFile))
	if err != nil {
		t.Fatal(err)
	}
	if !Held(dir) {
		t.Fatal("Held is false while a DirLock holds the dir")
	}
	after, _ := os.ReadFile(filepath.Join(dir, LockFile))
	if string(after) != string(before) {
		t.Fatalf("Held changed LOCK: %q -> %q", before, after)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if Held(dir) {
		t.Fatal("Held is true after Unlock")
	}
	if l, err = Lock(dir); err != nil {
		t.Fatalf("Lock after Held probes: %v", err)
	}
	l.Unlock()
}
