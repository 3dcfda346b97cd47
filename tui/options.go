package tui

import (
	"time"

	"github.com/pulselog/pulse/themes"
)

// Options configure the UI. Zero fields take the defaults documented here.
type Options struct {
	// Source is the engine the UI shows. Required.
	Source Source

	// DataDirName is how the header names the data directory; default
	// Source.Dir(), or Name() for a source without one (a cluster). Tests pass a fixed name so output does not depend on
	// temporary paths.
	DataDirName string
	// Listen is the websocket address shown in the header; "" shows "off".
	Listen string
	// KafkaListen is the Kafka listener's address shown in the header;
	// "" leaves it out.
	KafkaListen string
	// KafkaOff, when KafkaListen is "", says why there is no Kafka
	// listener ("127.0.0.1:9092 in use"): the header shows "kafka off
	// (KafkaOff)".
	KafkaOff string

	// Theme names the theme to start with (themes.Names); default "auto".
	Theme string
	// NoColor drops colours (callers pass themes.NoColor()).
	NoColor bool

	// Now is the clock used for rates and relative times; default time.Now.
	Now func() time.Time
	// FormatTime renders a record or segment timestamp (Unix ms); default
	// local time with its zone, as 2006-01-02 15:04:05.000 MST.
	FormatTime func(ms int64) string

	// FormatDuration renders how long something took (a maintenance pass,
	// a recovery); default "750ms", "2m30s".
	FormatDuration func(time.Duration) string

	// Refresh is how often the topics, partitions and segments screens
	// reload; default 1s. Negative disables the timer (ctrl+r still
	// refreshes), which tests use for stable output.
	Refresh time.Duration

	// TailRecords caps the records the tail screen keeps in memory;
	// default 5000. TailBytes caps their keys, values and headers; default
	// 32 MiB. Older records are dropped and paged back in from the engine
	// when scrolled to.
	TailRecords int
	TailBytes   int
	// TailBatch is the most records one read of the tail screen takes (one
	// render); default 2000.
	TailBatch int

	// Clipboard receives text copied from a record (OSC 52); default writes
	// the OSC 52 sequence to the terminal.
	Clipboard func(text string) error

	// StartTopic, when set, opens the UI on that topic's partitions.
	StartTopic string
}

func (o Options) withDefaults() Options {
	if o.DataDirName == "" && o.Source != nil {
		o.DataDirName = dataDir(o.Source)
		if n, ok := o.Source.(Namer); ok && o.DataDirName == "" {
			o.DataDirName = n.Name()
		}
	}
	if o.Theme == "" {
		o.Theme = themes.Auto
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.FormatTime == nil {
		o.FormatTime = func(ms int64) string {
			return time.UnixMilli(ms).Format("2006-01-02 15:04:05.000 MST")
		}
	}
	if o.FormatDuration == nil {
		o.FormatDuration = humanDuration
	}
	if o.Refresh == 0 {
		o.Refresh = time.Second
	}
	if o.TailRecords <= 0 {
		o.TailRecords = 5000
	}
	if o.TailBytes <= 0 {
		o.TailBytes = 32 << 20
	}
	if o.TailBatch <= 0 {
		o.TailBatch = 2000
	}
	if o.Clipboard == nil {
		o.Clipboard = osc52Copy
	}
	return o
}
