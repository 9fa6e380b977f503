package authfile

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// testStore returns a Store with a clock that moves only when the test
// moves it.
func testStore() (*Store, *atomic.Int64) {
	var clock atomic.Int64
	clock.Store(1)
	s := NewStore()
	s.now = clock.Load
	return s, &clock
}

// writeFile writes data to path and sets its modification time to mtime.
func writeFile(t *testing.T, path, data string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func checkUser(t *testing.T, s *Store, path, user, pw string, want Result) {
	t.Helper()
	u, err := s.Users(path)
	if err != nil {
		t.Fatalf("Users(%s): %v", path, err)
	}
	if got := u.Check(user, pw); got != want {
		t.Errorf("Check(%q, %q) = %v, want %v", user, pw, got, want)
	}
}

func TestStoreReload(t *testing.T) {
	s, clock := testStore()
	path := filepath.Join(t.TempDir(), "users")
	old := time.Now().Add(-time.Hour)
	writeFile(t, path, "bob:"+secretHashes["apr1"]+"\n", old)
	checkUser(t, s, path, "bob", "secret", OK)

	// A change is not seen until the Store checks again.
	writeFile(t, path, "bob:"+otherAPR1+"\nalice:"+secretHashes["sha1"]+"\n", old.Add(time.Second))
	checkUser(t, s, path, "bob", "secret", OK)
	clock.Add(int64(time.Second) - 1)
	checkUser(t, s, path, "bob", "secret", OK)
	clock.Add(1)
	checkUser(t, s, path, "bob", "other", OK)
	checkUser(t, s, path, "alice", "secret", OK)

	// Same size, new modification time.
	writeFile(t, path, "bob:"+secretHashes["apr1"]+"\nalice:"+otherSHA1+"\n", old.Add(2*time.Second))
	clock.Add(int64(time.Second))
	checkUser(t, s, path, "bob", "secret", OK)
	checkUser(t, s, path, "alice", "other", OK)

	// Same size and modification time, another file (inode).
	tmp := path + ".tmp"
	writeFile(t, tmp, "bob:"+otherAPR1+"\nalice:"+secretHashes["sha1"]+"\n", old.Add(2*time.Second))
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	clock.Add(int64(time.Second))
	checkUser(t, s, path, "bob", "other", OK)

	// Unchanged: not read again.
	u1, _ := s.Users(path)
	clock.Add(int64(10 * time.Second))
	u2, _ := s.Users(path)
	if u1 != u2 {
		t.Error("an unchanged file was parsed again")
	}
}

// TestStoreRacyFile checks that a file changed again within the precision
// of its modification time, to the same size, is read again.
func TestStoreRacyFile(t *testing.T) {
	s, clock := testStore()
	var loads atomic.Int32
	s.OnLoad = func(string, []error) { loads.Add(1) }
	path := filepath.Join(t.TempDir(), "users")
	mtime := time.Now()
	writeFile(t, path, "bob:"+secretHashes["apr1"]+"\n", mtime)
	checkUser(t, s, path, "bob", "secret", OK)

	writeFile(t, path, "bob:"+otherAPR1+"\n", mtime) // same size and time
	clock.Add(int64(time.Second))
	checkUser(t, s, path, "bob", "other", OK)
	if n := loads.Load(); n != 2 {
		t.Errorf("OnLoad called %d times, want 2", n)
	}

	// Read again while racy, but unchanged: not parsed again.
	u1, _ := s.Users(path)
	clock.Add(int64(time.Second))
	u2, _ := s.Users(path)
	if u1 != u2 || loads.Load() != 2 {
		t.Errorf("an unchanged racy file was parsed again (OnLoad called %d times)", loads.Load())
	}
}

func TestStoreErrors(t *testing.T) {
	s, clock := testStore()
	dir := t.TempDir()
	path := filepath.Join(dir, "users")

	// Missing: an error, not a nil Users.
	u, err := s.Users(path)
	if !errors.Is(err, fs.ErrNotExist) || u != nil {
		t.Fatalf("Users(missing) = %v, %v; want nil, ErrNotExist", u, err)
	}

	writeFile(t, path, "bob:"+secretHashes["sha1"]+"\n", time.Now().Add(-time.Hour))
	if _, err := s.Users(path); err == nil {
		t.Error("the error was not kept until the next check")
	}
	clock.Add(int64(time.Second))
	checkUser(t, s, path, "bob", "secret", OK)

	// Removed: an error, no stale copy.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	clock.Add(int64(time.Second))
	if u, err := s.Users(path); !errors.Is(err, fs.ErrNotExist) || u != nil {
		t.Errorf("Users(removed) = %v, %v; want nil, ErrNotExist", u, err)
	}

	// Not a regular file.
	if _, err := s.Users(dir); err == nil {
		t.Error("Users(directory): no error")
	}
}

// TestStoreUnreadable checks that a file made unreadable fails at the
// next check although it has not changed.
func TestStoreUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		runAsNobody(t, "TestStoreUnreadable") // root reads any file
		return
	}
	s, clock := testStore()
	path := filepath.Join(t.TempDir(), "users")
	writeFile(t, path, "bob:"+secretHashes["sha1"]+"\n", time.Now().Add(-time.Hour))
	checkUser(t, s, path, "bob", "secret", OK)
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	clock.Add(int64(time.Second))
	if _, err := s.Users(path); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Users(unreadable) error = %v, want ErrPermission", err)
	}
}

// TestStoreChecksOncePerRefresh hammers a Store from many goroutines and
// counts how often it looks at the file.
func TestStoreChecksOncePerRefresh(t *testing.T) {
	s, clock := testStore()
	path := filepath.Join(t.TempDir(), "users")
	writeFile(t, path, "bob:"+secretHashes["sha1"]+"\n", time.Now().Add(-time.Hour))
	for round := 1; round <= 3; round++ {
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				for range 100 {
					if u, err := s.Users(path); err != nil || u.Check("bob", "secret") != OK {
						t.Errorf("Users: %v", err)
						return
					}
				}
			})
		}
		wg.Wait()
		if n := s.checks.Load(); n != int64(round) {
			t.Fatalf("round %d: %d checks, want %d", round, n, round)
		}
		clock.Add(int64(time.Second))
	}
}

func TestStoreRealClock(t *testing.T) {
	s := NewStore()
	s.Refresh = 50 * time.Millisecond
	path := filepath.Join(t.TempDir(), "users")
	writeFile(t, path, "bob:"+secretHashes["sha1"]+"\n", time.Now().Add(-time.Hour))
	checkUser(t, s, path, "bob", "secret", OK)
	writeFile(t, path, "bob:"+otherSHA1+"\n", time.Now())
	deadline := time.Now().Add(5 * time.Second)
	for {
		u, err := s.Users(path)
		if err != nil {
			t.Fatal(err)
		}
		if u.Check("bob", "other") == OK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the change was not seen")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStoreOnLoad(t *testing.T) {
	s, clock := testStore()
	type call struct {
		path string
		errs int
	}
	var calls []call
	s.OnLoad = func(path string, errs []error) { calls = append(calls, call{path, len(errs)}) }
	dir := t.TempDir()
	users, groups := filepath.Join(dir, "users"), filepath.Join(dir, "groups")
	old := time.Now().Add(-time.Hour)
	writeFile(t, users, "bob:plain\nalice:"+secretHashes["sha1"]+"\n", old)
	writeFile(t, groups, "g: bob\nno colon\n", old)
	s.Users(users)
	s.Groups(groups)
	s.Groups(groups)
	clock.Add(int64(time.Second))
	s.Users(users) // unchanged
	writeFile(t, users, "bob:"+secretHashes["sha1"]+"\n", old.Add(time.Second))
	clock.Add(int64(time.Second))
	s.Users(users)
	want := []call{{users, 1}, {groups, 1}, {users, 0}}
	if len(calls) != len(want) {
		t.Fatalf("OnLoad calls %v, want %v", calls, want)
	}
	for i := range want {
		if calls[i] != want[i] {
			t.Errorf("OnLoad calls %v, want %v", calls, want)
		}
	}
}

func TestStoreGroups(t *testing.T) {
	s, _ := testStore()
	path := filepath.Join(t.TempDir(), "groups")
	writeFile(t, path, "admins: alice\nstaff: alice bob\n", time.Now().Add(-time.Hour))
	g, err := s.Groups(path)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Member("alice", "staff") || g.Member("bob", "admins") {
		t.Error("wrong groups")
	}
	// The same path as a password file is cached apart.
	u, err := s.Users(path)
	if err != nil || u.Check("admins", "alice") != Mismatch {
		t.Errorf("Users(group file) = %v, %v", u, err)
	}
}

func TestStoreNoAllocs(t *testing.T) {
	s := NewStore()
	dir := t.TempDir()
	users, groups := filepath.Join(dir, "users"), filepath.Join(dir, "groups")
	writeFile(t, users, "bob:"+secretHashes["sha1"]+"\n", time.Now().Add(-time.Hour))
	writeFile(t, groups, "g: bob\n", time.Now().Add(-time.Hour))
	allocs := testing.AllocsPerRun(1000, func() {
		u, err := s.Users(users)
		if err != nil || u == nil {
			panic(err)
		}
		g, err := s.Groups(groups)
		if err != nil || !g.Member("bob", "G") {
			panic(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per call, want 0", allocs)
	}
}

// runAsNobody runs the test name in a copy of the test binary as the user
// nobody, for a check that root would pass whatever the code does (root
// reads any file), and fails unless it ran and passed there.
func runAsNobody(t *testing.T, name string) {
	t.Helper()
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("as root, this test runs as nobody: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "orderly-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o1777); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	copyExe := filepath.Join(dir, "test")
	if err := os.WriteFile(copyExe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(copyExe, "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir, "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s as nobody (uid %d): %v\n%s", name, uid, err, out)
	}
}
