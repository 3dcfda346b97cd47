package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/pulselog/pulse/internal/units"
)

// sizeFlag is a byte count given in human units ("16MiB", "1GiB", "4096"),
// parsed by internal/units like the UI's forms.
type sizeFlag struct{ n *int64 }

func (f sizeFlag) String() string {
	if f.n == nil || *f.n == 0 {
		return "0"
	}
	return units.FormatBytes(*f.n)
}

func (f sizeFlag) Set(s string) error {
	n, err := units.ParseBytes(s)
	if err != nil {
		return err
	}
	*f.n = n
	return nil
}

func (sizeFlag) Type() string { return "size" }

// msDurationFlag is a duration in human units ("7d", "1h30m") held as
// milliseconds, as the websocket API carries it.
type msDurationFlag struct{ ms *int64 }

func (f msDurationFlag) String() string {
	if f.ms == nil || *f.ms == 0 {
		return "0"
	}
	return units.FormatDuration(time.Duration(*f.ms) * time.Millisecond)
}

func (f msDurationFlag) Set(s string) error {
	if s == "0" {
		*f.ms = 0
		return nil
	}
	d, err := units.ParseDuration(s)
	if err != nil {
		return err
	}
	if d%time.Millisecond != 0 {
		return fmt.Errorf("duration %q: finer than a millisecond", s)
	}
	*f.ms = d.Milliseconds()
	return nil
}

func (msDurationFlag) Type() string { return "duration" }

// rawMsFlag is a number of milliseconds (the older --retention-ms, and
// --tombstone-retention-ms beside it); human names the flag that takes
// the same duration in human units.
type rawMsFlag struct {
	ms    *int64
	human string
}

func (f rawMsFlag) String() string {
	if f.ms == nil {
		return "0"
	}
	return strconv.FormatInt(*f.ms, 10)
}

func (f rawMsFlag) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a number of milliseconds (%s takes 7d, 1h30m)", s, f.human)
	}
	*f.ms = n
	return nil
}

func (rawMsFlag) Type() string { return "ms" }
