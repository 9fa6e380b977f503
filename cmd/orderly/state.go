package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/orderly-proxy/orderly/policy"
	"github.com/orderly-proxy/orderly/proxy"
)

// stateVersion is the format of the state file.
const stateVersion = 1

// state is what state_file keeps across restarts: each rule's counters and
// first and last hit, by rule ID.
type state struct {
	Version int       `json:"version"`
	Saved   time.Time `json:"saved"`
	// Since is when the counters started: the first start of the orderly
	// that wrote the file (absent in files written before it was kept).
	Since time.Time            `json:"since,omitzero"`
	Rules map[string]ruleState `json:"rules"`
}

type ruleState struct {
	Matches   uint64 `json:"matches"`
	Decisive  uint64 `json:"decisive"`
	Necessary uint64 `json:"necessary,omitempty"`
	// Covered is a section's coverage by method number (policy.Rule.Cover).
	Covered  map[int]uint64 `json:"covered,omitempty"`
	FirstHit int64          `json:"first_hit,omitempty"` // unix nanoseconds
	LastHit  int64          `json:"last_hit,omitempty"`
	// Parts are the matches of each word of an Allow or Deny line, in
	// the line's order.
	Parts []partState `json:"parts,omitempty"`
}

type partState struct {
	Word    string `json:"word"`
	Matches uint64 `json:"matches"`
}

// restoreState gives the rules of pols the counters the state file
// (state_file) kept, and returns when those counters started: zero
// without a state file, or when it does not say. serve's start and
// explain restore so; a reload carries the counters of the policies in
// force over instead (reloader, proxy.Policies.Inherit). The error names
// the configuration file at path.
func restoreState(path string, rc *runtimeConfig, pols *proxy.Policies) (time.Time, error) {
	if rc.StateFile == "" {
		return time.Time{}, nil
	}
	saved, since, err := loadState(rc.StateFile)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: state_file: %v", path, err)
	}
	pols.Restore(saved)
	return since, nil
}

// loadState reads the state file as rules carrying the saved counters,
// and when the counters started (zero if the file does not say); a
// missing file is an empty state.
func loadState(path string) ([]*policy.Rule, time.Time, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, time.Time{}, fmt.Errorf("%s: %v", path, err)
	}
	if s.Version != stateVersion {
		return nil, time.Time{}, fmt.Errorf("%s: state version %d, want %d", path, s.Version, stateVersion)
	}
	ids := make([]string, 0, len(s.Rules))
	for id := range s.Rules {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]*policy.Rule, 0, len(ids))
	for _, id := range ids {
		rs := s.Rules[id]
		r := &policy.Rule{ID: id}
		r.Restore(rs.Matches, rs.Decisive, unixNano(rs.FirstHit), unixNano(rs.LastHit))
		r.AddNecessary(rs.Necessary)
		for m, n := range rs.Covered {
			if m >= 0 && m < policy.MaxMethods {
				r.AddCovered(m, n)
			}
		}
		for _, p := range rs.Parts {
			r.NewPart(p.Word).AddMatches(p.Matches)
		}
		out = append(out, r)
	}
	return out, s.Since, nil
}

func unixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// saveState writes the counters of rules, counting since since, to path,
// atomically (a file beside it, renamed over it).
func saveState(path string, rules []*policy.Rule, since time.Time) error {
	s := state{Version: stateVersion, Saved: time.Now().UTC(), Since: since.UTC(), Rules: map[string]ruleState{}}
	for _, r := range rules {
		m, d, last := r.Stats()
		rs := ruleState{Matches: m, Decisive: d, Necessary: r.Necessary()}
		for num, n := range r.Covered() {
			if n > 0 {
				if rs.Covered == nil {
					rs.Covered = map[int]uint64{}
				}
				rs.Covered[num] = n
			}
		}
		if f := r.FirstHit(); !f.IsZero() {
			rs.FirstHit = f.UnixNano()
		}
		if !last.IsZero() {
			rs.LastHit = last.UnixNano()
		}
		for _, p := range r.Parts {
			rs.Parts = append(rs.Parts, partState{Word: p.Word, Matches: p.Matches()})
		}
		s.Rules[r.ID] = rs
	}
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
