// Package loopfs gives tests a real, small filesystem they can fill: a
// fresh ext4 image mounted on a loop device, so a full disk is a real
// ENOSPC from the kernel.
package loopfs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Mount makes a sizeMiB ext4 filesystem (no reserved blocks) on a loop
// device and returns its mount point; it is unmounted at cleanup, after the
// cleanups registered later (so close files there). It needs root and
// mkfs.ext4: in CI (CI set) their absence fails the test, elsewhere it
// skips with the reason.
func Mount(t *testing.T, sizeMiB int) string {
	t.Helper()
	unavailable := func(why string, a ...any) {
		t.Helper()
		msg := fmt.Sprintf(why, a...)
		if os.Getenv("CI") != "" {
			t.Fatalf("a loop-device ext4 is required in CI: %s", msg)
		}
		t.Skipf("no loop-device ext4 (%s); run as root, or with CI=true to make this a failure", msg)
	}
	if os.Geteuid() != 0 {
		unavailable("not root")
	}
	for _, tool := range []string{"mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			unavailable("%s not found", tool)
		}
	}
	tmp := t.TempDir()
	img, mnt := filepath.Join(tmp, "img"), filepath.Join(tmp, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Truncate(img, int64(sizeMiB)<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-m", "0", img).CombinedOutput(); err != nil {
		unavailable("mkfs.ext4: %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		unavailable("mount -o loop: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	return mnt
}
