package apachetest

import (
	"errors"
	"fmt"
	"testing"
)

// fatalStop is the panic by which fatalTB stops the function TryFatal
// runs.
type fatalStop struct{}

// fatalTB is a testing.TB whose Fatal does not fail the test: it stops
// the function TryFatal runs and hands the error back.
type fatalTB struct {
	testing.TB
	err error
}

func (f *fatalTB) Fatal(args ...any) { f.err = errors.New(fmt.Sprint(args...)); panic(fatalStop{}) }
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.err = fmt.Errorf(format, args...)
	panic(fatalStop{})
}
func (f *fatalTB) FailNow() { f.err = errors.New("FailNow"); panic(fatalStop{}) }

// TryFatal runs fn and returns the error it would have failed t with
// (nil if none): Start and Server.Reload report Apache's refusal to start
// with Fatal, which a caller comparing refusals wants as a value.
func TryFatal(t testing.TB, fn func(testing.TB)) (err error) {
	f := &fatalTB{TB: t}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(fatalStop); !ok {
				panic(r)
			}
			err = f.err
		}
	}()
	fn(f)
	return nil
}
