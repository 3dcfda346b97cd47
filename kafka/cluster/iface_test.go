package cluster

import (
	"github.com/pulselog/pulse/tui"
	"github.com/pulselog/pulse/wsapi"
)

// The cluster is a second implementation of the UI's and the websocket
// server's source interfaces, with the capabilities a cluster has.
var (
	_ tui.Source         = (*Source)(nil)
	_ tui.ConsumerLister = (*Source)(nil)
	_ tui.GroupLister    = (*Source)(nil)
	_ tui.Namer          = (*Source)(nil)
	_ wsapi.Backend      = (*Source)(nil)
)
var _ tui.TopicPlacer = (*Source)(nil)
