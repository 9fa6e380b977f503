package sample

import "testing"

// TestLeftOut fails: mutants.txt runs the mutants without this file, and
// the baseline would fail if it did not.
func TestLeftOut(t *testing.T) { t.Fatal("left_test.go was built") }
